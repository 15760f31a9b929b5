package kustomize

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedlearner/flapp-services/internal/repofs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func TestIsOurImage(t *testing.T) {
	for image, want := range map[string]bool{
		"ghcr.io/fedlearner/flapp-services:v0.1.0":         true,
		"ghcr.io/fedlearner/flapp-services":                true,
		"flapp-services:dev":                               true,
		"flapp-services":                                   true,
		"127.0.0.1:5000/flapp-services@sha256:0123abcd":    true,
		"localhost:5000/team/flapp-services:v1@sha256:01":  true,
		"registry.example.com:5000/flapp-services":         true,
		"ghcr.io/fedlearner/flapp-services-fork:v1":        false,
		"ghcr.io/flapp-services/set-labels:v1":             false,
		"example.com/set-namespace:v0.4":                   false,
		"registry.example.com:5000/other:flapp-services":   false,
		"gcr.io/kpt-fn/apply-setters:v0.2@sha256:0123abcd": false,
	} {
		assert.Equal(t, want, isOurImage(image), image)
	}
	for path, want := range map[string]bool{
		"../../bin/flapp-services": true, "flapp-services": true, `C:\bin\flapp-services.exe`: true,
		"./run.sh": false, "flapp-services.sh": false,
	} {
		assert.Equal(t, want, isOurExec(path), path)
	}
}

// What kustomize reads as remote (its internal/git.NewRepoSpecFromURL and
// repofs.IsRemoteFile, v0.21.2), and what it reads as local.
func TestIsRemote(t *testing.T) {
	for _, p := range []string{
		"https://github.com/kubernetes-sigs/kustomize//examples/multibases?ref=v3.3.1",
		"http://example.com/x.yaml", "HTTPS://example.com/x.yaml",
		"ssh://git@github.com/x/y.git", "file:///srv/repo.git//base",
		"git@github.com:x/y.git//base", "me@example.com:x/y",
		"github.com/kubernetes-sigs/kustomize/examples/multibases?ref=v3.3.1", "github.com:x/y",
		"git::https://github.com/x/y//base", " https://example.com/x.yaml",
		"x@y", // not a URL kustomize can parse; refused all the same, on the side of remote
	} {
		assert.True(t, isRemote(p), p)
	}
	for _, p := range []string{"../base", "base", "./x.yaml", "github.company/x", "my-github.com/x", "/abs/path"} {
		assert.False(t, isRemote(p), p)
	}
}

func object(t *testing.T, s string) *yaml.RNode {
	t.Helper()
	n, err := yaml.Parse(s)
	require.NoError(t, err)
	return n
}

func TestClassify(t *testing.T) {
	fnAnno := func(spec string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  annotations:\n    config.kubernetes.io/function: |\n" + spec
	}
	for name, c := range map[string]struct {
		object string
		want   pluginKind
		what   string
	}{
		"our image":          {fnAnno("      container:\n        image: ghcr.io/fedlearner/flapp-services:v1\n"), flappServices, ""},
		"our exec":           {fnAnno("      exec:\n        path: ../bin/flapp-services\n"), flappServices, ""},
		"legacy annotation":  {"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  annotations:\n    config.kubernetes.io/container: flapp-services:dev\n", flappServices, ""},
		"typed config":       {"apiVersion: fn.fedlearner.k8s.io/v1alpha1\nkind: FLAppServices\nmetadata: {name: x}\n", flappServices, ""},
		"another image":      {fnAnno("      container:\n        image: example.com/set-labels:v1\n"), function, "the function image example.com/set-labels:v1"},
		"another exec":       {fnAnno("      exec:\n        path: ./run.sh\n"), function, "the exec function ./run.sh"},
		"starlark":           {fnAnno("      starlark:\n        path: x.star\n"), function, "a function"},
		"builtin":            {"apiVersion: builtin\nkind: PatchTransformer\nmetadata: {name: x}\npatch: '[]'\n", builtin, ""},
		"a plugin":           {"apiVersion: someteam.example.com/v1\nkind: ChartInflator\nmetadata: {name: x}\n", plugin, "someteam.example.com/v1 ChartInflator"},
		"a bad annotation":   {fnAnno("      [\n"), function, "a function whose annotation does not parse"},
		"builtin in a group": {"apiVersion: builtin/v1\nkind: PatchTransformer\nmetadata: {name: x}\n", plugin, "builtin/v1 PatchTransformer"},
	} {
		t.Run(name, func(t *testing.T) {
			kind, what := classify(object(t, c.object))
			assert.Equal(t, c.want, kind)
			assert.True(t, strings.HasPrefix(what, c.what), "%q", what)
		})
	}
}

