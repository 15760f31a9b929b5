package krmio_test

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedlearner/flapp-services/fn"
	"github.com/fedlearner/flapp-services/fn/fntest"
	"github.com/fedlearner/flapp-services/internal/cli"
	"github.com/fedlearner/flapp-services/internal/krmio"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/filters"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The differential tests: every output of the binary's two modes, which
// this package writes (the fast path), is byte for byte what kyaml's own
// code writes for the same input. They drive this package through its
// callers, cli.RunKRM and cli.RunRender, and compare with the references
// below, which never reach this package: KRM mode with framework.Execute of
// the function written as a kyaml function (fntest.Processor: every
// generated Service a node), render mode with kio.LocalPackageReader, fn and
// kio.ByteWriter.

const goldenDir = "../../testdata"

// run is the outcome of one run of either mode: what it wrote on stdout,
// and whether it failed.
type run struct {
	out    string
	failed bool
}

// runKRM is KRM mode as the binary runs it, with its stderr and error.
func runKRM(input []byte) (run, string, error) {
	var out, stderr bytes.Buffer
	err := cli.RunKRM(bytes.NewReader(input), &out, &stderr)
	return run{out.String(), err != nil}, stderr.String(), err
}

// referenceKRM is what kyaml's command writes for the function written as a
// kyaml function: framework.Execute with kyaml's KRM-mode settings, of
// fntest.Processor reading each item alone, as KRM mode reads it
// (krmio.Inline: an alias to another item's anchor is a copy of its
// value), and keeping it as it came.
func referenceKRM(input []byte) run {
	var out bytes.Buffer
	p := fntest.Processor{ReadAs: func(item *yaml.RNode) *yaml.RNode {
		if copied, _ := krmio.Inline(item.YNode(), cli.DefaultMaxObjectNodes); copied != nil && copied != item.YNode() {
			return yaml.NewRNode(copied)
		}
		return item
	}}
	err := framework.Execute(p, &kio.ByteReadWriter{Reader: bytes.NewReader(input), Writer: &out, KeepReaderAnnotations: true})
	return run{out.String(), err != nil}
}

func runRender(paths ...string) (run, string) {
	var out, stderr bytes.Buffer
	err := cli.RunRender(cli.RenderOptions{Paths: paths}, nil, &out, &stderr)
	return run{out.String(), err != nil}, stderr.String()
}

// referenceRender is a render of the plain manifests in dir (no List, no
// kustomization) by kyaml's own code: kio.LocalPackageReader reads every
// .yaml, .yml and .json file in lexical order as kio.ByteReader (the reader
// render mode mirrors, with sequence indentation kept), local configuration
// is dropped, fn runs over the items held in memory, and kio.ByteWriter
// writes the kept items and a node per generated Service, clearing the
// reader's annotations. A failed run, or one with nothing to render, writes
// nothing.
func referenceRender(t *testing.T, dir string) run {
	t.Helper()
	items, err := (&kio.LocalPackageReader{PackagePath: dir, MatchFilesGlob: kio.MatchAll, PreserveSeqIndent: true}).Read()
	require.NoError(t, err)
	items, err = (&filters.IsLocalConfig{}).Filter(items)
	require.NoError(t, err)
	if len(items) == 0 {
		return run{failed: true} // an empty render would tell a GitOps engine to delete everything
	}
	kept, out, results := fntest.Generate(items, fn.DefaultConfig())
	if results.ExitCode() != 0 {
		return run{failed: true}
	}
	var buf bytes.Buffer
	w := kio.ByteWriter{Writer: &buf, ClearAnnotations: []string{
		kioutil.PathAnnotation, kioutil.IndexAnnotation, kioutil.LegacyPathAnnotation, kioutil.LegacyIndexAnnotation}}
	require.NoError(t, w.Write(fntest.WithServiceNodes(kept, out.Services())))
	return run{out: buf.String()}
}

// assertKRMMatches runs input through KRM mode and through kyaml's
// framework.Execute and asserts the same output and outcome. It returns the
// output.
func assertKRMMatches(t *testing.T, name string, input []byte) []byte {
	t.Helper()
	want := referenceKRM(input)
	got, stderr, _ := runKRM(input)
	if !assert.Equal(t, want, got, name) {
		t.Logf("input:\n%s\nstderr:\n%s", input, stderr)
	}
	if !got.failed {
		readServices += fntest.ServicesReadAlike(t, []byte(got.out), true)
	}
	return []byte(got.out)
}

