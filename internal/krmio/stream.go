package krmio

import (
	"encoding/json"
	"io"
	"path/filepath"
	"slices"

	"github.com/fedlearner/flapp-services/fn"
	kerrors "sigs.k8s.io/kustomize/kyaml/errors"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// readerAnnotations are the annotations that exist only while reading and
// must not reach a cluster.
var readerAnnotations = []string{
	kioutil.PathAnnotation, kioutil.IndexAnnotation,
	kioutil.LegacyPathAnnotation, kioutil.LegacyIndexAnnotation,
}

// StreamWriter writes a render: what kio.ByteWriter{Writer: w,
// ClearAnnotations: the reader annotations}.Write(withServiceNodes(kept,
// out.Services())) writes, a multi-document YAML stream. Each kept object is
// encoded by kyaml's encoder as it is added, into a spool (memory, then a
// private temporary file), so no object's tree outlives its Add; WriteTo
// then copies the spool and writes each generated Service as one more
// document, by the fast encoder. Nothing reaches the destination before
// WriteTo: the caller calls it only once the whole run has succeeded.
type StreamWriter struct {
	spool   spool
	first   fn.Object // held until a second object: kio writes a lone .json object as JSON
	kept    int
	encoded int
}

// NewStreamWriter returns an empty render. Close it when done.
func NewStreamWriter() *StreamWriter { return &StreamWriter{} }

// documentSeparator is what go.yaml.in/yaml/v3's encoder writes before every
// document of a stream but the first: its document end leaves the emitter
// at column 0 with no foot indent, and finish clears open_ended, so nothing
// else carries from one document to the next.
const documentSeparator = "---\n"

// Add appends one kept object. The writer takes the node over: it clears
// the reader annotations the object carried itself, as kio.ByteWriter does
// on its copy.
func (w *StreamWriter) Add(obj fn.Object) error {
	w.kept++
	if w.kept == 1 {
		w.first = obj
		return nil
	}
	if w.first.Node != nil {
		first := w.first
		w.first = fn.Object{}
		if err := w.encode(first); err != nil {
			return err
		}
	}
	return w.encode(obj)
}

// encode is kio.ByteWriter.Write's loop body for one node of a stream, with
// an encoder of its own: one encoder for a whole stream keeps every event it
// ever emitted (go.yaml.in/yaml/v3 never trims its event queue), which is
// most of what kyaml's ByteWriter holds for a large render.
func (w *StreamWriter) encode(obj fn.Object) error {
	if err := clearReaderAnnotations(obj.Node); err != nil {
		return err
	}
	if w.encoded++; w.encoded > 1 {
		_, _ = w.spool.Write([]byte(documentSeparator))
	}
	enc := yaml.NewEncoder(&w.spool)
	if obj.SeqIndent == string(yaml.WideSequenceStyle) {
		enc.DefaultSeqIndent()
	} else {
		enc.CompactSeqIndent()
	}
	if err := enc.Encode(upWrap(obj.Node.Document())); err != nil {
		return kerrors.Wrap(err)
	}
	if err := enc.Close(); err != nil {
		return err
	}
	return w.spool.err
}

// WriteTo writes the whole render to dst: the kept objects, then the
// Services of out (none when out is nil).
func (w *StreamWriter) WriteTo(dst io.Writer, out *fn.Output) error {
	services := 0
	if out != nil {
		services = out.ServiceCount()
	}
	if w.kept == 1 && services == 0 {
		// One object: as kio writes it, without its copy; as JSON when its
		// file is a .json one (kio's shouldJSONEncodeSingleBareNode).
		first := w.first
		w.first = fn.Object{}
		if isJSONFile(first.Origin.File) {
			if err := clearReaderAnnotations(first.Node); err != nil {
				return err
			}
			enc := json.NewEncoder(dst)
			enc.SetIndent("", "  ")
			return kerrors.Wrap(enc.Encode(first.Node))
		}
		if err := w.encode(first); err != nil {
			return err
		}
		return w.spool.copyTo(dst, w.spool.size)
	}
	if w.kept == 0 {
		// Services alone cannot happen: they come from kept FLApps.
		items, err := withServiceNodes(nil, out.Services())
		if err != nil {
			return err
		}
		return kio.ByteWriter{Writer: dst}.Write(items)
	}
	if w.first.Node != nil {
		if err := w.encode(w.first); err != nil {
			return err
		}
		w.first = fn.Object{}
	}
	if err := w.spool.copyTo(dst, w.spool.size); err != nil {
		return err
	}
	if services == 0 {
		return nil
	}
	cw := newChunkWriter(dst)
	for svc := range out.Services() {
		cw.buf = append(cw.buf, documentSeparator...)
		var err error
		if cw.buf, err = encodeServiceDoc(cw.buf, svc, streamAnnotations(svc.Annotations)); err != nil {
			return err
		}
		cw.flushIfFull()
	}
	return cw.flush()
}

// clearReaderAnnotations clears what kio.ByteWriter clears, here of what
// the object carried itself: the reader's annotations, the index and
// sequence-indent ones, and an annotations field left empty.
func clearReaderAnnotations(n *yaml.RNode) error {
	for _, a := range append([]string{kioutil.IndexAnnotation, kioutil.LegacyIndexAnnotation, kioutil.SeqIndentAnnotation}, readerAnnotations...) {
		if _, err := n.Pipe(yaml.ClearAnnotation(a)); err != nil {
			return kerrors.Wrap(err)
		}
	}
	return yaml.ClearEmptyAnnotations(n)
}

// Close releases the spool.
func (w *StreamWriter) Close() error { return w.spool.close() }

// streamAnnotations are the annotations of a generated Service in the
// stream: kio.ByteWriter clears the reader annotations and, without
// KeepReaderAnnotations, the index and sequence-indent ones.
func streamAnnotations(m map[string]string) []annotation {
	return slices.DeleteFunc(sortedAnnotations(m), func(a annotation) bool {
		switch a.key {
		case kioutil.PathAnnotation, kioutil.IndexAnnotation, kioutil.LegacyPathAnnotation,
			kioutil.LegacyIndexAnnotation, kioutil.SeqIndentAnnotation:
			return true
		}
		return false
	})
}

// upWrap is kio's upWrapBareSequenceNode: a bare sequence wrapped by the
// reader is written bare again.
func upWrap(node *yaml.Node) *yaml.Node {
	seq, err := yaml.NewRNode(node).Pipe(yaml.Lookup(yaml.BareSeqNodeWrappingKey))
	if err == nil && !seq.IsNilOrEmpty() {
		return seq.YNode()
	}
	return node
}

// isJSONFile is kio.ByteWriter's shouldJSONEncodeSingleBareNode for one
// node read from path: its path annotation names a .json file.
func isJSONFile(path string) bool {
	if path == "" {
		return false
	}
	for _, glob := range kio.JSONMatch {
		if match, _ := filepath.Match(glob, filepath.Base(path)); match {
			return true
		}
	}
	return false
}