// tree writes files under a fresh directory that is the current directory
// and the repository, and returns its repofs.Tree.
func tree(t *testing.T, files map[string]string) *repofs.Tree {
	t.Helper()
	dir := t.TempDir()
	for p, content := range files {
		full := filepath.Join(dir, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
	}
	t.Chdir(dir)
	ld, err := repofs.New(repofs.RootOnly, repofs.Limits{})
	require.NoError(t, err)
	root, err := ld.Resolve(".")
	require.NoError(t, err)
	return ld.Tree(root)
}

const ourEntry = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fn\n  annotations:\n    config.kubernetes.io/function: |\n      container:\n        image: flapp-services\ndata: {ownerReferences: Never}\n"

// Scan finds every flapp-services entry of the build, depth first, and
// leaves the kustomizations' other entries to the build.
func TestScan(t *testing.T) {
	tr := tree(t, map[string]string{
		"overlay/kustomization.yaml":      "resources: [../base, ../other]\ntransformers: [fn.yaml, labels.yaml]\n",
		"overlay/fn.yaml":                 ourEntry,
		"overlay/labels.yaml":             "apiVersion: builtin\nkind: LabelTransformer\nmetadata: {name: l}\nlabels: {a: b}\nfieldSpecs: [{path: metadata/labels, create: true}]\n",
		"base/kustomization.yaml":         "resources: [x.yaml]\ntransformers: [fn.yaml]\n",
		"base/fn.yaml":                    strings.Replace(ourEntry, "Never", "IfKnown", 1),
		"other/kustomization.yaml":        "resources: [../base]\n", // base again: scanned once
		"unused/kustomization.yaml":       "resources: [https://example.com/x.yaml]\n",
		"overlay/notes/kustomization.yml": "resources: [https://example.com/y.yaml]\n",
	})
	dir, err := filepath.Abs("overlay")
	require.NoError(t, err)
	b, err := Scan(tr, dir, "overlay/kustomization.yaml", true, Limits{}, true)
	require.NoError(t, err)
	require.Len(t, b.Problems(), 1, "only what the build reads is scanned")
	assert.Equal(t, "error: overlay/kustomization.yaml (resources[0]) → ../base/kustomization.yaml: resources[0]: x.yaml is neither a file nor a directory of the repository: "+
		"kustomize would try it as a remote repository, and flapp-services fetches nothing", b.Problems()[0].String(), "named from the root, through the base")
	require.Len(t, b.Functions, 2)
	assert.Equal(t, "base/kustomization.yaml", b.Functions[0].Kustomization, "depth first: the base before the overlay's own")
	assert.Equal(t, "base/fn.yaml", b.Functions[0].Source)
	assert.Equal(t, "overlay/fn.yaml", b.Functions[1].Source)

	data, err := b.Build(nil)
	require.Error(t, err, "x.yaml does not exist")
	assert.Nil(t, data)
	assert.Equal(t, b.Problems()[0].String(), err.Error(), "nothing is built")
}

// An entry runs at its place among the transformers, on the objects of
// the build there: the builtin listed after it transforms what it adds,
// and what it drops is gone. The files on disk stay as they are.
func TestRunRunsEntriesAtTheirPlace(t *testing.T) {
	tree(t, map[string]string{
		"kustomization.yaml": "resources: [cm.yaml, old.yaml]\ntransformers: [fn.yaml, labels.yaml]\n",
		"fn.yaml":            ourEntry,
		"labels.yaml":        "apiVersion: builtin\nkind: LabelTransformer\nmetadata: {name: l}\nlabels: {team: a}\nfieldSpecs: [{path: metadata/labels, create: true}]\n",
		"cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n",
		"old.yaml":           "apiVersion: v1\nkind: Service\nmetadata: {name: old}\n",
	})
	before, err := os.ReadFile("kustomization.yaml")
	require.NoError(t, err)
	ld, err := repofs.New(repofs.RootOnly, repofs.Limits{})
	require.NoError(t, err)
	root, err := ld.Resolve(".")
	require.NoError(t, err)
	b, err := Scan(ld.Tree(root), root.Path(), "kustomization.yaml", true, Limits{}, true)
	require.NoError(t, err)
	require.Len(t, b.Functions, 1)
	var seen []string
	data, err := b.Build(fakeEntries{run: func(entry *Function, config *yaml.RNode, objects []Object) ([]bool, []byte, error) {
		assert.Same(t, &b.Functions[0], entry)
		assert.Equal(t, "v1", config.GetApiVersion(), "the entry as written")
		assert.Equal(t, "ConfigMap", config.GetKind())
		assert.Equal(t, "true", config.GetAnnotations()["config.kubernetes.io/local-config"], "as kustomize hands a function its config")
		keep := make([]bool, len(objects))
		for i, o := range objects {
			labels := o.Node.GetLabels()
			seen = append(seen, o.Node.GetName()+":"+labels["team"]+":"+o.File)
			keep[i] = o.Node.GetName() != "old"
		}
		return keep, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: added}\n"), nil
	}})
	require.NoError(t, err)
	assert.Equal(t, []string{"cm::", "old::old.yaml"}, seen, "before labels.yaml; a Service's file is known")
	assert.Equal(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels:\n    team: a\n  name: added\n---\n"+
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels:\n    team: a\n  name: cm\n", string(data), "labels.yaml ran after the entry; kustomize's order")
	after, err := os.ReadFile("kustomization.yaml")
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after))

	_, err = b.Build(fakeEntries{run: func(*Function, *yaml.RNode, []Object) ([]bool, []byte, error) {
		return nil, nil, errors.New("the entry's own words")
	}})
	require.EqualError(t, err, "error: kustomization.yaml: the entry's own words", "not kustomize's wrapping: a problem of the build, at its file")
}