// readServices counts the generated Services that assertKRMMatches and
// assertRenderMatches read with kubectl's reader (fntest.ServicesReadAlike):
// every Service of every successful output, golden and random, must read
// the same in YAML 1.1 as in YAML 1.2.
var readServices int

// assertServicesRead, deferred with the count at a test's start, requires
// the test to have read some generated Services with kubectl's reader.
func assertServicesRead(t *testing.T, before int) {
	t.Helper()
	t.Logf("%d generated Services read alike by kubectl's reader and kyaml's", readServices-before)
	assert.Greater(t, readServices-before, 50)
}

// TestFastKRMGolden: on every golden input, and on every golden output fed
// back (the kpt case), KRM mode writes what framework.Execute writes.
func TestFastKRMGolden(t *testing.T) {
	defer assertServicesRead(t, readServices)
	for _, dir := range fntest.GoldenCases(t, goldenDir) {
		for _, file := range []string{"input.yaml", "expected.yaml"} {
			data, err := os.ReadFile(filepath.Join(dir, file))
			require.NoError(t, err)
			out := assertKRMMatches(t, filepath.Join(filepath.Base(dir), file), data)
			assertKRMMatches(t, filepath.Join(filepath.Base(dir), file, "rerun"), out)
		}
	}
}

// Pools for random inputs: ordinary values and YAML-hostile ones.
var (
	namespacePool = []string{"", "default", "team-1", "true", "1", "null", "yes", "0x1f", "0017", "a b", "é", "-x", "x: y"}
	uidPool       = []string{"", "0c8a5f2e-7b1d-4c3a-9e8f-1a2b3c4d5e6f", "ABCDEF01-2345-6789-ABCD-EF0123456789", "uid-1", "1", "true", "0x1f", "a b", "2001-12-14"}
	pathPool      = []string{"apps/x.yaml", "x.yaml", "1/x.yaml", "dir with space/x.yaml", "é/x.yaml", "./a/x.yaml", "true/x.yaml"}
	portNamePool  = []string{"flapp-port", "tf-port", "grpc", "p1", "x-y", "metrics"}
	protocolPool  = []string{"", "TCP", "UDP", "SCTP"}
	typePool      = []string{"Master", "PS", "Worker", "Worker2"}
	rolePool      = []string{"Leader", "Follower", "Follower2"}
)

func pick(rnd *rand.Rand, pool []string) string { return pool[rnd.Intn(len(pool))] }

// randomFLApp is an FLApp as a yaml node, valid or (rarely) not.
func randomFLApp(rnd *rand.Rand, i int) *yaml.RNode {
	meta := map[string]any{"name": fmt.Sprintf("app%d-%d", i, rnd.Intn(100))}
	if ns := pick(rnd, namespacePool); ns != "" {
		meta["namespace"] = ns
	}
	if uid := pick(rnd, uidPool); uid != "" {
		meta["uid"] = uid
	}
	specs := map[string]any{}
	for _, typ := range typePool {
		if rnd.Intn(2) == 0 {
			continue
		}
		var ports []any
		for j := rnd.Intn(3); j > 0; j-- {
			port := map[string]any{"name": pick(rnd, portNamePool), "containerPort": 1 + rnd.Intn(65535)}
			if p := pick(rnd, protocolPool); p != "" {
				port["protocol"] = p
			}
			ports = append(ports, port)
		}
		specs[typ] = map[string]any{
			"replicas": rnd.Intn(4),
			"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "tensorflow", "image": "fedlearner/fedlearner:v2.3", "ports": ports},
			}}},
		}
	}
	app := map[string]any{
		"apiVersion": "fedlearner.k8s.io/v1alpha1", "kind": "FLApp", "metadata": meta,
		"spec": map[string]any{"role": pick(rnd, rolePool), "flReplicaSpecs": specs},
	}
	b, err := yaml.Marshal(app)
	if err != nil {
		panic(err)
	}
	return yaml.MustParse(string(b))
}

const passThrough = `# A ConfigMap with comments and its own field order.
kind: ConfigMap # kind first
apiVersion: v1
metadata:
  name: settings
data:
  zeta: "1" # trailing comment
  alpha: |+
    kept

# a foot comment
`

