package krmio

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/fedlearner/flapp-services/fn"
	"github.com/fedlearner/flapp-services/internal/yamlnodes"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

// sharedAnchors is a List whose items alias anchors of earlier items, as
// PyYAML writes objects that share a value: a whole mapping, a scalar, a
// merge key, an alias inside the item's own anchor, an alias to an anchor
// that itself holds an alias to an earlier item, and comments where an
// alias stands.
const sharedAnchors = `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: &name shared
    namespace: &ns default
    labels: &labels {team: a, tier: "1"}
  data:
    peer: &peer follower.example.com:8100
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: second
    namespace: *ns
    labels: *labels # the first item's labels
  data: &data
    peer: *peer
    other: x
- apiVersion: v1
  kind: ConfigMap
  metadata:
    <<: {namespace: *ns}
    name: *name
    annotations: &own {a: *peer}
    labels: *own
  data: *data
`

// wholeReading is each item of doc as go-yaml reads the whole document,
// every alias resolved: what kyaml's reader holds, and what the item means.
func wholeReading(t *testing.T, doc string) []any {
	t.Helper()
	var whole struct {
		Items []any `yaml:"items"`
	}
	require.NoError(t, yaml.NewDecoder(strings.NewReader(doc)).Decode(&whole))
	return whole.Items
}

// aloneReading is n written out on its own and read back, as fn and a
// render do with one item: by go-yaml and by kubectl's reader
// (sigs.k8s.io/yaml), which must agree.
func aloneReading(t *testing.T, n *yaml.Node) (any, string) {
	t.Helper()
	var text bytes.Buffer
	enc := yaml.NewEncoder(&text)
	require.NoError(t, enc.Encode(n))
	require.NoError(t, enc.Close())
	var v any
	require.NoError(t, yaml.Unmarshal(text.Bytes(), &v), "the item reads alone:\n%s", text.String())
	_, err := sigsyaml.YAMLToJSON(text.Bytes())
	require.NoError(t, err, "kubectl reads the item alone:\n%s", text.String())
	return v, text.String()
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func parseDoc(t *testing.T, doc string) *yaml.Node {
	t.Helper()
	var n yaml.Node
	require.NoError(t, yaml.NewDecoder(strings.NewReader(doc)).Decode(&n))
	return n.Content[0]
}

// TestInlineReadsAsTheWholeDocument: each item of a List, made to read alone
// by Inline, reads as the same item does in the whole document; the items
// are not changed, and an item with no alias out of it is not copied.
func TestInlineReadsAsTheWholeDocument(t *testing.T) {
	want := wholeReading(t, sharedAnchors)
	items := valueAt(parseDoc(t, sharedAnchors), "items").Content
	require.Len(t, items, 3)
	before := make([]string, len(items))
	for i, item := range items {
		before[i] = nodeText(t, item)
	}

	first, n := Inline(items[0], math.MaxInt)
	assert.Same(t, items[0], first, "nothing to inline: the item itself")
	assert.Zero(t, n)

	for i, item := range items[1:] {
		copied, n := Inline(item, math.MaxInt)
		require.NotNil(t, copied)
		require.NotSame(t, item, copied, "item %d aliases an earlier item", i+1)
		assert.Equal(t, CountNodes(copied, math.MaxInt), n, "n is the copy's nodes")
		got, text := aloneReading(t, copied)
		assert.Equal(t, asJSON(t, want[i+1]), asJSON(t, got), "item %d:\n%s", i+1, text)
		assert.NotContains(t, text, "*ns", "no alias out of the item is left")
		assert.NotContains(t, text, "&name", "no anchor comes with a copied value")
	}
	for i, item := range items {
		assert.Equal(t, before[i], nodeText(t, item), "item %d unchanged", i)
	}
}

// TestInlineKeepsWhatIsWritten: a copied value stands where the alias was,
// with the alias's comment, and an alias to the item's own anchor stays an
// alias, now to the copy's anchor.
func TestInlineKeepsWhatIsWritten(t *testing.T) {
	items := valueAt(parseDoc(t, sharedAnchors), "items").Content
	second, _ := Inline(items[1], math.MaxInt)
	assert.Equal(t, `apiVersion: v1
kind: ConfigMap
metadata:
  name: second
  namespace: default
  labels: {team: a, tier: "1"} # the first item's labels
data: &data
  peer: follower.example.com:8100
  other: x
`, nodeText(t, second))

	third, _ := Inline(items[2], math.MaxInt)
	labels := valueAt(valueAt(third, "metadata"), "labels")
	require.Equal(t, yaml.AliasNode, labels.Kind, "an alias to the item's own anchor stays")
	assert.Same(t, valueAt(valueAt(third, "metadata"), "annotations"), labels.Alias, "and names the copy's anchor")
	assert.Equal(t, yaml.MappingNode, valueAt(third, "data").Kind, "an alias to another item's anchor is its value")
}

// TestInlineRefusesABombWithoutBuildingIt: a billion laughs spread over the
// items of a List (each level an item) is counted, not expanded, and
// refused; so is an anchor that holds itself.
func TestInlineRefusesABombWithoutBuildingIt(t *testing.T) {
	items := valueAt(parseDoc(t, aliasBombList(9)), "items").Content
	copied, n := Inline(items[len(items)-1], 100000)
	assert.Nil(t, copied)
	assert.Greater(t, n, 100000)
	copied, n = Inline(items[3], 100000)
	require.NotNil(t, copied, "10^3 nodes are within the ceiling")
	assert.Equal(t, CountNodes(copied, math.MaxInt), n)

	items = valueAt(parseDoc(t, "kind: List\nitems:\n- &a [*a]\n- {x: *a}\n"), "items").Content
	copied, n = Inline(items[1], 1000)
	assert.Nil(t, copied, "no finite expansion")
	assert.Greater(t, n, 1000)
}

// aliasBombList is a List of levels+1 ConfigMaps, each holding ten aliases
// of the one before: 10^levels strings once expanded, in about 100 bytes a
// level.
func aliasBombList(levels int) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: c0}, data: {x: &a0 [x, x, x, x, x, x, x, x, x, x]}}\n")
	for i := 1; i <= levels; i++ {
		prev := fmt.Sprintf("*a%d", i-1)
		fmt.Fprintf(&b, "- {apiVersion: v1, kind: ConfigMap, metadata: {name: c%d}, data: {x: &a%d [%s]}}\n", i, i, strings.TrimSuffix(strings.Repeat(prev+", ", 10), ", "))
	}
	return b.String()
}