// A build without an entry gets the render's own, last among the root's
// transformers: it sees what they leave, and leaves no record.
func TestRunAddsTheRendersEntry(t *testing.T) {
	tr := tree(t, map[string]string{
		"kustomization.yaml": "resources: [cm.yaml]\ntransformers: [labels.yaml]\nbuildMetadata: [originAnnotations, transformerAnnotations]\n",
		"labels.yaml":        "apiVersion: builtin\nkind: LabelTransformer\nmetadata: {name: l}\nlabels: {team: a}\nfieldSpecs: [{path: metadata/labels, create: true}]\n",
		"cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n",
	})
	b, err := Scan(tr, tr.Dir(), "kustomization.yaml", true, Limits{}, true)
	require.NoError(t, err)
	require.Len(t, b.Functions, 1)
	assert.True(t, b.Functions[0].Render)
	data, err := b.Build(fakeEntries{run: func(_ *Function, _ *yaml.RNode, objects []Object) ([]bool, []byte, error) {
		require.Len(t, objects, 1)
		assert.Equal(t, "a", objects[0].Node.GetLabels()["team"], "after the root's transformers")
		return []bool{true}, []byte("apiVersion: v1\nkind: Service\nmetadata: {name: added}\n"), nil
	}})
	require.NoError(t, err)
	assert.NotContains(t, string(data), renderEntry)
	assert.NotContains(t, string(data), entryKind)
	assert.Contains(t, string(data), "name: added")
	_, err = os.Stat(filepath.Join(tr.Dir(), renderEntry))
	assert.True(t, os.IsNotExist(err), "the entry is never written")

	d, err := Scan(tr, tr.Dir(), "kustomization.yaml", true, Limits{}, false)
	require.NoError(t, err)
	assert.Empty(t, d.Functions, "discover: the build runs no entry of its own")
}

type fakeEntries struct {
	run func(*Function, *yaml.RNode, []Object) ([]bool, []byte, error)
}

func (f fakeEntries) Run(entry *Function, config *yaml.RNode, objects []Object) ([]bool, []byte, error) {
	return f.run(entry, config, objects)
}

// RunLast answers what run adds as LastAdded.
func (f fakeEntries) RunLast(entry *Function, config *yaml.RNode, objects []Object) ([]bool, LastAdded, error) {
	keep, added, err := f.run(entry, config, objects)
	if err != nil {
		return nil, nil, err
	}
	nodes, err := kio.FromBytes(added)
	return keep, fakeLastAdded(nodes), err
}

type fakeLastAdded []*yaml.RNode

func (l fakeLastAdded) Len() int { return len(l) }
func (l fakeLastAdded) ID(i int) resid.ResId {
	return resid.NewResIdWithNamespace(resid.GvkFromNode(l[i]), l[i].GetName(), l[i].GetNamespace())
}
func (l fakeLastAdded) Append(buf []byte, i int, labels, annotations map[string]string) ([]byte, error) {
	n := l[i].Copy()
	for k, v := range labels {
		if err := n.PipeE(yaml.SetLabel(k, v)); err != nil {
			return nil, err
		}
	}
	for k, v := range annotations {
		if err := n.PipeE(yaml.SetAnnotation(k, v)); err != nil {
			return nil, err
		}
	}
	s, err := n.String()
	return append(buf, s...), err
}

// krusty's file system reads and never writes.
func TestConfinedFSWritesNothing(t *testing.T) {
	b := &Root{tree: tree(t, map[string]string{"a.yaml": "a: 1\n"}), limits: Limits{}.withDefaults()}
	fs := &confinedFS{build: b, served: map[string]bool{}}
	dir, err := os.Getwd()
	require.NoError(t, err)
	p := filepath.Join(dir, "b.yaml")
	require.ErrorIs(t, fs.WriteFile(p, []byte("x")), errReadOnly)
	_, err = fs.Create(p)
	require.ErrorIs(t, err, errReadOnly)
	require.ErrorIs(t, fs.Mkdir(p), errReadOnly)
	require.ErrorIs(t, fs.MkdirAll(p), errReadOnly)
	require.ErrorIs(t, fs.RemoveAll(filepath.Join(dir, "a.yaml")), errReadOnly)
	_, err = os.Stat(p)
	assert.True(t, os.IsNotExist(err))
	data, err := fs.ReadFile(filepath.Join(dir, "a.yaml"))
	require.NoError(t, err)
	assert.Equal(t, "a: 1\n", string(data))
	assert.True(t, fs.Exists(filepath.Join(dir, "a.yaml")))
	assert.False(t, fs.Exists("/etc/passwd"), "outside the repository")
	_, err = fs.ReadFile("/etc/passwd")
	assert.ErrorContains(t, err, "outside the current directory")
	require.NoError(t, os.Symlink("/etc/passwd", "link.yaml"))
	_, err = fs.ReadFile(filepath.Join(dir, "link.yaml"))
	assert.ErrorContains(t, err, "link.yaml is a symlink to /etc/passwd")
	_, _, err = fs.CleanedAbs(filepath.Join(dir, "link.yaml"))
	assert.ErrorContains(t, err, "link.yaml is a symlink to /etc/passwd")
}

