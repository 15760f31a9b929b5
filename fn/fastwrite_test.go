package fn

import (
	"bytes"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// assertKRMMatchesFramework runs input through RunKRM (the fast path) and
// through framework.Execute with Processor (the reference path) and asserts
// the same bytes and the same success. It returns the output.
func assertKRMMatchesFramework(t *testing.T, name string, input []byte) []byte {
	t.Helper()
	want, wantErr := execute(input, true)
	var got bytes.Buffer
	gotErr := RunKRM(bytes.NewReader(input), &got, io.Discard)
	if !assert.Equal(t, string(want), got.String(), name) {
		t.Logf("input:\n%s", input)
	}
	assert.Equal(t, wantErr == nil, gotErr == nil, "%s: %v / %v", name, wantErr, gotErr)
	return got.Bytes()
}

// TestFastKRMGolden: on every golden input, and on every golden output fed
// back (the kpt case), the fast KRM path writes what framework.Execute writes.
func TestFastKRMGolden(t *testing.T) {
	for _, dir := range goldenCases(t) {
		for _, file := range []string{"input.yaml", "expected.yaml"} {
			data, err := os.ReadFile(filepath.Join(dir, file))
			require.NoError(t, err)
			out := assertKRMMatchesFramework(t, filepath.Join(filepath.Base(dir), file), data)
			assertKRMMatchesFramework(t, filepath.Join(filepath.Base(dir), file, "rerun"), out)
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
// config forms, errors) and their outputs fed back give the same bytes on
// the fast path as through framework.Execute.
func TestFastKRMRandom(t *testing.T) {
	rnd := rand.New(rand.NewSource(11))
	generated := 0
	for i := 0; i < 200 && !t.Failed(); i++ {
		input := randomResourceList(t, rnd)
		out := assertKRMMatchesFramework(t, fmt.Sprintf("random %d", i), input)
		assertKRMMatchesFramework(t, fmt.Sprintf("random %d rerun", i), out)
		if bytes.Contains(out, []byte("fn.fedlearner.k8s.io/flapp:")) {
			generated++
		}
	}
	t.Logf("%d of 200 random ResourceLists generated Services", generated)
	assert.Greater(t, generated, 70)
}

// referenceRender is what render mode wrote before the fast writer.
func referenceRender(t *testing.T, out *Output) string {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, kio.ByteWriter{Writer: &buf, ClearAnnotations: readerAnnotations}.Write(out.Nodes()))
	return buf.String()
}

// assertRenderMatches renders paths with the fast writer and with
// kio.ByteWriter and asserts the same bytes.
func assertRenderMatches(t *testing.T, name string, paths ...string) {
	t.Helper()
	items, err := readManifests(paths, "", nil)
	require.NoError(t, err)
	out, results := Generate(items, DefaultConfig())
	if results.ExitCode() != 0 {
		return
	}
	want := referenceRender(t, out)
	var got bytes.Buffer
	require.NoError(t, writeRender(&got, out))
	assert.Equal(t, want, got.String(), name)
	if len(out.Services) > 0 {
		renderedServices++
	}
}

// renderedServices counts the renders with generated Services.
var renderedServices int

// TestFastRenderGolden: render mode on each golden input's items (as files)
// and on the bundled example writes what kio.ByteWriter writes.
func TestFastRenderGolden(t *testing.T) {
	assertRenderMatches(t, "examples/basic", "../examples/basic")
	for _, dir := range goldenCases(t) {
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
// multi-document files, JSON) render the same bytes.
func TestFastRenderRandom(t *testing.T) {
	rnd := rand.New(rand.NewSource(13))
	for i := 0; i < 200 && !t.Failed(); i++ {
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
		assertRenderMatches(t, fmt.Sprintf("random %d", i), dir)
	}
	t.Logf("%d renders with generated Services", renderedServices)
}

// TestKRMAnnotations: for every input annotation format and for annotation
// sets a generated Service never has (twins present, empty values), the
// written Service equals what kio.ReconcileInternalAnnotations makes of
// ServiceNode(svc), encoded by kyaml.
func TestKRMAnnotations(t *testing.T) {
	formats := map[string]map[string]map[string]string{
		"none":     {"0": {kioutil.InternalAnnotationsMigrationResourceIDAnnotation: "0"}},
		"internal": {"0": {kioutil.PathAnnotation: "a.yaml", kioutil.IndexAnnotation: "0"}},
		"legacy":   {"0": {kioutil.LegacyPathAnnotation: "a.yaml"}},
		"both":     {"0": {kioutil.PathAnnotation: "a.yaml", kioutil.LegacyPathAnnotation: "a.yaml"}},
		"empty":    {},
	}
	annotationSets := []map[string]string{
		{"fn.fedlearner.k8s.io/flapp": "normal"},
		{"fn.fedlearner.k8s.io/flapp": "normal", kioutil.PathAnnotation: "apps/normal.services.yaml", kioutil.IndexAnnotation: "3"},
		{"fn.fedlearner.k8s.io/flapp": "normal", kioutil.PathAnnotation: "1/a b.yaml", kioutil.IndexAnnotation: "0"},
		{"fn.fedlearner.k8s.io/flapp": "normal", kioutil.PathAnnotation: "p.yaml", kioutil.LegacyPathAnnotation: "p.yaml"},
		{"fn.fedlearner.k8s.io/flapp": "normal", kioutil.LegacyIndexAnnotation: "2"},
		{"fn.fedlearner.k8s.io/flapp": "normal", kioutil.PathAnnotation: "", kioutil.IdAnnotation: "x"},
		{kioutil.PathAnnotation: "p.yaml"},
	}
	for fname, nodeAnnos := range formats {
		f := annotationsFormat(nodeAnnos)
		for i, m := range annotationSets {
			svc := randomService(rand.New(rand.NewSource(int64(i))))
			svc.Name, svc.Namespace = "normal-leader-master-0", "default"
			svc.Annotations = m
			node := ServiceNode(svc)
			require.NoError(t, kio.ReconcileInternalAnnotations([]*yaml.RNode{node}, nodeAnnos))
			var want bytes.Buffer
			require.NoError(t, kio.ByteWriter{Writer: &want, KeepReaderAnnotations: true,
				WrappingKind: kio.ResourceListKind, WrappingAPIVersion: kio.ResourceListAPIVersion}.Write([]*yaml.RNode{node}))

			var got []byte
			var err error
			if annos, ok := krmAnnotations(m, f); ok {
				got, err = encodeServiceItem(nil, svc, annos)
			} else {
				got, err = exactServiceItem(nil, ServiceNode(svc), nodeAnnos)
			}
			require.NoError(t, err)
			assert.Equal(t, strings.TrimPrefix(want.String(), "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"),
				string(got), "format %s, annotations %v", fname, m)
		}
	}
}

// FuzzFastKRM: on any input, the fast KRM path writes what framework.Execute
// writes and fails when it fails. Seeds: the golden inputs.
//
//	go test ./fn -run '^$' -fuzz FuzzFastKRM
func FuzzFastKRM(f *testing.F) {
	dirs, _ := filepath.Glob(filepath.Join(goldenDir, "*", "input.yaml"))
	for _, file := range dirs {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		want, wantErr := referenceKRM(input)
		var got bytes.Buffer
		gotErr := RunKRM(bytes.NewReader(input), &got, io.Discard)
		if wantErr != nil && len(want) == 0 {
			// Unreadable input: RunKRM answers with an error ResourceList.
			if gotErr == nil {
				t.Fatalf("framework.Execute failed (%v), RunKRM succeeded", wantErr)
			}
			return
		}
		if got.String() != string(want) {
			t.Fatalf("output differs\nwant:\n%s\ngot:\n%s", want, got.String())
		}
		if (wantErr == nil) != (gotErr == nil) {
			t.Fatalf("errors differ: %v / %v", wantErr, gotErr)
		}
	})
}

// referenceKRM is RunKRM as it was before the fast path: its processor
// through framework.Execute, Processor building every Service node.
func referenceKRM(input []byte) ([]byte, error) {
	var buf bytes.Buffer
	rw := &kio.ByteReadWriter{Reader: bytes.NewReader(input), Writer: &buf, KeepReaderAnnotations: true}
	p := framework.ResourceListProcessorFunc(func(rl *framework.ResourceList) error {
		if msg := checkWrapper(rw); msg != "" {
			rw.WrappingKind, rw.WrappingAPIVersion = kio.ResourceListKind, kio.ResourceListAPIVersion
			rl.Results = framework.Results{{Severity: framework.Error, Message: msg}}
			return rl.Results
		}
		return Processor{}.Process(rl)
	})
	err := framework.Execute(p, rw)
	return buf.Bytes(), err
}
