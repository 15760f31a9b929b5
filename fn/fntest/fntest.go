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

// Execute runs fn.Processor like kyaml's command in KRM mode
// (keepReaderAnnotations true) or like frameworktestutil (false).
func Execute(input []byte, keepReaderAnnotations bool) ([]byte, error) {
	var out bytes.Buffer
	err := framework.Execute(fn.Processor{}, &kio.ByteReadWriter{
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