// kustomize sees the repository's top as "/": its paths, and so its
// messages, never say where the repository lies on the disk, and ".."
// cannot climb past it.
func TestConfinedFSSeesTheRepositoryAsItsRoot(t *testing.T) {
	tr := tree(t, map[string]string{"app/a.yaml": "a: 1\n"})
	fs := newConfinedFS(&Root{tree: tr, tight: true, limits: Limits{}.withDefaults()})
	data, err := fs.ReadFile("/app/a.yaml")
	require.NoError(t, err)
	assert.Equal(t, "a: 1\n", string(data))
	dir, file, err := fs.CleanedAbs("/app/../app/a.yaml")
	require.NoError(t, err)
	assert.Equal(t, "/app", string(dir))
	assert.Equal(t, "a.yaml", file)
	assert.True(t, fs.IsDir("/app"))
	assert.False(t, fs.Exists("/../app/b.yaml"))
	_, err = fs.ReadFile("/../../app/a.yaml")
	require.NoError(t, err, "/.. is /, as on any disk")
	_, err = fs.ReadFile(tr.Dir() + "/app/a.yaml")
	require.Error(t, err, "the disk's path is not kustomize's")
	assert.NotContains(t, err.Error(), tr.Dir(), "its errors name files as kustomize does")
	_, err = fs.ReadFile("/app/b.yaml")
	require.ErrorIs(t, err, os.ErrNotExist)
	assert.Contains(t, err.Error(), " /app/b.yaml: ")
	assert.NotContains(t, err.Error(), tr.Dir())
}

// withInlineEntries replaces only the given entries.
func TestWithInlineEntries(t *testing.T) {
	out, err := withInlineEntries([]byte("resources: [a.yaml]\ntransformers:\n- fn.yaml\n- labels.yaml\n- |\n  apiVersion: builtin\n  kind: X\n"), map[int]string{0: "kind: Y\n"})
	require.NoError(t, err)
	assert.Equal(t, "resources: [a.yaml]\ntransformers:\n- |\n  kind: Y\n- labels.yaml\n- |\n  apiVersion: builtin\n  kind: X\n", string(out))
}

// The estimate counts what kustomize builds: a base once for each way it
// is reached, the configurations of a transformer directory as
// transformations of its referrer.
func TestScanCost(t *testing.T) {
	cm := func(name string) string {
		return "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\n"
	}
	label := "apiVersion: builtin\nkind: LabelTransformer\nmetadata: {name: l}\nlabels: {a: b}\nfieldSpecs: [{path: metadata/labels, create: true}]\n"
	tr := tree(t, map[string]string{
		"kustomization.yaml":      "resources: [a, b]\ntransformers: [fns]\nnamePrefix: p-\n",
		"a/kustomization.yaml":    "resources: [../base]\nnameSuffix: -a\n",
		"b/kustomization.yaml":    "resources: [../base]\nnameSuffix: -b\n",
		"base/kustomization.yaml": "resources: [r.yaml]\n",
		"base/r.yaml":             cm("x") + cm("y") + "---\napiVersion: v1\nkind: List\nitems: [{apiVersion: v1, kind: ConfigMap, metadata: {name: z}}]\n",
		"fns/kustomization.yaml":  "resources: [l.yaml]\n",
		"fns/l.yaml":              label + "---\n" + label,
	})
	b, err := Scan(tr, tr.Dir(), "kustomization.yaml", true, Limits{}, true)
	require.NoError(t, err)
	require.Empty(t, b.Problems())
	// base: 3 objects (the List's item is one); a and b: 3 each, a suffix;
	// the root: 6, a prefix and the 2 labels of fns.
	base := int64(2*3*3 + costPerBuild)
	ab := base + 2*3*3 + 1600*3*1 + costPerBuild
	fns := int64(2*2*2 + costPerBuild) // its own build holds its 2 configurations
	root := 2*ab + fns + 2*6*6 + 1600*6*3 + costPerBuild
	assert.Equal(t, Cost{Objects: 6, Builds: 6, Work: root, Bytes: b.Cost.Bytes}, b.Cost)
}

