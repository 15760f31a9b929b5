package kustomize

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/fedlearner/flapp-services/internal/yamlnodes"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// yamlProblem says what makes data, a YAML stream the build parses, cost
// more than the node ceiling allows: a document over it as written
// (counted on its bytes, nothing parsed), or once its aliases are expanded
// (kustomize's reader expands them). "" when nothing does. A stream that
// does not parse is left to the reader that parses it, which says so.
func yamlProblem(data []byte, limit int) string {
	for i, doc := range splitDocuments(data) {
		if n := yamlnodes.Bound(doc); n > limit {
			return fmt.Sprintf("document %d has up to %d YAML nodes, over the ceiling of %d per document (--max-document-nodes)", i+1, n, limit)
		}
	}
	if !hasAliases(string(data)) {
		return ""
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for i := 1; ; i++ {
		var n yaml.Node
		if err := dec.Decode(&n); err != nil {
			return ""
		}
		if yamlnodes.Expanded(&n, limit) > limit {
			return fmt.Sprintf("document %d has over %d YAML nodes once its aliases are expanded, over the ceiling per document (--max-document-nodes)", i, limit)
		}
	}
}

// objectProblem says which document of data, a file of resources, is an
// object over the object node ceiling (a List's items are objects, not it):
// the render would refuse it after the build, and kustomize's time on one
// object grows faster than its size. Only documents whose byte bound is
// over the ceiling, or that may hold aliases, are parsed.
func objectProblem(data []byte, limit int) string {
	for i, doc := range splitDocuments(data) {
		if yamlnodes.Bound(doc) <= limit && !hasAliases(doc) {
			continue
		}
		var n yaml.Node
		if yaml.NewDecoder(strings.NewReader(doc)).Decode(&n) != nil {
			continue // kustomize says what is wrong
		}
		if strings.HasSuffix(yaml.NewRNode(&n).GetKind(), "List") {
			continue
		}
		if yamlnodes.Expanded(&n, limit) > limit {
			return fmt.Sprintf("document %d is an object of over %d YAML nodes (--max-object-nodes): no Kubernetes object is that large; split it", i+1, limit)
		}
	}
	return ""
}

// checkYAML records a problem when data, the file name (or an inline
// entry: ""), is over the node ceiling, and says whether it is within it.
func (b *Root) checkYAML(chain *chain, entry, name string, data []byte) bool {
	msg := yamlProblem(data, b.limits.MaxDocumentNodes)
	switch {
	case msg == "":
		return true
	case name != "":
		b.problem(chain, entry, "%s: %s", name, msg)
	default:
		b.problem(chain, entry, "%s", msg)
	}
	return false
}

// checkInline checks the YAML a kustomization holds inside its strings
// (inline patches, generators, transformers), which kustomize parses in
// turn: an alias bomb in a block scalar costs nothing until then. The
// kustomization file's own bytes already bound their nodes as written.
func (b *Root) checkInline(chain *chain, content []byte) {
	var doc yaml.Node
	if yaml.NewDecoder(bytes.NewReader(content)).Decode(&doc) != nil {
		return
	}
	var walk func(n *yaml.Node, at string)
	walk = func(n *yaml.Node, at string) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, at)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				walk(n.Content[i+1], strings.TrimPrefix(at+"."+n.Content[i].Value, "."))
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, fmt.Sprintf("%s[%d]", at, i))
			}
		case yaml.ScalarNode:
			if hasAliases(n.Value) {
				b.checkYAML(chain, at, "", []byte(n.Value))
			}
		}
	}
	walk(&doc, "")
}

// splitDocuments splits a YAML stream at its document separators, by
// lines, without parsing.
func splitDocuments(data []byte) []string {
	s := string(data)
	var docs []string
	start := 0
	for i := 0; i < len(s); {
		end := strings.IndexByte(s[i:], '\n')
		if end < 0 {
			end = len(s)
		} else {
			end += i
		}
		line := strings.TrimRight(s[i:end], "\r")
		if line == "---" || strings.HasPrefix(line, "--- ") {
			docs = append(docs, s[start:i])
			start = end + 1
		}
		i = end + 1
	}
	if start < len(s) {
		docs = append(docs, s[start:])
	}
	return docs
}

// countObjects counts the objects kustomize makes of a file of resources:
// one a document, each item of a List.
func countObjects(data []byte) int64 {
	if !bytes.Contains(data, []byte("items:")) {
		var n int64
		for _, doc := range splitDocuments(data) {
			if strings.TrimSpace(doc) != "" {
				n++
			}
		}
		return n
	}
	var n int64
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if err == io.EOF {
			return n
		}
		if err != nil {
			return n + 1 // kustomize says what is wrong
		}
		items := yaml.NewRNode(&doc).Field("items")
		if kind := yaml.NewRNode(&doc).GetKind(); strings.HasSuffix(kind, "List") && items != nil && items.Value.YNode().Kind == yaml.SequenceNode {
			n += int64(len(items.Value.YNode().Content))
		} else {
			n++
		}
	}
}

// hasAliases says whether YAML text may hold an alias: never without both
// an anchor's '&' and an alias's '*'.
func hasAliases(s string) bool { return strings.ContainsRune(s, '&') && strings.ContainsRune(s, '*') }
