package yamlnodes

import (
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Bound is an upper bound on the nodes go.yaml.in/yaml/v3 builds for one
// document, counted on its bytes without parsing, so that a document is
// refused before its tree (about 170 bytes a node) is built. Every node but
// the document's own starts a line or follows an indicator: '-', '?' or
// ':' before a blank, ':' anywhere, '[', '{' or ','. A collection and its
// first entry, or an implicit key's null value, can both follow one
// indicator, so each counts twice; one document plus the first node are two
// more. The bound errs high (text with many colons or commas), never low:
// the tests hold it against the parser on every golden input and fuzzed
// documents.
func Bound(doc string) int {
	n := 2 + 2*(strings.Count(doc, ":")+strings.Count(doc, "[")+strings.Count(doc, "{")+strings.Count(doc, ","))
	for i := 0; i < len(doc); i++ {
		switch doc[i] {
		case '-', '?':
			if i+1 == len(doc) || doc[i+1] == ' ' || doc[i+1] == '\t' || doc[i+1] == '\n' || doc[i+1] == '\r' {
				n += 2
			}
		case '\n':
			n++
		}
	}
	return n
}

// Expanded counts the nodes of the tree n with every alias replaced by a
// copy of its anchor's node, as a reader that resolves aliases builds it,
// stopping once the count is over limit. It expands nothing: each node's
// count is kept, so a document of a few kilobytes whose aliases nest ten
// deep (a billion nodes once expanded) costs one pass over its own nodes.
func Expanded(n *yaml.Node, limit int) int {
	return expanded(n, limit, map[*yaml.Node]int{})
}

func expanded(n *yaml.Node, limit int, seen map[*yaml.Node]int) int {
	if c, ok := seen[n]; ok {
		return c
	}
	seen[n] = limit + 1 // an alias inside its own anchor: no finite expansion
	c := 1
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		c = expanded(n.Alias, limit, seen)
	}
	for _, child := range n.Content {
		if c += expanded(child, limit, seen); c > limit {
			break
		}
	}
	seen[n] = c
	return c
}