func nodeText(t *testing.T, n *yaml.Node) string {
	t.Helper()
	s, err := yaml.NewRNode(n).String()
	require.NoError(t, err)
	return s
}

func readAll(t *testing.T, data string, limits ReadLimits) ([]Document, error) {
	t.Helper()
	var docs []Document
	for doc, err := range ReadDocuments([]byte(data), "f.yaml", limits) {
		if err != nil {
			return docs, err
		}
		docs = append(docs, doc)
	}
	return docs, nil
}

var noLimits = ReadLimits{MaxNodes: math.MaxInt, MaxDocuments: math.MaxInt}

// TestReadDocumentsInlinesListItems: the items of a List, which a render
// reads and writes one at a time, each read as in the whole document, alone
// in its file (kio unwraps it) or among other documents (internal/cli's
// reader expands it); an item's Nodes are its copy's.
func TestReadDocumentsInlinesListItems(t *testing.T) {
	want := wholeReading(t, sharedAnchors)

	docs, err := readAll(t, sharedAnchors, noLimits)
	require.NoError(t, err)
	require.Len(t, docs, 3)
	for i, doc := range docs {
		assert.Equal(t, i, doc.Item)
		assert.Equal(t, CountNodes(doc.Node.YNode(), math.MaxInt), doc.Nodes)
		got, text := aloneReading(t, doc.Node.YNode())
		assert.Equal(t, asJSON(t, want[i]), asJSON(t, got), "item %d:\n%s", i, text)
	}
	assert.Equal(t, 12, docs[1].Line, "an item's line is where it was written")

	// Among other documents, in a List nested in a List.
	nested := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: before}\n---\n" +
		"apiVersion: v1\nkind: List\nitems:\n- " + strings.ReplaceAll(strings.TrimSuffix(sharedAnchors, "\n"), "\n", "\n  ") + "\n"
	docs, err = readAll(t, nested, noLimits)
	require.NoError(t, err)
	require.Len(t, docs, 2)
	inner := valueAt(valueAt(docs[1].Node.YNode(), "items").Content[0], "items").Content
	require.Len(t, inner, 3)
	for i, item := range inner {
		got, text := aloneReading(t, item)
		assert.Equal(t, asJSON(t, want[i]), asJSON(t, got), "nested item %d:\n%s", i, text)
	}
}

