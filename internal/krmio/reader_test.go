package krmio

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedlearner/flapp-services/fn"
	"github.com/fedlearner/flapp-services/internal/yamlnodes"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// readerInputs are every golden input and output, the examples, and shapes
// kio.ByteReader treats specially.
func readerInputs(t testing.TB) map[string][]byte {
	inputs := map[string][]byte{
		"multi":        []byte("a: 1\n---\nb: [1, 2]\n--- # comment\n- x\n- y\n---\n\n---\nc: |\n  text\n\n"),
		"crlf":         []byte("apiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: a\r\n---\r\napiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: b\r\n"),
		"list alone":   []byte("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: b\n"),
		"list in many": []byte("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n---\nx: 1\n"),
		"wide seq":     []byte("a:\n  - 1\n  - 2\n---\nb:\n- 3\n"),
		"json":         []byte(`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "annotations": {"config.kubernetes.io/index": "7"}}}`),
		"legacy annos": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    config.kubernetes.io/path: x.yaml\n"),
		"comments":     []byte("# head\napiVersion: v1 # line\nkind: ConfigMap\n# foot\n---\n# only a comment\n"),
		"empty":        nil,
		"bad sep":      []byte("a: 1\n--- b\nc: 2\n"),
		"bad yaml":     []byte("a: 1\n---\nb: [\n"),
		"scalar":       []byte("just text\n"),
	}
	for _, glob := range []string{"../../testdata/*/*.yaml", "../../examples/*/*.yaml", "../../examples/*/*/*.yaml"} {
		paths, err := filepath.Glob(glob)
		require.NoError(t, err)
		require.NotEmpty(t, paths, glob)
		for _, p := range paths {
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			inputs[p] = data
		}
	}
	return inputs
}

func encodeAll(t *testing.T, nodes []*yaml.RNode) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		s, err := n.String()
		require.NoError(t, err)
		out[i] = s
	}
	return out
}

// TestReadObjectsIsByteReader: document by document, ReadDocuments (through
// readObjects) yields the nodes kio.ByteReader.Read yields, with the
// sequence indentation its reader annotates beside each instead, and the
// annotations its writer clears cleared on both; and fails where it fails.
func TestReadObjectsIsByteReader(t *testing.T) {
	for name, data := range readerInputs(t) {
		want, wantErr := (&kio.ByteReader{Reader: bytes.NewReader(data), PreserveSeqIndent: true, SetAnnotations: map[string]string{kioutil.PathAnnotation: "dir/file.yaml"}}).Read()
		var got []*yaml.RNode
		var indents []string
		err := readObjects(data, "dir/file.yaml", ReadLimits{MaxNodes: 1 << 30, MaxDocuments: 1 << 30}, func(o fn.Object) error {
			got, indents = append(got, o.Node), append(indents, o.SeqIndent)
			return nil
		})
		if wantErr != nil {
			assert.Error(t, err, name)
			continue
		}
		require.NoError(t, err, name)
		var wantIndents []string
		for _, n := range want {
			wantIndents = append(wantIndents, n.GetAnnotations()[kioutil.SeqIndentAnnotation])
			require.NoError(t, clearReaderAnnotations(n), name)
		}
		for _, n := range got {
			require.NoError(t, clearReaderAnnotations(n), name)
		}
		assert.Equal(t, encodeAll(t, want), encodeAll(t, got), name)
		assert.Equal(t, wantIndents, indents, name)
	}
}

func countNodes(n *yaml.Node) int {
	c := 1
	for _, k := range n.Content {
		c += countNodes(k)
	}
	return c
}

// checkBound fails when a document that parses has more nodes than yamlnodes.Bound.
func checkBound(t *testing.T, doc string) {
	var n yaml.Node
	if err := yaml.NewDecoder(strings.NewReader(doc)).Decode(&n); err != nil {
		return
	}
	if got, bound := countNodes(&n), yamlnodes.Bound(doc); got > bound {
		t.Errorf("%d nodes, bound %d: %q", got, bound, doc)
	}
}

// TestNodeBound holds the bound against the parser on every document of the
// reader inputs and on the densest shapes.
func TestNodeBound(t *testing.T) {
	for _, data := range readerInputs(t) {
		docs, _, err := splitDocuments(string(data), "")
		if err != nil {
			continue
		}
		for _, d := range docs {
			checkBound(t, d)
		}
	}
	for _, doc := range []string{
		"", "a", "[]", "{}", "[a,b,c,d,e,f]", "{a, b, c, d, e}", "{a: 1, b, c: 2}", "[a: b, c: d]",
		"- - - a", "- {}\n- {}\n- []\n", "? a\n? b\n? c\n", "a:\nb:\nc:\n", "a: *x", "&x a: b",
		"[[[[[]]]]]", "{a: {b: {c: {}}}}", "- a: b\n  c: d\n- e", "a: [1, {b: c}, [d]]",
		"\"a\": b", "{\"a\":b}", "[? a : b]", "- ? a\n  : b\n", "!!map {a: b}", "a: !t [x, y]",
	} {
		checkBound(t, doc)
	}
}