// Every refusal names the kustomization files from the root and the entry;
// what kustomize reads as a path is checked as a path, what it reads as
// YAML as YAML.
func TestScanProblems(t *testing.T) {
	bomb := "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\na1: &a1 [*a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0]\n" +
		"a2: &a2 [*a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1]\na3: [*a2, *a2, *a2, *a2, *a2, *a2, *a2, *a2, *a2, *a2]\n"
	execFn := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  annotations:\n    config.kubernetes.io/function: |\n      exec: {path: /bin/sh}\n"
	for name, c := range map[string]struct {
		files map[string]string
		want  string
	}{
		"an inline entry kustomize reads as a path": {map[string]string{
			"kustomization.yaml": "transformers:\n- |\n  file:///x/y.git?ref=--upload-pack=/tmp/c.sh%3B: 1\n  apiVersion: builtin\n  kind: LabelTransformer\n"},
			`kustomization.yaml: transformers[0]: "file:///x/y.git?ref=--upload-pack=/tmp/c.sh%3B: 1\napiVersion: builtin\nkind: LabelTransformer\n" is remote`},
		"a remote base of a transformer directory": {map[string]string{
			"kustomization.yaml": "transformers: [fns]\n", "fns/kustomization.yaml": "resources: ['http://127.0.0.1:1/r.git//x?ref=main']\n"},
			"kustomization.yaml (transformers[0]) → fns/kustomization.yaml: resources[0]: http://127.0.0.1:1/r.git//x?ref=main is remote"},
		"a function in a transformer directory": {map[string]string{
			"kustomization.yaml": "transformers: [fns]\n", "fns/kustomization.yaml": "resources: [f.yaml]\n", "fns/f.yaml": execFn},
			"kustomization.yaml (transformers[0]) → fns/kustomization.yaml: resources[0]: fns/f.yaml runs the exec function /bin/sh"},
		"a path that is nothing": {map[string]string{"kustomization.yaml": "resources: [gone]\n"},
			"kustomization.yaml: resources[0]: gone is neither a file nor a directory of the repository"},
		"an alias bomb in an inline patch": {map[string]string{"kustomization.yaml": "patches:\n- patch: |\n" + indent(bomb, "    ")},
			"kustomization.yaml: patches[0].patch: document 1 has over 200 YAML nodes once its aliases are expanded, over the ceiling per document (--max-document-nodes)"},
		"an alias bomb in a resource": {map[string]string{"kustomization.yaml": "resources: [r.yaml]\n", "r.yaml": bomb},
			"kustomization.yaml: resources[0]: r.yaml: document 1 has over 200 YAML nodes once its aliases are expanded, over the ceiling per document (--max-document-nodes)"},
		"Helm": {map[string]string{"kustomization.yaml": "helmCharts: [{name: x}]\n"},
			"kustomization.yaml: helmCharts[0]: Helm chart inflation runs the helm program"},
		"a patch out of the repository": {map[string]string{"kustomization.yaml": "patches: [{path: ../../p.yaml}]\n"},
			"p.yaml is outside the current directory: files are read only from inside the current directory and the PATHs"},
		"an absolute crds path": {map[string]string{"kustomization.yaml": "crds: [/etc/c.yaml]\n"},
			"kustomization.yaml: crds[0]: /etc/c.yaml is an absolute path"},
		"a remote openapi path": {map[string]string{"kustomization.yaml": "openapi: {path: 'https://example.com/s.json'}\n"},
			"kustomization.yaml: openapi.path: https://example.com/s.json is remote"},
		"a remote generator source": {map[string]string{"kustomization.yaml": "configMapGenerator: [{name: g, files: ['k=https://example.com/f']}]\n"},
			"kustomization.yaml: configMapGenerator[0].files[0]: https://example.com/f is remote"},
		"an alias bomb in configurations": {map[string]string{"kustomization.yaml": "configurations: [conf.yaml]\n", "conf.yaml": bomb},
			"kustomization.yaml: configurations[0]: conf.yaml: document 1 has over 200 YAML nodes once its aliases are expanded"},
		"a crds type that refers to itself": {map[string]string{"kustomization.yaml": "crds: [c.yaml]\n",
			"c.yaml": "a.B:\n  Schema:\n    properties:\n      next: {$ref: a.C}\na.C:\n  Schema:\n    properties:\n      back: {$ref: a.B}\n"},
			"kustomization.yaml: crds[0]: c.yaml: type a.B refers to itself through $ref (a.B -> a.C -> a.B): kustomize would recurse until the process crashes"},
	} {
		t.Run(name, func(t *testing.T) {
			tr := tree(t, c.files)
			b, err := Scan(tr, tr.Dir(), "kustomization.yaml", true, Limits{MaxDocumentNodes: 200}, true)
			require.NoError(t, err)
			require.NotEmpty(t, b.Problems())
			assert.Contains(t, b.Problems()[0].String(), c.want)
		})
	}
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+prefix) + "\n"
}

// A path out of the repository is refused in the same words whether or
// not what it names exists.
func TestScanTellsNothingOfOutside(t *testing.T) {
	messages := map[string]string{}
	for _, target := range []string{"exists", "missing"} {
		dir := t.TempDir()
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "exists"), 0o755))
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "repo"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "repo/kustomization.yaml"), []byte("transformers: [../"+target+"]\nresources: [link]\n"), 0o644))
		require.NoError(t, os.Symlink("../"+target, filepath.Join(dir, "repo/link")))
		t.Chdir(filepath.Join(dir, "repo"))
		ld, err := repofs.New(repofs.RootOnly, repofs.Limits{})
		require.NoError(t, err)
		root, err := ld.Resolve(".")
		require.NoError(t, err)
		b, err := Scan(ld.Tree(root), root.Path(), "kustomization.yaml", true, Limits{}, true)
		require.NoError(t, err)
		require.Len(t, b.Problems(), 2)
		messages[target] = strings.ReplaceAll(strings.ReplaceAll(b.Err().Error(), target, "X"), dir, "D")
	}
	assert.Equal(t, messages["exists"], messages["missing"])
	assert.Contains(t, messages["missing"], "transformers[0]")
	assert.Contains(t, messages["missing"], "resources[0]")
}

// What entry.go reaches in kustomize's internals is where it was: the
// registry of builtins (linked, or the build would not link) holds
// kustomize's own.
func TestKustomizeInternals(t *testing.T) {
	_, ok := builtinPluginTypes["PatchTransformer"]
	assert.True(t, ok, "builtinhelpers' names")
	assert.NotEmpty(t, builtinTransformers)
}