// randomResourceList is a ResourceList of random FLApps and pass-through
// items, with path annotations in one of kpt's formats (or none) and
// sometimes a functionConfig.
func randomResourceList(t *testing.T, rnd *rand.Rand) []byte {
	t.Helper()
	format := rnd.Intn(4) // none, internal, legacy, both
	var items []*yaml.RNode
	for i := rnd.Intn(6); i >= 0; i-- {
		var item *yaml.RNode
		if rnd.Intn(4) == 0 {
			item = yaml.MustParse(passThrough)
		} else {
			item = randomFLApp(rnd, i)
		}
		p := pick(rnd, pathPool)
		if format == 1 || format == 3 {
			require.NoError(t, item.PipeE(yaml.SetAnnotation(kioutil.PathAnnotation, p)))
			require.NoError(t, item.PipeE(yaml.SetAnnotation(kioutil.IndexAnnotation, fmt.Sprint(i))))
		}
		if format == 2 || format == 3 {
			require.NoError(t, item.PipeE(yaml.SetAnnotation(kioutil.LegacyPathAnnotation, p)))
			require.NoError(t, item.PipeE(yaml.SetAnnotation(kioutil.LegacyIndexAnnotation, fmt.Sprint(i))))
		}
		items = append(items, item)
	}
	var buf bytes.Buffer
	w := kio.ByteWriter{Writer: &buf, KeepReaderAnnotations: true,
		WrappingKind: kio.ResourceListKind, WrappingAPIVersion: []string{"config.kubernetes.io/v1", "config.kubernetes.io/v1beta1"}[rnd.Intn(2)]}
	switch rnd.Intn(4) {
	case 1:
		w.FunctionConfig = yaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  ownerReferences: " + pick(rnd, []string{"IfKnown", "Never", "Required"}) + "\n")
	case 2:
		w.FunctionConfig = yaml.MustParse("{}")
	}
	require.NoError(t, w.Write(items))
	return buf.Bytes()
}

// TestFastKRMRandom: random ResourceLists (namespaces, UIDs and paths that
// need quoting, every annotation format, pass-through items with comments,
// config forms, errors) and their outputs fed back give the same bytes in
// KRM mode as through framework.Execute.
func TestFastKRMRandom(t *testing.T) {
	defer assertServicesRead(t, readServices)
	rnd := rand.New(rand.NewSource(11))
	generated, n := 0, krmio.RandomCases(200)
	for i := 0; i < n && !t.Failed(); i++ {
		input := randomResourceList(t, rnd)
		out := assertKRMMatches(t, fmt.Sprintf("random %d", i), input)
		assertKRMMatches(t, fmt.Sprintf("random %d rerun", i), out)
		if bytes.Contains(out, []byte("fn.fedlearner.k8s.io/flapp:")) {
			generated++
		}
	}
	t.Logf("%d of %d random ResourceLists generated Services", generated, n)
	assert.Greater(t, generated, n*7/20, "over a third render")
}

// assertRenderMatches renders dir with render mode and with kyaml's own code
// (referenceRender) and asserts the same output and outcome. It reports
// whether the render generated Services.
func assertRenderMatches(t *testing.T, name string, dir string) bool {
	t.Helper()
	want := referenceRender(t, dir)
	got, stderr := runRender(dir)
	if !assert.Equal(t, want, got, name) {
		t.Logf("stderr:\n%s", stderr)
	}
	if !got.failed {
		readServices += fntest.ServicesReadAlike(t, []byte(got.out), false)
	}
	return strings.Contains(got.out, "fn.fedlearner.k8s.io/flapp:")
}

// TestFastRenderGolden: render mode on each golden input's items (as a
// file) and on the bundled example writes what kyaml's reader, fn and
// kio.ByteWriter write.
func TestFastRenderGolden(t *testing.T) {
	defer assertServicesRead(t, readServices)
	assert.True(t, assertRenderMatches(t, "examples/basic", "../../examples/basic"))
	for _, dir := range fntest.GoldenCases(t, goldenDir) {
		data, err := os.ReadFile(filepath.Join(dir, "input.yaml"))
		require.NoError(t, err)
		rw := &kio.ByteReadWriter{Reader: bytes.NewReader(data), OmitReaderAnnotations: true}
		items, err := rw.Read()
		if err != nil {
			continue
		}
		var buf bytes.Buffer
		require.NoError(t, kio.ByteWriter{Writer: &buf}.Write(items))
		tmp := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(tmp, "all.yaml"), buf.Bytes(), 0o644))
		assertRenderMatches(t, dir, tmp)
	}
}

