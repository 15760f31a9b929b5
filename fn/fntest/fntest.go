package fntest

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/fedlearner/flapp-services/fn"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// GoldenCases lists the case folders under dir (testdata/<case>/input.yaml).
func GoldenCases(t testing.TB, dir string) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(dir, "*", "input.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	for i := range dirs {
		dirs[i] = filepath.Dir(dirs[i])
	}
	return dirs
}

// Processor is the KRM function as a kyaml function is written, the
// reference the binary's KRM mode is compared with: a
// framework.ResourceListProcessor over items held in memory, each generated
// Service a node (WithServiceNodes), handed to framework.Execute and
// kio.ByteWriter to reconcile and write. On any error it leaves rl.Items
// as they came and returns the results.
type Processor struct {
	// ReadAs, when set, is the node fn reads for an item; the output keeps
	// the item as it came. The differential tests read each item alone as
	// KRM mode does (krmio.Inline, which this package may not import).
	ReadAs func(item *yaml.RNode) *yaml.RNode
}

// Process replaces rl.Items with the kept items followed by the generated
// Services.
func (p Processor) Process(rl *framework.ResourceList) error {
	cfg, results := fn.ParseConfig(rl.FunctionConfig, fn.Origin{})
	if results.ExitCode() != 0 {
		results.Sort()
		rl.Results = results.Framework()
		return rl.Results
	}
	kept, out, results := generate(rl.Items, cfg, p.ReadAs)
	rl.Results = results.Framework()
	if results.ExitCode() != 0 {
		return rl.Results
	}
	rl.Items = WithServiceNodes(kept, out.Services())
	return nil
}

// Generate is one fn.Run over items held in memory: the items to keep, in
// input order, the Output, and the results. On any error the Output is nil.
func Generate(items []*yaml.RNode, cfg fn.Config) ([]*yaml.RNode, *fn.Output, fn.Results) {
	return generate(items, cfg, nil)
}

func generate(items []*yaml.RNode, cfg fn.Config, readAs func(*yaml.RNode) *yaml.RNode) ([]*yaml.RNode, *fn.Output, fn.Results) {
	run := fn.NewRun()
	kept := make([]*yaml.RNode, 0, len(items))
	for i, item := range items {
		read := item
		if readAs != nil {
			read = readAs(item)
		}
		if run.Add(fn.ItemObject(i, read)) {
			kept = append(kept, item)
		}
	}
	out, results := run.Finish(cfg)
	return kept, out, results
}

// Execute runs Processor through framework.Execute like kyaml's command in
// KRM mode (keepReaderAnnotations true) or like frameworktestutil (false).
func Execute(input []byte, keepReaderAnnotations bool) ([]byte, error) {
	var out bytes.Buffer
	err := framework.Execute(Processor{}, &kio.ByteReadWriter{
		Reader: bytes.NewReader(input), Writer: &out, KeepReaderAnnotations: keepReaderAnnotations,
	})
	return out.Bytes(), err
}

// WithoutResults is a ResourceList without its results.
func WithoutResults(t testing.TB, rl []byte) string {
	t.Helper()
	node, err := yaml.Parse(string(rl))
	require.NoError(t, err)
	require.NoError(t, node.PipeE(yaml.Clear("results")))
	s, err := node.String()
	require.NoError(t, err)
	return s
}