// An entry's Transform leaves the resource map as UpdateResMapValues
// would, through ResMap.ApplyFilter: an object it no longer lists is
// dropped, one it makes anew in place of one it does not keep takes that
// one's place, one it adds is appended.
func TestEntryTransformThroughPublicMethods(t *testing.T) {
	tr := tree(t, map[string]string{
		"kustomization.yaml": "resources: [cms.yaml]\ntransformers: [fn.yaml, labels.yaml]\n",
		"fn.yaml":            ourEntry,
		"labels.yaml":        "apiVersion: builtin\nkind: LabelTransformer\nmetadata: {name: l}\nlabels: {after: entry}\nfieldSpecs: [{path: metadata/labels, create: true}]\n",
		"cms.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
	})
	b, err := Scan(tr, tr.Dir(), "kustomization.yaml", true, Limits{}, true)
	require.NoError(t, err)
	require.Empty(t, b.Problems())
	data, err := b.Build(fakeEntries{run: func(_ *Function, _ *yaml.RNode, objects []Object) ([]bool, []byte, error) {
		require.Len(t, objects, 3)
		return []bool{true, false, false}, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {new: \"1\"}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: d}\n"), nil
	}})
	require.NoError(t, err)
	assert.Equal(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels:\n    after: entry\n  name: a\n---\n"+
		"apiVersion: v1\ndata:\n  new: \"1\"\nkind: ConfigMap\nmetadata:\n  labels:\n    after: entry\n  name: c\n---\n"+
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels:\n    after: entry\n  name: d\n", string(data))
}

// A repository that writes the kind the build reads flapp-services' entries
// as, with a key of its choosing, runs nothing: the key names no build.
func TestRunRefusesAForgedEntry(t *testing.T) {
	tr := tree(t, map[string]string{
		"kustomization.yaml": "resources: [cm.yaml]\ntransformers: [forged.yaml, fn.yaml]\n",
		"forged.yaml":        "apiVersion: builtin\nkind: " + entryKind + "\nmetadata:\n  name: x\n  annotations:\n    " + entryAnnotation + ": 000000000000000000000000/0\n",
		"fn.yaml":            ourEntry,
		"cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n",
	})
	b, err := Scan(tr, tr.Dir(), "kustomization.yaml", true, Limits{}, true)
	require.NoError(t, err)
	require.Empty(t, b.Problems(), "a builtin, as far as the scan can tell")
	runs := 0
	_, err = b.Build(fakeEntries{run: func(_ *Function, _ *yaml.RNode, objects []Object) ([]bool, []byte, error) {
		runs++
		return make([]bool, len(objects)), nil, nil
	}})
	require.ErrorContains(t, err, "flapp-services' own name for its entries")
	assert.Zero(t, runs)
}

// The cycles kustomize would recurse into, and what it would not.
func TestCRDCycle(t *testing.T) {
	assert.Equal(t, []string{"T", "T"}, crdCycle([]byte(`{"T": {"Schema": {"properties": {"x": {"$ref": "T"}}}}}`)))
	assert.Equal(t, []string{"A", "B", "A"}, crdCycle([]byte("A:\n  Schema:\n    properties: {b: {$ref: B}}\nB:\n  Schema:\n    properties: {a: {$ref: A}}\n")))
	assert.Nil(t, crdCycle([]byte(`{"A": {"Schema": {"properties": {"b": {"$ref": "B"}}}}, "B": {"Schema": {"properties": {"c": {"type": "string"}}}}}`)), "a chain")
	assert.Nil(t, crdCycle([]byte(`{"A": {"Schema": {"properties": {"b": {"$ref": "Missing"}}}}}`)), "a reference to no type")
	assert.Nil(t, crdCycle(nil), "empty: kustomize's own error")
	assert.Nil(t, crdCycle([]byte("[1, 2]")), "not a map: kustomize's own error")
}

// The build's file system only reads, and only whole files: every other
// way kustomize's interface offers is refused; a ceiling a read passes is
// the build's error, the first one kept; its errors name paths as
// kustomize sees them.
func TestConfinedFSOnlyReads(t *testing.T) {
	tr := tree(t, map[string]string{
		"app/a.yaml":     "a: 1\n",
		"app/big.yaml":   "a: [" + strings.Repeat("1, ", 40) + "1]\n",
		"app/big2.yaml":  "b: [" + strings.Repeat("1, ", 40) + "1]\n",
		"app/data.txt":   "a: [" + strings.Repeat("1, ", 40) + "1]\n",
		"app/alias.yaml": "x: &x [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\ny: [*x, *x, *x, *x, *x]\n",
	})
	b := &Root{tree: tr, tight: true, limits: Limits{MaxDocumentNodes: 45}.withDefaults(), dataFiles: map[string]bool{}}
	resolved, err := tr.Resolve(filepath.Join(tr.Dir(), "app/data.txt"))
	require.NoError(t, err)
	b.dataFiles[resolved] = true
	fs := newConfinedFS(b)

	for name, err := range map[string]error{
		"Mkdir": fs.Mkdir("/app/x"), "MkdirAll": fs.MkdirAll("/app/x/y"), "RemoveAll": fs.RemoveAll("/app"),
		"WriteFile": fs.WriteFile("/app/a.yaml", nil),
	} {
		assert.ErrorIs(t, err, errReadOnly, name)
	}
	_, err = fs.Create("/app/x")
	assert.ErrorIs(t, err, errReadOnly)
	_, err = fs.Open("/app/a.yaml")
	assert.ErrorContains(t, err, "reads files whole")
	_, err = fs.Glob("/app/*")
	assert.ErrorContains(t, err, "does not glob")
	assert.ErrorContains(t, fs.Walk("/app", nil), "does not walk")
	_, err = fs.ReadFile("app/a.yaml")
	assert.ErrorContains(t, err, "a relative path")

	names, err := fs.ReadDir("/app")
	require.NoError(t, err)
	assert.Contains(t, names, "a.yaml")
	_, err = fs.ReadDir("/none")
	require.Error(t, err)
	assert.NotContains(t, err.Error(), tr.Dir())

	data, err := fs.ReadFile("/app/data.txt")
	require.NoError(t, err, "a generator's data is not YAML to the build")
	assert.Equal(t, "a: ["+strings.Repeat("1, ", 40)+"1]\n", string(data))
	assert.NoError(t, fs.refused)
	_, err = fs.ReadFile("/app/big.yaml")
	assert.ErrorContains(t, err, "app/big.yaml: document 1 has up to")
	_, err = fs.ReadFile("/app/big2.yaml")
	require.Error(t, err)
	assert.ErrorContains(t, fs.refused, "app/big.yaml", "the first refusal is the build's")
	_, err = fs.ReadFile("/app/alias.yaml")
	assert.ErrorContains(t, err, "once its aliases are expanded")
}

// filePaths names each file a kustomization's own fields make its build
// read, at its entry: the YAML ones and the data ones (a generator's
// sources, key=path or not); an inline strategic-merge patch is no path.
func TestFilePaths(t *testing.T) {
	var k types.Kustomization
	require.NoError(t, yaml.Unmarshal([]byte(`
crds: [c.yaml]
configurations: [conf.yaml]
openapi: {path: schema.json}
patches: [{path: p.yaml}, {patch: "a: b"}]
patchesJson6902: [{path: j.yaml}]
patchesStrategicMerge: [s.yaml, "kind: X\nmetadata: {name: y}\n"]
replacements: [{path: r.yaml}]
configMapGenerator: [{name: g, envs: [g.env], files: [g.txt, key=k.txt]}]
secretGenerator: [{name: s, envs: [s.env], files: [s.txt]}]
`), &k))
	var got []string
	for _, f := range filePaths(&k) {
		got = append(got, fmt.Sprintf("%s %s %v", f.entry, f.path, f.data))
	}
	assert.Equal(t, []string{
		"crds[0] c.yaml false", "configurations[0] conf.yaml false", "openapi.path schema.json false",
		"patches[0].path p.yaml false", "patchesJson6902[0].path j.yaml false", "patchesStrategicMerge[0] s.yaml false",
		"replacements[0].path r.yaml false",
		"configMapGenerator[0].envs[0] g.env true", "configMapGenerator[0].files[0] g.txt true", "configMapGenerator[0].files[1] k.txt true",
		"secretGenerator[0].envs[0] s.env true", "secretGenerator[0].files[0] s.txt true",
	}, got)
}

// A generator's sources are data to the build, not YAML: the scan leaves
// their content alone, and the build's file system serves them unparsed.
func TestScanReadsGeneratorSourcesAsData(t *testing.T) {
	bomb := "a0: &a0 [" + strings.Repeat("x, ", 30) + "x]\na1: [" + strings.Repeat("*a0, ", 30) + "*a0]\n"
	tr := tree(t, map[string]string{
		"kustomization.yaml": "configMapGenerator: [{name: g, files: [k=data.yaml]}]\nsecretGenerator: [{name: s, envs: [s.env]}]\n",
		"data.yaml":          bomb,
		"s.env":              "A=1\n",
	})
	b, err := Scan(tr, tr.Dir(), "kustomization.yaml", true, Limits{MaxDocumentNodes: 200}, true)
	require.NoError(t, err)
	require.Empty(t, b.Problems())
	assert.Len(t, b.dataFiles, 2)
	data, err := newConfinedFS(b).ReadFile("/data.yaml")
	require.NoError(t, err)
	assert.Equal(t, bomb, string(data))
}

// With buildMetadata, what an entry adds carries what kustomize records on
// what an exec function adds, in place and after the build alike: the
// origin of the entry as written (its file, its own apiVersion and kind),
// the entry among the transformations of what it visited, and the
// managed-by label of the kustomize release it builds as.
func TestBuildMetadataOfWhatAnEntryAdds(t *testing.T) {
	for name, transformers := range map[string]string{
		"in place":        "[fn.yaml, labels.yaml]",
		"after the build": "[labels.yaml, fn.yaml]",
	} {
		t.Run(name, func(t *testing.T) {
			tr := tree(t, map[string]string{
				"kustomization.yaml": "buildMetadata: [originAnnotations, transformerAnnotations, managedByLabel]\nresources: [cm.yaml]\ntransformers: " + transformers + "\n",
				"fn.yaml":            ourEntry,
				"labels.yaml":        "apiVersion: builtin\nkind: LabelTransformer\nmetadata: {name: l}\nlabels: {team: a}\nfieldSpecs: [{path: metadata/labels, create: true}]\n",
				"cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
			})
			b, err := Scan(tr, tr.Dir(), "kustomization.yaml", true, Limits{}, true)
			require.NoError(t, err)
			require.Empty(t, b.Problems())
			data, err := b.Build(fakeEntries{run: func(_ *Function, config *yaml.RNode, _ []Object) ([]bool, []byte, error) {
				assert.Equal(t, "v1", config.GetApiVersion(), "the entry as written")
				assert.Equal(t, "ConfigMap", config.GetKind())
				return []bool{true}, []byte("apiVersion: v1\nkind: Service\nmetadata: {name: s}\n"), nil
			}})
			require.NoError(t, err)
			nodes, err := kio.FromBytes(data)
			require.NoError(t, err)
			require.Len(t, nodes, 2)
			svc := nodes[1]
			require.Equal(t, "Service", svc.GetKind(), "kustomize's order: ConfigMap, then Service")
			assert.Equal(t, "kustomize-"+KustomizeRelease, svc.GetLabels()["app.kubernetes.io/managed-by"])
			assert.Equal(t, "configuredIn: fn.yaml\nconfiguredBy:\n  apiVersion: v1\n  kind: ConfigMap\n  name: fn\n",
				svc.GetAnnotations()[originAnnotation])
			assert.Equal(t, "kustomize-"+KustomizeRelease, nodes[0].GetLabels()["app.kubernetes.io/managed-by"])
			assert.Equal(t, "path: cm.yaml\n", nodes[0].GetAnnotations()[originAnnotation])
			transformations := nodes[0].GetAnnotations()["alpha.config.kubernetes.io/transformations"]
			assert.Contains(t, transformations, "- configuredIn: fn.yaml\n  configuredBy:\n    apiVersion: v1\n    kind: ConfigMap\n    name: fn\n",
				"the entry that visited it, as written")
			assert.Contains(t, transformations, "- configuredIn: labels.yaml\n")
		})
	}
}

// The output estimate: what each of a kustomization's own fields adds to
// every object, names twice (the object and a reference), labels three
// times (metadata, selectors, templates), annotations twice, each with
// its punctuation.
func TestMetadataBytes(t *testing.T) {
	k := &types.Kustomization{
		NamePrefix: "ab", NameSuffix: "c", Namespace: "ns",
		CommonLabels:      map[string]string{"k": "vv"}, //nolint:staticcheck // kustomize v5 still applies them
		Labels:            []types.Label{{Pairs: map[string]string{"a": "b"}}},
		CommonAnnotations: map[string]string{"x": "yyy"},
	}
	assert.Equal(t, int64(2*3+2+3*(1+2+4)+3*(1+1+4)+2*(1+3+4)), metadataBytes(k))
	assert.Zero(t, metadataBytes(&types.Kustomization{}))
}

// The build's own objects are counted as they are written: past
// --max-build-output the build stops at the object that passes it, named,
// whether the root's last entry's objects are written after the build or
// no entry is last.
func TestBuildStopsAtItsOutputCeiling(t *testing.T) {
	cm := func(name string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\ndata: {a: " + strings.Repeat("x", 100) + "}\n"
	}
	labels := "apiVersion: builtin\nkind: LabelTransformer\nmetadata: {name: l}\nlabels: {a: b}\nfieldSpecs: [{path: metadata/labels, create: true}]\n"
	for name, kustomization := range map[string]string{
		"the render's own entry, last": "resources: [cms.yaml]\n",
		"an entry in place":            "resources: [cms.yaml]\ntransformers: [fn.yaml, labels.yaml]\n",
	} {
		t.Run(name, func(t *testing.T) {
			tr := tree(t, map[string]string{
				"kustomization.yaml": kustomization, "fn.yaml": ourEntry, "labels.yaml": labels,
				"cms.yaml": cm("a") + "---\n" + cm("b") + "---\n" + cm("c"),
			})
			b, err := Scan(tr, tr.Dir(), "kustomization.yaml", true, Limits{}, true)
			require.NoError(t, err)
			require.Empty(t, b.Problems())
			b.limits.MaxOutput = 300 // what the estimate did not see: a patch's multiplication, say
			_, err = b.Build(fakeEntries{run: func(_ *Function, _ *yaml.RNode, _ []Object) ([]bool, []byte, error) {
				return []bool{true, true, true}, nil, nil
			}})
			assert.ErrorContains(t, err, "the build's output passes the ceiling of 300 bytes (--max-build-output) at its object 2 of 3, ConfigMap b")
		})
	}
}

// An entry is told the file each FLApp and Service was read from, by the
// name it had there: an item of a v1 List too, and a base's object reached
// twice; no file when two files hold that name, nor for other kinds.
func TestEntriesAreToldEachObjectsFile(t *testing.T) {
	tr := tree(t, map[string]string{
		"kustomization.yaml":      "resources: [apps.yaml, a, b, c, d]\ntransformers: [fn.yaml]\n",
		"fn.yaml":                 ourEntry,
		"apps.yaml":               "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: fedlearner.k8s.io/v1alpha1, kind: FLApp, metadata: {name: x}}\n- {apiVersion: v1, kind: Service, metadata: {name: s}}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\n",
		"a/kustomization.yaml":    "resources: [../base]\nnameSuffix: -a\n",
		"b/kustomization.yaml":    "resources: [../base]\nnameSuffix: -b\n",
		"base/kustomization.yaml": "resources: [svc.yaml]\n",
		"base/svc.yaml":           "apiVersion: v1\nkind: Service\nmetadata: {name: t}\n",
		"c/kustomization.yaml":    "resources: [svc.yaml]\nnameSuffix: -c\n",
		"c/svc.yaml":              "apiVersion: v1\nkind: Service\nmetadata: {name: u}\n",
		"d/kustomization.yaml":    "resources: [svc.yaml]\nnameSuffix: -d\n",
		"d/svc.yaml":              "apiVersion: v1\nkind: Service\nmetadata: {name: u}\n",
	})
	b, err := Scan(tr, tr.Dir(), "kustomization.yaml", true, Limits{}, true)
	require.NoError(t, err)
	require.Empty(t, b.Problems())
	files := map[string]string{}
	_, err = b.Build(fakeEntries{run: func(_ *Function, _ *yaml.RNode, objects []Object) ([]bool, []byte, error) {
		for _, o := range objects {
			files[o.Node.GetKind()+" "+o.Node.GetName()] = o.File
		}
		return make([]bool, len(objects)), nil, nil
	}})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"FLApp x": "apps.yaml", "Service s": "apps.yaml", "ConfigMap c": "",
		"Service t-a": "base/svc.yaml", "Service t-b": "base/svc.yaml", "Service u-c": "", "Service u-d": ""}, files)
}