// FuzzNodeBound: no document that parses has more nodes than its bound.
//
//	go test ./internal/krmio -run '^$' -fuzz FuzzNodeBound
func FuzzNodeBound(f *testing.F) {
	for _, data := range readerInputs(f) {
		f.Add(string(data))
	}
	f.Add("{a, b, c, d}")
	f.Fuzz(func(t *testing.T, doc string) {
		if len(doc) > 1<<16 {
			return
		}
		checkBound(t, doc)
	})
}

// TestDocumentErrorsNameTheFileLine: a document go-yaml cannot parse is
// named by its file, its index and the line it starts on, followed by
// go-yaml's own message, whose line is the file's although the document was
// parsed alone (go-yaml would count from its first line, 6).
func TestDocumentErrorsNameTheFileLine(t *testing.T) {
	data := []byte("a: 1\n---\nb: 2\nc: 3\n---\n# three\nd: 4\ne: [\n")
	err := readObjects(data, "f.yaml", ReadLimits{MaxNodes: 1 << 30, MaxDocuments: 1 << 30}, func(fn.Object) error { return nil })
	require.Error(t, err)
	var de *fn.InputError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, fn.Origin{File: "f.yaml", Document: 3, Line: 6}, de.Origin, "where the document starts")
	assert.Equal(t, "f.yaml: document 3 (line 6): yaml: line 8: did not find expected node content", err.Error(),
		"go-yaml's words, naming the file's line of the fault (e: [, found at the end)")

	err = readObjects([]byte("a: 1\n---\n[a, b, c, d, e, f, g]\n"), "f.yaml", ReadLimits{MaxNodes: 10, MaxDocuments: 10}, func(fn.Object) error { return nil })
	require.ErrorAs(t, err, &de)
	assert.Contains(t, err.Error(), "f.yaml: document 2 (line 3): may hold up to 17 YAML nodes, over the ceiling of 10 per document")
}

// TestSpoolSpillsToAnUnlinkedFile: past SpoolMemory the render waits in a
// temporary file nobody can open by name, and comes back whole.
func TestSpoolSpillsToAnUnlinkedFile(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	var s spool
	chunk := bytes.Repeat([]byte("0123456789abcdef"), 4096) // 64 KiB
	var want bytes.Buffer
	for want.Len() <= 3*SpoolMemory {
		_, err := s.Write(chunk)
		require.NoError(t, err)
		want.Write(chunk)
	}
	require.NotNil(t, s.file, "spilled to a file")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "the file is unlinked")
	var got bytes.Buffer
	require.NoError(t, s.copyTo(&got, int64(want.Len())))
	assert.Equal(t, want.Bytes(), got.Bytes())
	require.NoError(t, s.close())
}

// TestReadObjectsKeepsALiteralsFinalNewline: splitting a file at "---"
// eats the line break before it, which in a block scalar ending a
// document is part of the value.
func TestReadObjectsKeepsALiteralsFinalNewline(t *testing.T) {
	for name, tc := range map[string]struct {
		data, want string
	}{
		"literal ending the first document": {"a: |\n  text\n---\nb: 1\n", "text\n"},
		"literal ending a middle document":  {"b: 1\n---\na: |\n  one\n  two\n---\nc: 1\n", "one\ntwo\n"},
		"kept trailing lines":               {"a: |+\n  text\n\n---\nb: 1\n", "text\n\n"},
		"folded":                            {"a: >\n  text\n---\nb: 1\n", "text\n"},
		"Windows line ends":                 {"a: |\r\n  text\r\n---\r\nb: 1\r\n", "text\n"},
		"the last document":                 {"b: 1\n---\na: |\n  text\n", "text\n"},
	} {
		t.Run(name, func(t *testing.T) {
			var values []string
			err := readObjects([]byte(tc.data), "f.yaml", ReadLimits{MaxNodes: 1 << 30, MaxDocuments: 1 << 30}, func(o fn.Object) error {
				n := o.Node
				if a := n.Field("a"); a != nil {
					values = append(values, a.Value.YNode().Value)
				}
				return nil
			})
			require.NoError(t, err)
			assert.Equal(t, []string{tc.want}, values)
		})
	}
}

// TestReadObjectsMaxDocuments: a file of exactly MaxDocuments documents is
// read; one more is refused before any is parsed.
func TestReadObjectsMaxDocuments(t *testing.T) {
	three := []byte("a: 1\n---\nb: 2\n---\nc: 3\n")
	read := 0
	err := readObjects(three, "three.yaml", ReadLimits{MaxNodes: 1 << 30, MaxDocuments: 3, MaxObjects: 3}, func(fn.Object) error { read++; return nil })
	require.NoError(t, err)
	assert.Equal(t, 3, read)

	read = 0
	err = readObjects(three, "three.yaml", ReadLimits{MaxNodes: 1 << 30, MaxDocuments: 2, MaxObjects: 5}, func(fn.Object) error { read++; return nil })
	assert.EqualError(t, err, "three.yaml: holds up to 3 documents, bringing the input over the ceiling of 5 objects (--max-objects)")
	assert.Zero(t, read, "nothing parsed")
}
