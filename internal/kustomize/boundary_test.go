package kustomize

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The scan's ceilings and refusals at their boundaries, expectations by
// hand.

// A root and one base are two kustomization builds: a ceiling of 2 lets
// them build, 1 refuses, naming both numbers and the flag.
func TestMaxBuildsBoundary(t *testing.T) {
	files := map[string]string{
		"kustomization.yaml":      "resources: [base]\n",
		"base/kustomization.yaml": "resources: [cm.yaml]\n",
		"base/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n",
	}
	tr := tree(t, files)
	b, err := Scan(tr, tr.Dir(), "kustomization.yaml", true, Limits{MaxBuilds: 2}, true)
	require.NoError(t, err)
	assert.Empty(t, b.Problems())
	assert.Equal(t, int64(2), b.Cost.Builds)

	b, err = Scan(tr, tr.Dir(), "kustomization.yaml", true, Limits{MaxBuilds: 1}, true)
	require.NoError(t, err)
	require.Len(t, b.Problems(), 1)
	assert.Equal(t, "error: kustomization.yaml: the build runs 2 kustomization builds (a base is built once for each way it is reached), over the ceiling of 1 (--max-build-count)",
		b.Problems()[0].String())
}

// The scan reads at most one kustomization past --max-build-count: each
// is built at least once. A chain of ten bases with a ceiling of 3 reads
// four, and refuses the build; discover's scan (no estimate) stops at the
// same place, and does not find an entry below it either.
func TestMaxBuildsStopsTheScan(t *testing.T) {
	files := map[string]string{}
	for i := range 10 {
		files[fmt.Sprintf("b%d/kustomization.yaml", i)] = fmt.Sprintf("resources: [../b%d]\n", i+1)
	}
	files["b10/kustomization.yaml"] = "resources: [cm.yaml]\ntransformers: [fn.yaml]\n"
	files["b10/cm.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n"
	files["b10/fn.yaml"] = ourEntry
	tr := tree(t, files)
	for _, estimate := range []bool{true, false} {
		b, err := Scan(tr, filepath.Join(tr.Dir(), "b0"), "b0/kustomization.yaml", true, Limits{MaxBuilds: 3}, estimate)
		require.NoError(t, err)
		assert.Len(t, b.visits, 4, "kustomizations read")
		assert.Empty(t, b.Functions)
		if estimate {
			require.Len(t, b.Problems(), 1)
			assert.Equal(t, "error: b0/kustomization.yaml: the build reaches more than 3 kustomizations, each built at least once, over the ceiling of 3 kustomization builds (--max-build-count)",
				b.Problems()[0].String())
		}
	}
	// With the ceiling at the chain's eleven kustomizations, all are read.
	b, err := Scan(tr, filepath.Join(tr.Dir(), "b0"), "b0/kustomization.yaml", true, Limits{MaxBuilds: 11}, false)
	require.NoError(t, err)
	assert.Len(t, b.visits, 11)
	assert.Len(t, b.Functions, 1)
}

// The entry is flapp-services' only when its image's last path segment is
// flapp-services: an image that merely ends in the name runs another
// function, refused as one.
func TestScanImageThatEndsInTheName(t *testing.T) {
	for _, image := range []string{"evil/not-flapp-services", "evil/not-flapp-services:v1", "ghcr.io/x/myflapp-services@sha256:01"} {
		entry := strings.Replace(ourEntry, "image: flapp-services", "image: "+image, 1)
		tr := tree(t, map[string]string{"kustomization.yaml": "transformers: [fn.yaml]\n", "fn.yaml": entry})
		b, err := Scan(tr, tr.Dir(), "kustomization.yaml", true, Limits{}, true)
		require.NoError(t, err)
		assert.Empty(t, b.Functions, image)
		require.Len(t, b.Problems(), 1, image)
		assert.Equal(t, "error: kustomization.yaml: transformers[0]: fn.yaml runs the function image "+image+
			": flapp-services' build runs no KRM function; its own entry is read as its configuration, and nothing else is executed", b.Problems()[0].String())
	}
}

// flapp-services' entry alone in its file is the entry; beside another
// configuration, in a file or inline, it is refused; a file of builtins
// alone is no entry and no problem.
func TestScanEntryMixedWithOtherConfigurations(t *testing.T) {
	label := "apiVersion: builtin\nkind: LabelTransformer\nmetadata: {name: l}\nlabels: {a: b}\nfieldSpecs: [{path: metadata/labels, create: true}]\n"
	scan := func(files map[string]string) *Root {
		tr := tree(t, files)
		b, err := Scan(tr, tr.Dir(), "kustomization.yaml", true, Limits{}, true)
		require.NoError(t, err)
		return b
	}
	b := scan(map[string]string{"kustomization.yaml": "transformers: [fn.yaml]\n", "fn.yaml": ourEntry})
	assert.Empty(t, b.Problems())
	assert.Len(t, b.Functions, 1)

	b = scan(map[string]string{"kustomization.yaml": "transformers: [fn.yaml]\n", "fn.yaml": ourEntry + "---\n" + ourEntry})
	assert.Empty(t, b.Problems(), "two entries, nothing else")
	assert.Len(t, b.Functions, 2)

	b = scan(map[string]string{"kustomization.yaml": "transformers: [t.yaml]\n", "t.yaml": label + "---\n" + label})
	assert.Empty(t, b.Problems())
	for _, f := range b.Functions {
		assert.NotEqual(t, "t.yaml", f.Source, "builtins are no entry")
	}

	for _, file := range []string{ourEntry + "---\n" + label, label + "--- # the entry\n" + ourEntry} {
		b = scan(map[string]string{"kustomization.yaml": "transformers: [fn.yaml]\n", "fn.yaml": file})
		require.Len(t, b.Problems(), 1, file)
		assert.Equal(t, "error: kustomization.yaml: transformers[0]: fn.yaml holds flapp-services' entry and other configurations: give flapp-services' entry a file of its own", b.Problems()[0].String())
	}
	b = scan(map[string]string{"kustomization.yaml": "transformers:\n- |\n" + indent(ourEntry+"---\n"+label, "  ")})
	require.Len(t, b.Problems(), 1)
	assert.Equal(t, "error: kustomization.yaml: transformers[0]: the inline entry holds flapp-services' entry and other configurations: give flapp-services' entry a file of its own", b.Problems()[0].String())
}

// A document separator may carry a comment (--- # text); the scan splits
// there as kustomize's reader does, and counts the objects.
func TestSplitDocumentsAtACommentedSeparator(t *testing.T) {
	assert.Equal(t, []string{"a: 1\n", "b: 2\n", "c: 3\n"}, splitDocuments([]byte("a: 1\n--- # two\nb: 2\n---\nc: 3\n")))
	assert.Equal(t, []string{"", "a: 1\n", "b: 2\n"}, splitDocuments([]byte("---\na: 1\n---\r\nb: 2\n")), "a leading separator opens an empty document")
	assert.Equal(t, []string{"a: 1\n----\nb: 2\n"}, splitDocuments([]byte("a: 1\n----\nb: 2\n")), "four dashes are no separator")
	assert.Equal(t, []string{"a: |\n  --- # in a literal\n"}, splitDocuments([]byte("a: |\n  --- # in a literal\n")), "indented: text")
	assert.Equal(t, int64(3), countObjects([]byte("a: 1\n--- # two\nb: 2\n--- # three\nc: 3\n")))
	assert.Equal(t, int64(2), countObjects([]byte("a: 1\n--- # two\nb: 2\n---\n\n")), "an empty document is no object")
}

// The deadline is a backstop: a build within it gives its whole output; a
// build still running at it (here held in its entry until the test lets
// go) is abandoned there, and Run fails naming the deadline without
// waiting for the build.
func TestRunStopsAtItsDeadline(t *testing.T) {
	tr := tree(t, map[string]string{
		"kustomization.yaml": "resources: [cm.yaml]\ntransformers: [fn.yaml]\n",
		"fn.yaml":            ourEntry,
		"cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n",
	})
	keepAll := func(_ *Function, _ *yaml.RNode, objects []Object) ([]bool, []byte, error) {
		keep := make([]bool, len(objects))
		for i := range keep {
			keep[i] = true
		}
		return keep, nil, nil
	}
	b, err := Scan(tr, tr.Dir(), "kustomization.yaml", true, Limits{MaxTime: 10 * time.Minute}, true)
	require.NoError(t, err)
	require.Empty(t, b.Problems())
	data, err := b.Build(fakeEntries{run: keepAll})
	require.NoError(t, err)
	assert.Equal(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n", string(data))

	const deadline = 200 * time.Millisecond
	b, err = Scan(tr, tr.Dir(), "kustomization.yaml", true, Limits{MaxTime: deadline}, true)
	require.NoError(t, err)
	// Held far longer than the deadline: a Run that waited for the build
	// would return a success after 30 s, and fail below, not hang.
	release := make(chan struct{})
	time.AfterFunc(30*time.Second, func() { close(release) })
	start := time.Now()
	data, err = b.Build(fakeEntries{run: func(f *Function, c *yaml.RNode, objects []Object) ([]bool, []byte, error) {
		<-release
		return keepAll(f, c, objects)
	}})
	elapsed := time.Since(start)
	assert.Nil(t, data)
	require.EqualError(t, err, "error: kustomization.yaml: the build ran past its deadline of 200ms (--max-build-time): its cost is beyond what the scan estimates; "+
		"split the application, or raise the deadline and Argo CD's timeout together")
	assert.GreaterOrEqual(t, elapsed, deadline, "not before the deadline")
}

// keepAll is an entry that keeps every object and generates nothing.
var keepAll = fakeEntries{run: func(_ *Function, _ *yaml.RNode, objects []Object) ([]bool, []byte, error) {
	keep := make([]bool, len(objects))
	for i := range keep {
		keep[i] = true
	}
	return keep, nil, nil
}}

// --max-build-output, estimated by the scan and counted as the build's
// output is written: at the ceiling the build runs, one byte under it is
// refused, by the estimate when it sees the excess, else at the object
// that passes it.
func TestMaxOutputBoundary(t *testing.T) {
	v := strings.Repeat("v", 100)
	block := "apiVersion: v1\ndata:\n  k: " + v + "\nkind: ConfigMap\nmetadata:\n  name: cm\n"
	twice := "apiVersion: v1\ndata:\n  a: " + v + "\n  b: " + v + "\nkind: ConfigMap\nmetadata:\n  name: cm\n"
	for _, c := range []struct{ name, file, want, refusal string }{
		// As written in block style, the file is as long as the output.
		{"block", block, block, fmt.Sprintf("kustomization.yaml: the build's output is estimated at %d bytes (names, labels and annotations added to each of 1 objects), "+
			"over the ceiling of %d bytes (--max-build-output)", len(block), len(block)-1)},
		// An alias is shorter than the value it repeats: the estimate passes.
		{"alias", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {a: &v " + v + ", b: *v}\n", twice,
			fmt.Sprintf("the build's output passes the ceiling of %d bytes (--max-build-output) at its object 1 of 1, ConfigMap cm", len(twice)-1)},
	} {
		n := int64(len(c.want))
		tr := tree(t, map[string]string{"kustomization.yaml": "resources: [cm.yaml]\n", "cm.yaml": c.file})
		b, err := Scan(tr, tr.Dir(), "kustomization.yaml", true, Limits{MaxOutput: n}, true)
		require.NoError(t, err)
		require.Empty(t, b.Problems(), c.name)
		data, err := b.Build(keepAll)
		require.NoError(t, err, c.name)
		assert.Equal(t, c.want, string(data), c.name)

		b, err = Scan(tr, tr.Dir(), "kustomization.yaml", true, Limits{MaxOutput: n - 1}, true)
		require.NoError(t, err)
		if len(b.Problems()) > 0 {
			assert.Equal(t, "error: "+c.refusal, b.Problems()[0].String(), c.name)
			continue
		}
		_, err = b.Build(keepAll)
		assert.EqualError(t, err, "error: kustomization.yaml: "+c.refusal, c.name)
	}
}

// The output is counted as it is written: three objects whose aliases the
// estimate cannot see stop at the one that passes the ceiling, named.
func TestMaxOutputCountedAsWritten(t *testing.T) {
	v := strings.Repeat("v", 100)
	var files = map[string]string{"kustomization.yaml": "resources: [cm.yaml]\n"}
	var cm []string
	for _, n := range []string{"a", "b", "c"} {
		cm = append(cm, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "+n+", namespace: ns}\ndata: {a: &v "+v+", b: *v, c: *v, d: *v}\n")
	}
	files["cm.yaml"] = strings.Join(cm, "---\n")
	one := int64(len("apiVersion: v1\ndata:\n  a: " + v + "\n  b: " + v + "\n  c: " + v + "\n  d: " + v + "\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\n"))
	tr := tree(t, files)
	for _, c := range []struct {
		max  int64
		want string
	}{
		{3 * one, ""},
		{3*one - 1, "the build's output passes the ceiling of " + fmt.Sprint(3*one-1) + " bytes (--max-build-output) at its object 3 of 3, ConfigMap ns/c"},
		{2*one - 1, "the build's output passes the ceiling of " + fmt.Sprint(2*one-1) + " bytes (--max-build-output) at its object 2 of 3, ConfigMap ns/b"},
	} {
		b, err := Scan(tr, tr.Dir(), "kustomization.yaml", true, Limits{MaxOutput: c.max}, true)
		require.NoError(t, err)
		require.Empty(t, b.Problems())
		data, err := b.Build(keepAll)
		if c.want == "" {
			require.NoError(t, err)
			assert.Len(t, data, int(3*one)+2*len("---\n"))
			continue
		}
		assert.Nil(t, data)
		assert.EqualError(t, err, "error: kustomization.yaml: "+c.want)
	}
}
