package krmio

import (
	"fmt"
	"io"
	"iter"
	"math"
	"regexp"
	"strings"

	"github.com/fedlearner/flapp-services/fn"
	"github.com/fedlearner/flapp-services/internal/yamlnodes"
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
	// Nodes is how many YAML nodes the object has as written.
	Nodes int
	// SeqIndent is the document's sequence indentation, as kio's reader
	// derives it ("wide", "compact", or "" for a List's item, which kio
	// does not annotate): StreamWriter writes the node with it.
	SeqIndent string
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
// PreserveSeqIndent: true}.Read() returns, without the annotations it sets, in
// its order, but decodes one document at a time, so only one document's
// tree is alive at once (plus what the caller keeps). Before the first
// document is decoded, every document's nodes are bounded by counting bytes
// (yamlnodes.Bound): a document over limits.MaxNodes is refused before anything
// of the file is built.
//
// The items of a List, which are read (and written) one at a time, are
// made to read alone (inlineItems): kio keeps an alias to another item's
// anchor, which means nothing once the item is on its own. The copies that
// takes are held, with the document as written, to limits.MaxNodes, counted
// before any is made.
//
// Its errors are *fn.InputError, complete: file, document and the line it
// starts on; a document go-yaml cannot parse fails with go-yaml's own
// message, whose line is the file's (parseError). It stops after the first
// error.
func ReadDocuments(data []byte, file string, limits ReadLimits) iter.Seq2[Document, error] {
	return func(yield func(Document, error) bool) {
		// ByteReader.Read: Windows line ends replaced, split at document
		// separators.
		input := text(data)
		values, starts, err := splitDocuments(input, file)
		if err != nil {
			yield(Document{}, err)
			return
		}
		if len(values) > limits.MaxDocuments {
			yield(Document{}, &fn.InputError{Origin: fn.Origin{File: file}, Err: fmt.Errorf(
				"holds up to %d documents, bringing the input over the ceiling of %d objects (--max-objects)", len(values), limits.MaxObjects)})
			return
		}
		last := len(values) - 1
		for i := range values {
			value := values[i]
			if i != last {
				value = value[:len(value)-1] // the bound as kio's document: without its last '\n'
			}
			if n := yamlnodes.Bound(value); n > limits.MaxNodes {
				yield(Document{}, &fn.InputError{Origin: fn.Origin{File: file, Document: i + 1, Line: starts[i]}, Err: fmt.Errorf(
					"may hold up to %d YAML nodes, over the ceiling of %d per document (--max-document-nodes): split it into smaller documents or files", n, limits.MaxNodes)})
				return
			}
		}
		for i := range values {
			at := fn.Origin{File: file, Document: i + 1, Line: starts[i]}
			fail := func(err error) { yield(Document{}, &fn.InputError{Origin: at, Err: err}) }
			node, nodes, err := decodeDocument(values[i], starts[i])
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
					fail(fmt.Errorf(
						"holds over %d YAML nodes once the aliases its items make to anchors of other items are expanded (each item is read, and written, on its own), over the ceiling per document (--max-document-nodes)",
						limits.MaxNodes))
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
			doc := Document{Node: node, Index: i, Line: starts[i] + firstLine(node.YNode()) - 1, Item: -1, Nodes: nodes,
				SeqIndent: yaml.DeriveSeqIndentStyle(values[i])}
			if !yield(doc, nil) {
				return
			}
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
	MaxNodes     int // per document, as yamlnodes.Bound counts them
	MaxDocuments int // in the file: each document costs memory to split and parse, however small (SECURITY.md, Known limits)
	MaxObjects   int // the ceiling on the whole input's objects that MaxDocuments is what is left of, as messages name it
}

// decodeDocument is ByteReader.decode with PreserveSeqIndent, without the
// annotations it sets: where the node was read (file, document, line) and
// its sequence indentation travel beside it as values (Document), and
// StreamWriter writes what kio.ByteWriter writes once it has cleared them.
// It keeps kio's copy between the legacy and the current path, index and id
// annotations an object carries itself (kioutil.CopyLegacyAnnotations): the
// writer clears the first two, and writes the id as kyaml does. It also
// returns the document's nodes as written.
func decodeDocument(value string, line int) (*yaml.RNode, int, error) {
	node := &yaml.Node{}
	if err := yaml.NewDecoder(strings.NewReader(value)).Decode(node); err != nil {
		if err == io.EOF {
			return nil, 0, io.EOF
		}
		return nil, 0, parseError(value, line, err)
	}
	if yaml.IsYNodeEmptyDoc(node) {
		return nil, 0, nil
	}
	n := yaml.NewRNode(node)
	written := CountNodes(n.YNode(), math.MaxInt)
	if err := kioutil.CopyLegacyAnnotations(n); err != nil {
		return nil, 0, notAnObject(n, err)
	}
	if kind := n.YNode().Kind; kind != yaml.MappingNode {
		// kio's reader fails to annotate it.
		return nil, 0, notAnObject(n, nil)
	}
	return n, written, nil
}

// parseError is go-yaml's own error for the document value, which starts on
// the file's line: the document was parsed alone, so any line go-yaml names
// counts from the document's first line. Parsed again behind line-1 empty
// lines, which YAML reads as nothing, it fails the same way, naming the
// file's line. That second parse costs only a failed read.
func parseError(value string, line int, err error) error {
	if line <= 1 {
		return err
	}
	if again := yaml.NewDecoder(strings.NewReader(strings.Repeat("\n", line-1) + value)).Decode(&yaml.Node{}); again != nil {
		return again
	}
	return err
}

// notAnObject says what a document that cannot carry annotations is, where
// kyaml's error would repeat the whole document; err is kyaml's, for a
// mapping.
func notAnObject(n *yaml.RNode, err error) error {
	if kind := n.YNode().Kind; kind != yaml.MappingNode {
		return fmt.Errorf("not a Kubernetes object: a YAML %s where a mapping with apiVersion and kind belongs", nodeKindName(kind))
	}
	return err
}

// text is the input as kio's ByteReader.Read has it, Windows line ends
// replaced. Like kio, it copies data: a second copy of up to a whole file
// (--max-file-size) is held while its documents are read, the price of
// reading the caller's bytes without package unsafe.
func text(data []byte) string {
	return strings.ReplaceAll(string(data), "\r\n", "\n")
}

var separatorLine = regexp.MustCompile(`\n---.*\n`)

// splitDocuments is kio's splitDocuments, also returning the line each
// document starts on. Each document but the last keeps its final '\n', which
// matters in a literal: kio's split eats it and ByteReader.Read appends it
// again, copying the document.
func splitDocuments(s, file string) (docs []string, lines []int, err error) {
	if len(s) == 0 {
		return nil, nil, nil
	}
	prev, line := 0, 1
	for _, loc := range separatorLine.FindAllStringIndex(s, -1) {
		sep := s[loc[0]:loc[1]]
		if rest := strings.TrimSpace(sep[4:]); len(rest) > 0 && rest[0] != '#' {
			return nil, nil, &fn.InputError{Origin: fn.Origin{File: file, Document: len(docs) + 2, Line: line + strings.Count(s[prev:loc[0]+1], "\n")},
				Err: fmt.Errorf("invalid document separator: %s", strings.TrimSpace(sep))}
		}
		docs, lines = append(docs, s[prev:loc[0]+1]), append(lines, line)
		line += strings.Count(s[prev:loc[1]], "\n")
		prev = loc[1]
	}
	return append(docs, s[prev:]), append(lines, line), nil
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