// TestReadDocumentsLeavesOtherAliases: a document that is read whole keeps
// its aliases as kio reads them (a render writes them back), and so does a
// list that is not a v1 List.
func TestReadDocumentsLeavesOtherAliases(t *testing.T) {
	for _, data := range []string{
		"a: &x {b: 1}\nc: *x\n---\nd: 1\n",
		"apiVersion: v1\nkind: ConfigMapList\nitems:\n- {a: &x 1}\n- {b: *x}\n---\nd: 1\n",
		"apiVersion: v2\nkind: List\nitems:\n- {a: &x 1}\n- {b: *x}\n---\nd: 1\n",
	} {
		docs, err := readAll(t, data, noLimits)
		require.NoError(t, err)
		assert.Contains(t, nodeText(t, docs[0].Node.YNode()), "*x", data)
	}
}

// TestReadDocumentsRefusesAnAliasBombAcrossItems: the copies a List's items
// need are held to the document's ceiling, counted before any is built, and
// the error names the flag.
func TestReadDocumentsRefusesAnAliasBombAcrossItems(t *testing.T) {
	for _, data := range []string{
		aliasBombList(9),
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n" + aliasBombList(9),
	} {
		docs, err := readAll(t, data, ReadLimits{MaxNodes: 600000, MaxDocuments: 100})
		var de *fn.InputError
		require.ErrorAs(t, err, &de)
		assert.Equal(t, strings.Count(data, "---")+1, de.Origin.Document)
		assert.Contains(t, de.Err.Error(), "over the ceiling per document (--max-document-nodes)")
		assert.Contains(t, de.Err.Error(), "600000 YAML nodes once the aliases its items make to anchors of other items are expanded")
		for _, doc := range docs {
			assert.Less(t, doc.Nodes, 100, "nothing large was built")
		}
	}

	// The ceiling counts the document as read: what it holds as written,
	// plus what the copies add (each alias of the 40 numbers becomes 41
	// nodes where it was one).
	small := "apiVersion: v1\nkind: List\nitems:\n- {a: &x [" + strings.TrimSuffix(strings.Repeat("1, ", 40), ", ") + "]}\n" +
		strings.Repeat("- {b: *x}\n", 5)
	asRead := CountNodes(parseDoc(t, small), math.MaxInt) + 5*40
	require.Less(t, yamlnodes.Bound(small), asRead, "the byte bound alone admits the document")
	_, err := readAll(t, small, ReadLimits{MaxNodes: asRead, MaxDocuments: 1})
	assert.NoError(t, err)
	_, err = readAll(t, small, ReadLimits{MaxNodes: asRead - 1, MaxDocuments: 1})
	assert.ErrorContains(t, err, "--max-document-nodes")
}

// TestReadDocumentsUnknownAnchorNamesItsDocument: an alias to an anchor of
// another document (anchors never cross "---"), or to one defined after it,
// is refused in go-yaml's words, which name no line, at the document's
// first line.
func TestReadDocumentsUnknownAnchorNamesItsDocument(t *testing.T) {
	for name, tc := range map[string]struct {
		data  string
		index int
		start int
		alias string
	}{
		"another document's anchor": {"a: &p 1\nb: 2\n---\nc: 3\nd:\n  e: *p\n", 1, 4, "p"},
		"defined after":             {"a: 1\n---\nb: [*q, x]\nc: &q 2\n", 1, 3, "q"},
		"in flow, first document":   {"x: {y: *r}\n", 0, 1, "r"},
		"a prefix of another alias": {"a: &p 1\n---\nb: &pp 1\nc: *pp\nd: [*pp, *p]\n", 1, 3, "p"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := readAll(t, tc.data, noLimits)
			var de *fn.InputError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, fn.Origin{File: "f.yaml", Document: tc.index + 1, Line: tc.start}, de.Origin, "where the document starts")
			assert.Equal(t, fmt.Sprintf("f.yaml: document %d (line %d): yaml: unknown anchor '%s' referenced",
				tc.index+1, tc.start, tc.alias), err.Error())
		})
	}
}