// TestFastRenderRandom: random file trees (comments, wide and compact list
// indentation, block scalars that keep trailing newlines, foot comments,
// multi-document files, JSON) render the same bytes as kyaml's reader, fn
// and kio.ByteWriter.
func TestFastRenderRandom(t *testing.T) {
	defer assertServicesRead(t, readServices)
	rnd := rand.New(rand.NewSource(13))
	withServices, n := 0, krmio.RandomCases(200)
	for i := 0; i < n && !t.Failed(); i++ {
		dir := t.TempDir()
		for f := rnd.Intn(4); f >= 0; f-- {
			var docs []string
			for d := rnd.Intn(3); d >= 0; d-- {
				switch rnd.Intn(4) {
				case 0:
					docs = append(docs, passThrough)
				case 1:
					s, err := randomFLApp(rnd, f*10+d).String()
					require.NoError(t, err)
					docs = append(docs, "# FLApp "+fmt.Sprint(d)+"\n"+strings.ReplaceAll(s, "\n- ", "\n  - "))
				default:
					s, err := randomFLApp(rnd, f*10+d).String()
					require.NoError(t, err)
					docs = append(docs, s)
				}
			}
			name := fmt.Sprintf("f%d.yaml", f)
			if rnd.Intn(5) == 0 && len(docs) == 1 && !strings.Contains(docs[0], "#") {
				name = fmt.Sprintf("f%d.json", f)
			}
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(docs, "---\n")), 0o644))
		}
		if assertRenderMatches(t, fmt.Sprintf("random %d", i), dir) {
			withServices++
		}
	}
	t.Logf("%d of %d renders generated Services", withServices, n)
	assert.Greater(t, withServices, n*7/20, "over a third render")
}

// TestFastEncoderGoldenServices: every Service any golden case generates,
// and those of the bundled example, come out of the fast encoder exactly as
// kyaml encodes them, and all of them take the fast path.
func TestFastEncoderGoldenServices(t *testing.T) {
	n := 0
	for _, dir := range fntest.GoldenCases(t, goldenDir) {
		input, err := os.ReadFile(filepath.Join(dir, "input.yaml"))
		require.NoError(t, err)
		rw := &kio.ByteReadWriter{Reader: bytes.NewReader(input)}
		items, err := rw.Read()
		if err != nil {
			continue
		}
		cfg, results := fn.ParseConfig(rw.FunctionConfig, fn.Origin{})
		if results.ExitCode() != 0 {
			continue
		}
		_, out, _ := fntest.Generate(items, cfg)
		if out == nil {
			continue
		}
		for svc := range out.Services() {
			assert.True(t, krmio.CheckService(t, svc), "%s: %s takes the fast path", dir, svc.Name)
			n++
		}
	}
	items, err := (&kio.LocalPackageReader{PackagePath: "../../examples/basic"}).Read()
	require.NoError(t, err)
	_, out, results := fntest.Generate(items, fn.DefaultConfig())
	require.Zero(t, results.ExitCode())
	require.NotZero(t, out.ServiceCount())
	for svc := range out.Services() {
		// as render mode writes them: without the reader annotations.
		svc.Annotations = krmio.StreamAnnotations(svc)
		assert.True(t, krmio.CheckService(t, svc))
		n++
	}
	t.Logf("%d Services checked", n)
}

// FuzzFastKRM: on any input KRM mode accepts, it writes what
// framework.Execute writes for the function written as a kyaml function,
// and a success's generated Services read alike in YAML 1.1 and 1.2. A
// failure is a reported one (cli.ErrFailed, no recovered panic), never one
// of writing: KRM mode refuses some inputs kyaml takes (not a ResourceList,
// an unknown apiVersion, items whose aliases expand past a ceiling), and
// answers a failure with kyaml's writer, not the fast path. Seeds: the
// golden inputs and outputs.
//
//	go test ./internal/krmio -run '^$' -fuzz FuzzFastKRM
func FuzzFastKRM(f *testing.F) {
	for _, dir := range fntest.GoldenCases(f, goldenDir) {
		for _, file := range []string{"input.yaml", "expected.yaml"} {
			data, err := os.ReadFile(filepath.Join(dir, file))
			require.NoError(f, err)
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		got, stderr, err := runKRM(input)
		if err != nil {
			require.ErrorIs(t, err, cli.ErrFailed, "a failure in writing the output")
			require.NotContains(t, stderr, "internal error", "a panic was recovered")
			return
		}
		if want := referenceKRM(input); got != want {
			t.Fatalf("KRM mode differs from framework.Execute\nwant: %+v\ngot:  %+v", want, got)
		}
		fntest.ServicesReadAlike(t, []byte(got.out), true)
	})
}
