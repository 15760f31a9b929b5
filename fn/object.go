package fn

import (
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Object is one input item and where it was read: render mode reads it from
// a file, KRM mode from a ResourceList. Every message about it names its
// Origin.
type Object struct {
	Node   *yaml.RNode
	Origin Origin
	// SeqIndent is how the object's document indents sequences ("wide" or
	// "compact"), as render mode's reader found it and its writer writes
	// it again; "" is compact. KRM mode leaves it to kyaml's annotation.
	SeqIndent string
}

// Origin is where an object was read.
type Origin struct {
	// File is the file as named from its PATH (render mode), or by the
	// item's path annotation (KRM mode, when kpt set one); "" when unknown.
	File string
	// Document is the object's document in File, from 1; 0 when unknown.
	Document int
	// Line is the line of File the object starts on; 0 when unknown (KRM
	// mode: the lines of a ResourceList mean nothing to its author).
	Line int
	// Listed says the object is Item (from 0) of a v1 List (render mode),
	// or of the ResourceList's items (KRM mode, when File is unknown).
	Listed bool
	Item   int
	// Build is the kustomization whose build produced the object, when it
	// came from one; File is then the file the build read it from, if known.
	Build string
	// Chain is the kustomization files from the root's to the one a
	// problem of a build is about, the root's as File would name it, each
	// other as the one before refers to it (../../base/kustomization.yaml);
	// it stands for File.
	Chain []string
	// BuildOutput says the object is the output of that build, which ran
	// flapp-services' own entries at their places among its transformers:
	// it is output as it is, and a Service among them is not this run's to
	// replace or prune.
	BuildOutput bool
}

// String names the origin for a message: "apps/a.yaml: document 2 (line
// 14)", "export.yaml: document 1, items[3] (line 40)", "items[3]" (a
// ResourceList item without a file), "base/a.yaml (in the build of
// overlays/prod)".
func (o Origin) String() string {
	var b strings.Builder
	b.WriteString(o.File)
	b.WriteString(strings.Join(o.Chain, " → "))
	if o.Document > 0 {
		if b.Len() > 0 {
			b.WriteString(": ")
		}
		b.WriteString("document " + strconv.Itoa(o.Document))
	}
	if o.Listed {
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString("items[" + strconv.Itoa(o.Item) + "]")
	}
	if o.Line > 0 {
		b.WriteString(" (line " + strconv.Itoa(o.Line) + ")")
	}
	if o.Build != "" {
		if b.Len() > 0 {
			b.WriteString(" ")
		}
		b.WriteString("(in the build of " + o.Build + ")")
	}
	return b.String()
}

// ItemObject is the i-th item of a ResourceList: its origin is its file and
// document when kpt annotated them, its place in the list otherwise.
func ItemObject(i int, node *yaml.RNode) Object {
	if node == nil || node.YNode().Kind != yaml.MappingNode {
		return Object{Node: node, Origin: Origin{Listed: true, Item: i}}
	}
	file := fileAnnotation(node)
	if file == "" {
		return Object{Node: node, Origin: Origin{Listed: true, Item: i}}
	}
	o := Origin{File: file}
	index := annotationOf(node, kioutil.IndexAnnotation)
	if index == "" {
		index = annotationOf(node, kioutil.LegacyIndexAnnotation)
	}
	if n, err := strconv.Atoi(index); err == nil && n >= 0 {
		o.Document = n + 1
	}
	return Object{Node: node, Origin: o}
}
