package cli

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"iter"
	"runtime/debug"

	"github.com/fedlearner/flapp-services/fn"
	"github.com/fedlearner/flapp-services/internal/krmio"
	"github.com/fedlearner/flapp-services/internal/kustomize"
	"github.com/fedlearner/flapp-services/internal/repofs"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

const localConfigAnnotation = "config.kubernetes.io/local-config"

// reader is the one reader of render mode and discover. It reads each
// input in order, each file's documents one at a time, expands v1 Lists,
// drops local configuration (as kustomize does), and yields every object
// with its origin. Everything a run may read is bounded here or below: the
// loader checks file sizes before anything is read, krmio bounds each
// document's nodes before it is parsed, and the reader counts objects and
// each object's nodes before it is kept.
type reader struct {
	ld             *repofs.Loader
	stdin          io.Reader
	maxObjects     int
	maxDocNodes    int
	maxObjectNodes int
	count          int   // objects read so far, all inputs together
	buildHeapLimit int64 // the soft heap limit while a kustomization is built
	// entries runs the flapp-services entries of the kustomization built
	// in the directory named (as messages name it), at their place.
	entries func(buildDir string) kustomize.Entries
}

// input is one PATH of the command line: the files found below it, stdin
// ("-"), or a kustomization root, read as its build's output.
type input struct {
	manifests []repofs.File
	stdin     bool
	build     *kustomize.Root
}

// files is how many files the input reads: stdin and a build's output are
// one each.
func (in input) files() int {
	if in.stdin || in.build != nil {
		return 1
	}
	return len(in.manifests)
}

// source is one file's bytes and where they came from: its File, and for a
// build's output its Build and BuildOutput (the build ran flapp-services'
// entries: its objects are the render's output as they are, and its lines
// are no file's).
type source struct {
	origin fn.Origin
	data   []byte
}

// objects yields every object of the inputs, in input order, each file read
// only when its turn comes and its documents one at a time, and stops at
// the first error.
func (r *reader) objects(inputs []input) iter.Seq2[fn.Object, error] {
	return func(yield func(fn.Object, error) bool) {
		for _, in := range inputs {
			for i := range in.files() {
				src, err := r.read(in, i)
				if err != nil {
					yield(fn.Object{}, err)
					return
				}
				if !r.file(src, yield) {
					return
				}
			}
		}
	}
}

// read reads the i-th file of an input: stdin, a build's output, or one of
// its manifests.
func (r *reader) read(in input, i int) (source, error) {
	switch {
	case in.stdin:
		data, err := r.ld.ReadStream("<stdin>", r.stdin)
		return source{origin: fn.Origin{File: "<stdin>"}, data: data}, err
	case in.build != nil:
		data, err := buildUnderItsHeapLimit(in.build, r.entries(in.build.Dir), r.buildHeapLimit)
		if err != nil {
			return source{}, &fn.InputError{Origin: fn.Origin{File: in.build.File}, Err: err}
		}
		return source{origin: fn.Origin{File: in.build.File, Build: in.build.Dir, BuildOutput: true}, data: data}, nil
	}
	f := in.manifests[i]
	data, err := r.ld.Read(f)
	return source{origin: fn.Origin{File: f.Name}, data: data}, err
}

// buildUnderItsHeapLimit runs a kustomize build with render mode's own soft
// heap limit raised to the build's, limit (buildMemoryLimit, or less below
// a lower --max-memory, which the collector must work to stay under). A
// build holds all its objects at once (kustomize's resource map), so the
// limit meant for the garbage between documents would keep the collector
// running through it. A GOMEMLIMIT the operator set stays.
func buildUnderItsHeapLimit(b *kustomize.Root, entries kustomize.Entries, limit int64) ([]byte, error) {
	if ownHeapLimit() {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(max(limit, renderMemoryLimit)))
	}
	return b.Build(entries)
}

// file yields the objects of one file to yield, and stops at the first
// error. It returns false once yield stops or an error was yielded.
func (r *reader) file(src source, yield func(fn.Object, error) bool) bool {
	limits := krmio.ReadLimits{MaxNodes: r.maxDocNodes, MaxDocuments: r.maxObjects - r.count, MaxObjects: r.maxObjects}
	for doc, err := range krmio.ReadDocuments(src.data, src.origin.File, limits) {
		if err != nil {
			yield(fn.Object{}, err)
			return false
		}
		o := src.origin
		if !o.BuildOutput {
			o.Document, o.Line = doc.Index+1, doc.Line
			if doc.Item >= 0 {
				o.Listed, o.Item = true, doc.Item
			}
		}
		if !r.expand(fn.Object{Node: doc.Node, Origin: o, SeqIndent: doc.SeqIndent}, doc.Nodes, yield) {
			return false
		}
	}
	return true
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
					written := krmio.CountNodes(item, r.maxObjectNodes)
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
// spelt without the bytes "FLApp" or an escape sequence (a backslash), in
// UTF-8 or in either UTF-16 (which the YAML parser reads after a byte
// order mark, and refuses without one: a refusal the render reports).
func mentions(data []byte, kind string) (plainly, maybe bool) {
	for _, enc := range []func(string) []byte{utf8Bytes, utf16Bytes(binary.LittleEndian), utf16Bytes(binary.BigEndian)} {
		if bytes.Contains(data, enc(kind)) {
			return true, true
		}
		maybe = maybe || bytes.Contains(data, enc(`\`))
	}
	return false, maybe
}

func utf8Bytes(s string) []byte { return []byte(s) }

// utf16Bytes encodes ASCII text in UTF-16 of the given byte order.
func utf16Bytes(order binary.AppendByteOrder) func(string) []byte {
	return func(s string) []byte {
		b := make([]byte, 0, 2*len(s))
		for _, c := range []byte(s) {
			b = order.AppendUint16(b, uint16(c))
		}
		return b
	}
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
