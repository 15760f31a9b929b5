package krmio

import (
	"math"
	"strings"

	"github.com/fedlearner/flapp-services/internal/yamlnodes"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Anchors are document-scoped: an item of a List or a ResourceList may alias
// an anchor of an earlier item, and go-yaml's tree keeps the alias as a
// pointer to that other item's node. Whatever reads or writes one item on
// its own loses the anchor: fn writes an FLApp back as YAML text and has
// sigs.k8s.io/yaml read it (kubectl's reading), which fails with "unknown
// anchor", its metadata checks see an alias where a mapping or a string
// belongs, and a render writes each item of a List as a document of its own,
// where the alias names nothing. Inline gives such an item as it reads alone.

// Inline returns item as it reads on its own. When every alias in item names
// an anchor inside item, that is item itself, and n is 0. Otherwise it is a
// copy of item in which each alias naming an anchor outside item is replaced
// by a copy of that anchor's node, every alias in it expanded and no anchor
// kept, placed where the alias was; aliases to anchors inside item stay
// aliases (to the copy's anchors). n is then the copy's nodes, counted first
// without expanding anything (yamlnodes.Expanded): when they are over limit,
// nothing is built, node is nil and n is over limit, so an alias bomb spread
// over items costs one pass over its own nodes.
func Inline(item *yaml.Node, limit int) (node *yaml.Node, n int) {
	if !(&anchors{}).foreignAlias(item) {
		return item, 0
	}
	if n = (&anchors{}).inlinedNodes(item, limit); n > limit {
		return nil, n
	}
	return (&inliner{copies: map[*yaml.Node]*yaml.Node{}}).copy(item), n
}

// anchors are the anchored nodes of an item met so far by a walk in document
// order: an anchor comes before every alias to it, so the walk meets it
// first. The set is made at the first anchor; most items have none.
type anchors struct{ inside map[*yaml.Node]bool }

func (a *anchors) add(n *yaml.Node) {
	if n.Anchor == "" {
		return
	}
	if a.inside == nil {
		a.inside = map[*yaml.Node]bool{}
	}
	a.inside[n] = true // before its children: an alias inside its own anchor is no way out
}

// foreignAlias says whether an alias under n names an anchor not under n.
func (a *anchors) foreignAlias(n *yaml.Node) bool {
	if n.Kind == yaml.AliasNode {
		return !a.inside[n.Alias]
	}
	a.add(n)
	for _, c := range n.Content {
		if a.foreignAlias(c) {
			return true
		}
	}
	return false
}

// inlinedNodes counts the nodes Inline's copy of n has, stopping once past
// limit.
func (a *anchors) inlinedNodes(n *yaml.Node, limit int) int {
	if n.Kind == yaml.AliasNode {
		if a.inside[n.Alias] || n.Alias == nil {
			return 1
		}
		return yamlnodes.Expanded(n.Alias, limit)
	}
	a.add(n)
	c := 1
	for _, child := range n.Content {
		if c += a.inlinedNodes(child, limit-c); c > limit {
			break
		}
	}
	return c
}

// inliner builds Inline's copy. copies maps each anchored node of the item
// to its copy, for the aliases that stay.
type inliner struct {
	copies map[*yaml.Node]*yaml.Node
}

func (in *inliner) copy(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode {
		if c, ok := in.copies[n.Alias]; ok || n.Alias == nil {
			a := *n
			if ok {
				a.Alias = c
			}
			return &a
		}
		// The anchor's value where the alias was, with what was written
		// there: its place and comments.
		c := expandedCopy(n.Alias)
		c.Line, c.Column = n.Line, n.Column
		c.HeadComment, c.LineComment, c.FootComment = n.HeadComment, n.LineComment, n.FootComment
		return c
	}
	c := *n
	if n.Anchor != "" {
		in.copies[n] = &c
	}
	if n.Content != nil {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, child := range n.Content {
			c.Content[i] = in.copy(child)
		}
	}
	return &c
}

// expandedCopy copies n with every alias expanded and no anchor: n reads the
// same wherever it is put. Inline has counted it, so it is finite.
func expandedCopy(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	c := *n
	c.Anchor = ""
	if n.Content != nil {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, child := range n.Content {
			c.Content[i] = expandedCopy(child)
		}
	}
	return &c
}

// inlineItems makes every item that is read, and written, on its own out of
// the document node n read alone (Inline), in place: the items of a List or
// ResourceList alone in its file, which kio unwraps (unwrap says n is one),
// and the items of a v1 List, which internal/cli's reader reads as objects,
// down through the items that are v1 Lists in turn. budget is how many nodes
// the copies may add to the document; it returns what is left of it, or -1
// (nothing more is copied) when they would add more.
func inlineItems(n *yaml.Node, unwrap bool, budget int) int {
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if list := scalarAt(n, "kind") == "List" && scalarAt(n, "apiVersion") == "v1"; !unwrap && !list {
		return budget
	}
	items := valueAt(n, "items")
	if items == nil || items.Kind != yaml.SequenceNode {
		return budget
	}
	for j, item := range items.Content {
		written := CountNodes(item, math.MaxInt)
		view, c := Inline(item, saturatingAdd(written, budget))
		if view == nil {
			return -1
		}
		if view != item {
			budget -= c - written
			items.Content[j] = view
		}
		if budget = inlineItems(view, false, budget); budget < 0 {
			return -1
		}
	}
	return budget
}

// valueAt is the value of key in the mapping m, or nil.
func valueAt(m *yaml.Node, key string) *yaml.Node {
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Kind == yaml.ScalarNode && m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// scalarAt is the value of the scalar at key in the mapping m, or "".
func scalarAt(m *yaml.Node, key string) string {
	if v := valueAt(m, key); v != nil && v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}

// hasAliases says whether YAML text may hold an alias: never without both an
// anchor's '&' and an alias's '*'.
func hasAliases(s string) bool { return strings.ContainsRune(s, '&') && strings.ContainsRune(s, '*') }

func saturatingAdd(a, b int) int {
	if b > 0 && a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}

func saturatingSub(a, b int) int {
	if b > a {
		return 0
	}
	return a - b
}
