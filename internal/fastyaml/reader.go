package fastyaml

import (
	"bytes"
	"fmt"
	"io"
	"iter"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unsafe"

	"github.com/fedlearner/flapp-services/internal/nodes"
	kerrors "sigs.k8s.io/kustomize/kyaml/errors"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Document is one node of a file as kio.ByteReader.Read returns it, with
// where it starts.
type Document struct {
	Node  *yaml.RNode
	Index int // the document's index in the file, from 0
	Line  int // the file's line the node starts on
	// Item is the node's index among the items of a List or ResourceList
	// alone in its file, which kio unwraps; -1 for a document's own node.
	Item int
	// Nodes is how many YAML nodes the object has as written: the reader's
	// annotations are not counted.
	Nodes int
}

// CountNodes counts n's nodes, stopping once past limit.
func CountNodes(n *yaml.Node, limit int) int {
	c := 1
	for _, child := range n.Content {
		if c += CountNodes(child, limit-c); c > limit {
			return c
		}
	}
	return c
}

// ReadDocuments yields every node that kio.ByteReader{Reader: data,
// PreserveSeqIndent: true, SetAnnotations: annotations}.Read() returns, in
// its order, but decodes one document at a time, so only one document's
// tree is alive at once (plus what the caller keeps). Before the first
// document is decoded, every document's nodes are bounded by counting bytes
// (nodes.Bound): a document over limits.MaxNodes is refused before anything
// of the file is built.
//
// The items of a List, which are read (and written) one at a time, are
// made to read alone (inlineItems): kio keeps an alias to another item's
// anchor, which means nothing once the item is on its own. The copies that
// takes are held, with the document as written, to limits.MaxNodes, counted
// before any is made.
//
// Its errors are *DocumentError when they concern one document (they give
// the file's own line, where kyaml counts lines from the document's start)
// and *DocumentsError for a file over limits.MaxDocuments. It stops after
// the first error. It reads data in place: the caller must not change data
// until the iteration ends.
func ReadDocuments(data []byte, annotations map[string]string, limits ReadLimits) iter.Seq2[Document, error] {
	return func(yield func(Document, error) bool) {
		// ByteReader.Read: Windows line ends replaced, split at document
		// separators.
		input := text(data)
		values, starts, err := splitDocuments(input)
		if err != nil {
			yield(Document{}, err)
			return
		}
		if len(values) > limits.MaxDocuments {
			yield(Document{}, &DocumentsError{Documents: len(values)})
			return
		}
		last := len(values) - 1
		for i := range values {
			value := values[i]
			if i != last {
				value = value[:len(value)-1] // the bound as kio's document: without its last '\n'
			}
			if n := nodes.Bound(value); n > limits.MaxNodes {
				yield(Document{}, &DocumentError{Index: i, Line: starts[i], Nodes: n, MaxNodes: limits.MaxNodes})
				return
			}
		}
		index := 0
		for i := range values {
			fail := func(err error) { yield(Document{}, &DocumentError{Index: i, Line: starts[i], Err: err}) }
			node, nodes, err := decodeDocument(values[i], index, annotations)
			if err == io.EOF {
				continue
			}
			if err != nil {
				fail(err)
				return
			}
			if yaml.IsMissingOrNull(node) {
				continue
			}
			meta, err := node.GetMeta()
			if err != yaml.ErrMissingMetadata && err != nil {
				fail(err)
				return
			}
			// A List or ResourceList alone in its file is unwrapped.
			alone := len(values) == 1 && (meta.Kind == kio.ResourceListKind || meta.Kind == "List") &&
				(node.Field("items") != nil || node.Field("functionConfig") != nil)
			if hasAliases(values[i]) {
				// Its items are read, and written, one at a time: each must
				// read alone, within the document's ceiling.
				if inlineItems(node.YNode(), alone, saturatingSub(limits.MaxNodes, nodes)) < 0 {
					yield(Document{}, &DocumentError{Index: i, Line: starts[i], Err: fmt.Errorf(
						"holds over %d YAML nodes once the aliases its items make to anchors of other items are expanded (each item is read, and written, on its own), over the ceiling per document (--max-document-nodes)",
						limits.MaxNodes)})
					return
				}
			}
			if alone {
				if items := node.Field("items"); items != nil {
					for j, item := range items.Value.Content() {
						if !yield(Document{Node: yaml.NewRNode(item), Index: i, Line: starts[i] + item.Line - 1, Item: j, Nodes: CountNodes(item, math.MaxInt)}, nil) {
							return
						}
					}
				}
				continue
			}
			if !yield(Document{Node: node, Index: i, Line: starts[i] + firstLine(node.YNode()) - 1, Item: -1, Nodes: nodes}, nil) {
				return
			}
			index++
		}
	}
}

// firstLine is the line of the document a node starts on, from 1: where its
// first key or value is (a mapping's own line is that of its first key).
func firstLine(n *yaml.Node) int {
	if n.Line > 0 {
		return n.Line
	}
	return 1
}

// ReadLimits bound what ReadDocuments parses: checked on the bytes, before
// any document is.
type ReadLimits struct {
	MaxNodes     int // per document, as nodes.Bound counts them
	MaxDocuments int // in the file: each document costs memory to split and parse, however small (SECURITY.md, Known limits)
}

// DocumentsError is a file over ReadLimits.MaxDocuments.
type DocumentsError struct{ Documents int }

func (e *DocumentsError) Error() string {
	return fmt.Sprintf("the file holds up to %d documents", e.Documents)
}

// decodeDocument is ByteReader.decode with PreserveSeqIndent and the given
// annotations.
// It also returns the document's nodes as written, before the annotations.
func decodeDocument(value string, index int, annotations map[string]string) (*yaml.RNode, int, error) {
	node := &yaml.Node{}
	if err := yaml.NewDecoder(strings.NewReader(value)).Decode(node); err != nil {
		if err == io.EOF {
			return nil, 0, io.EOF
		}
		if m := unknownAnchor.FindStringSubmatch(err.Error()); m != nil {
			return nil, 0, unknownAnchorError(value, m[1])
		}
		return nil, 0, kerrors.WrapPrefixf(err, "MalformedYAMLError")
	}
	if yaml.IsYNodeEmptyDoc(node) {
		return nil, 0, nil
	}
	n := yaml.NewRNode(node)
	written := CountNodes(n.YNode(), math.MaxInt)
	if err := kioutil.CopyLegacyAnnotations(n); err != nil {
		return nil, 0, notAnObject(n, err)
	}
	set := make(map[string]string, len(annotations)+3)
	for k, v := range annotations {
		set[k] = v
	}
	set[kioutil.IndexAnnotation] = strconv.Itoa(index)
	set[kioutil.LegacyIndexAnnotation] = strconv.Itoa(index)
	if style := yaml.DeriveSeqIndentStyle(value); style != "" {
		set[kioutil.SeqIndentAnnotation] = style
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, err := n.Pipe(yaml.SetAnnotation(k, set[k])); err != nil {
			return nil, 0, notAnObject(n, kerrors.Wrap(err))
		}
	}
	return n, written, nil
}

// unknownAnchor is go.yaml.in/yaml/v3's error for an alias to an anchor the
// document has not defined before it, which names no line.
var unknownAnchor = regexp.MustCompile(`^yaml: unknown anchor '(.*)' referenced$`)

// unknownAnchorError says which line of the document value holds the alias
// *name that names no anchor (as go-yaml names a line, from the document's
// start), and why: an anchor holds only from where it is defined to the end
// of its document.
func unknownAnchorError(value, name string) error {
	const why = "an alias names an anchor defined before it in the same document; anchors do not reach across documents (---)"
	if line := aliasLine(value, name); line > 0 {
		return fmt.Errorf("yaml: line %d: unknown anchor '%s' referenced: %s", line, name, why)
	}
	return fmt.Errorf("yaml: unknown anchor '%s' referenced: %s", name, why)
}

// aliasLine is the line, from 1, of the first *name in value that stands
// where a node does (after a blank, a line start or a flow indicator, and
// ending the name), or 0.
func aliasLine(value, name string) int {
	token := "*" + name
	for at := 0; ; {
		i := strings.Index(value[at:], token)
		if i < 0 {
			return 0
		}
		i += at
		end := i + len(token)
		before := i == 0 || strings.IndexByte(" \t\n[{,", value[i-1]) >= 0
		after := end == len(value) || strings.IndexByte(" \t\r\n,]}", value[end]) >= 0
		if before && after {
			return 1 + strings.Count(value[:i], "\n")
		}
		at = i + 1
	}
}

// notAnObject says what a document that cannot carry annotations is, where
// kyaml's error would repeat the whole document.
func notAnObject(n *yaml.RNode, err error) error {
	if kind := n.YNode().Kind; kind != yaml.MappingNode {
		return fmt.Errorf("not a Kubernetes object: a YAML %s where a mapping with apiVersion and kind belongs", nodeKindName(kind))
	}
	return err
}

// text is the input as kio's ByteReader.Read has it, Windows line ends
// replaced. kio copies it; here, when there is nothing to replace, it is the
// caller's bytes, which are not changed while the documents are read: that
// saves a copy of up to a whole file (--max-file-size) for as long as its
// documents are read.
func text(data []byte) string {
	if !bytes.Contains(data, []byte("\r\n")) {
		return unsafe.String(unsafe.SliceData(data), len(data))
	}
	return strings.ReplaceAll(string(data), "\r\n", "\n")
}

var separatorLine = regexp.MustCompile(`\n---.*\n`)

// splitDocuments is kio's splitDocuments, also returning the line each
// document starts on. Each document but the last keeps its final '\n', which
// matters in a literal: kio's split eats it and ByteReader.Read appends it
// again, copying the document.
func splitDocuments(s string) (docs []string, lines []int, err error) {
	if len(s) == 0 {
		return nil, nil, nil
	}
	prev, line := 0, 1
	for _, loc := range separatorLine.FindAllStringIndex(s, -1) {
		sep := s[loc[0]:loc[1]]
		if rest := strings.TrimSpace(sep[4:]); len(rest) > 0 && rest[0] != '#' {
			return nil, nil, &DocumentError{Index: len(docs) + 1, Line: line + strings.Count(s[prev:loc[0]+1], "\n"),
				Err: fmt.Errorf("invalid document separator: %s", strings.TrimSpace(sep))}
		}
		docs, lines = append(docs, s[prev:loc[0]+1]), append(lines, line)
		line += strings.Count(s[prev:loc[1]], "\n")
		prev = loc[1]
	}
	return append(docs, s[prev:]), append(lines, line), nil
}

// DocumentError is an error in one document of a file: it cannot be read,
// or it is over the node ceiling (Err is nil, Nodes and MaxNodes say by how
// much).
type DocumentError struct {
	Index    int // of the document in the file, from 0
	Line     int // the file's line the document starts on
	Err      error
	Nodes    int
	MaxNodes int
}

func (e *DocumentError) Error() string {
	return fmt.Sprintf("document %d (line %d): %s", e.Index+1, e.Line, e.Reason())
}

// Reason is the error without the document's place: the parser's message
// with the file's line numbers, or the ceiling passed.
func (e *DocumentError) Reason() string {
	if e.Err == nil {
		return fmt.Sprintf("may hold up to %d YAML nodes, over the ceiling of %d per document", e.Nodes, e.MaxNodes)
	}
	return fileLines(e.Err.Error(), e.Line)
}

func (e *DocumentError) Unwrap() error { return e.Err }

// yamlLine is how go.yaml.in/yaml/v3 names a line: from the document's start.
var yamlLine = regexp.MustCompile(`\byaml: line (\d+):`)

// fileLines rewrites the parser's line numbers into the file's.
func fileLines(msg string, start int) string {
	return yamlLine.ReplaceAllStringFunc(msg, func(m string) string {
		n, err := strconv.Atoi(yamlLine.FindStringSubmatch(m)[1])
		if err != nil {
			return m
		}
		return fmt.Sprintf("yaml: line %d:", start+n-1)
	})
}

// nodeKindName says what a YAML node is, for a message.
func nodeKindName(k yaml.Kind) string {
	switch k {
	case yaml.ScalarNode:
		return "scalar"
	case yaml.SequenceNode:
		return "sequence"
	case yaml.AliasNode:
		return "alias"
	}
	return "node"
}
