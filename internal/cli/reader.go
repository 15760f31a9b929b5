package cli

import (
	"bytes"
	"fmt"
	"io"
	"iter"
	"runtime/debug"

	"github.com/fedlearner/flapp-services/fn"
	"github.com/fedlearner/flapp-services/internal/fastyaml"
	"github.com/fedlearner/flapp-services/internal/kustomize"
	"github.com/fedlearner/flapp-services/internal/loader"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

const localConfigAnnotation = "config.kubernetes.io/local-config"

// reader is the one reader of render mode and discover. It reads each
// input in order, each file's documents one at a time, expands v1 Lists,
// drops local configuration (as kustomize does), and yields every object
// with its origin. Everything a run may read is bounded here or below: the
// loader checks file sizes before anything is read, fastyaml bounds each
// document's nodes before it is parsed, and the reader counts objects and
// each object's nodes before it is kept.
type reader struct {
	ld             *loader.Loader
	stdin          io.Reader
	maxObjects     int
	maxDocNodes    int
	maxObjectNodes int
	count          int // objects read so far, all inputs together
	// entries runs the flapp-services entries of the kustomization built
	// in the directory named (as messages name it), at their place.
	entries func(buildDir string) kustomize.Entries
}

// input is one PATH of the command line: the files found below it, stdin
// ("-"), or a kustomization root, read as its build's output.
type input struct {
	files []loader.File
	stdin bool
	build *kustomize.Build
}

// source is one file's bytes and where they came from.
type source struct {
	origin fn.Origin // File, and Build for a build's output
	data   []byte
	// rendered says the bytes are a build's output, which ran
	// flapp-services' entries: its objects are the render's output as they
	// are, and its lines are no file's.
	rendered bool
}

// objects yields every object of the inputs, in input order, and stops at
// the first error.
func (r *reader) objects(inputs []input) iter.Seq2[fn.Object, error] {
	return func(yield func(fn.Object, error) bool) {
		for _, in := range inputs {
			for src, err := range r.sources(in) {
				if err != nil {
					yield(fn.Object{}, err)
					return
				}
				for obj, err := range r.file(src) {
					if !yield(obj, err) || err != nil {
						return
					}
				}
			}
		}
	}
}

// sources yields the bytes of an input's files, one file at a time.
func (r *reader) sources(in input) iter.Seq2[source, error] {
	return func(yield func(source, error) bool) {
		switch {
		case in.stdin:
			data, err := r.ld.ReadStream("<stdin>", r.stdin)
			yield(source{origin: fn.Origin{File: "<stdin>"}, data: data}, err)
		case in.build != nil:
			data, err := buildUnderItsHeapLimit(in.build, r.entries(in.build.Dir))
			if err != nil {
				err = &fn.InputError{Origin: fn.Origin{File: in.build.File}, Err: err}
			}
			yield(source{origin: fn.Origin{File: in.build.File, Build: in.build.Dir, Rendered: true}, data: data, rendered: true}, err)
		default:
			for _, f := range in.files {
				data, err := r.ld.Read(f)
				if !yield(source{origin: fn.Origin{File: f.Name}, data: data}, err) || err != nil {
					return
				}
			}
		}
	}
}

// buildUnderItsHeapLimit runs a kustomize build with render mode's own soft
// heap limit raised to the build's (buildMemoryLimit). A build holds all its
// objects at once (kustomize's resource map), so the limit meant for the
// garbage between documents would keep the collector running through it. A
// GOMEMLIMIT the operator set stays.
func buildUnderItsHeapLimit(b *kustomize.Build, entries kustomize.Entries) ([]byte, error) {
	if ownHeapLimit() {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(buildMemoryLimit))
	}
	return b.Run(entries)
}

// file yields the objects of one file, and stops at the first error.
func (r *reader) file(src source) iter.Seq2[fn.Object, error] {
	return func(yield func(fn.Object, error) bool) {
		limits := fastyaml.ReadLimits{MaxNodes: r.maxDocNodes, MaxDocuments: r.maxObjects - r.count, MaxObjects: r.maxObjects}
		for doc, err := range fastyaml.ReadDocuments(src.data, src.origin.File, limits) {
			if err != nil {
				yield(fn.Object{}, err)
				return
			}
			o := src.origin
			if !src.rendered {
				o.Document, o.Line = doc.Index+1, doc.Line
				if doc.Item >= 0 {
					o.Listed, o.Item = true, doc.Item
				}
			}
			if !r.expand(fn.Object{Node: doc.Node, Origin: o, SeqIndent: doc.SeqIndent}, doc.Nodes, yield) {
				return
			}
		}
	}
}

// expand yields obj, which has nodes YAML nodes as written, or the objects
// of obj when it is a v1 List, unless it is local configuration. It returns
// false once the caller stops or an error was yielded.
func (r *reader) expand(obj fn.Object, nodes int, yield func(fn.Object, error) bool) bool {
	n, o := obj.Node, obj.Origin
	if n.YNode().Kind == yaml.MappingNode {
		if scalar(n, "kind") == "List" && scalar(n, "apiVersion") == "v1" {
			if list := n.Field("items"); list != nil && list.Value.YNode().Kind == yaml.SequenceNode {
				for i, item := range list.Value.YNode().Content {
					written := fastyaml.CountNodes(item, r.maxObjectNodes)
					co := o
					co.Listed, co.Item = true, i
					if item.Line > 0 && o.Line > 0 {
						co.Line = o.Line + item.Line - n.YNode().Line
					}
					// An item is written compact, as kio writes it.
					if !r.expand(fn.Object{Node: yaml.NewRNode(item), Origin: co}, written, yield) {
						return false
					}
				}
				return true
			}
		}
		if scalar(n, "metadata", "annotations", localConfigAnnotation) == "true" {
			return true
		}
	}
	if r.count++; r.count > r.maxObjects {
		yield(fn.Object{}, &fn.InputError{Origin: o, Err: fmt.Errorf("brings the input to %d objects, over the ceiling of %d (--max-objects)", r.count, r.maxObjects)})
		return false
	}
	if nodes > r.maxObjectNodes {
		yield(fn.Object{}, &fn.InputError{Origin: o, Err: fmt.Errorf("%s has over %d YAML nodes (--max-object-nodes): no Kubernetes object is that large; split it",
			fn.Describe(n), r.maxObjectNodes)})
		return false
	}
	return yield(obj, nil)
}

// mentions says whether a file may hold an FLApp: its kind cannot be
// spelt without the bytes "FLApp" or an escape sequence (a backslash).
func mentions(data []byte, kind string) (plainly, maybe bool) {
	plainly = bytes.Contains(data, []byte(kind))
	return plainly, plainly || bytes.IndexByte(data, '\\') >= 0
}

// scalar is the value of the scalar at path, or "" when there is none. It
// never panics on malformed metadata, unlike kyaml's metadata getters.
func scalar(n *yaml.RNode, path ...string) string {
	v, err := n.Pipe(yaml.Lookup(path...))
	if err != nil || v == nil || v.YNode().Kind != yaml.ScalarNode {
		return ""
	}
	return v.YNode().Value
}
