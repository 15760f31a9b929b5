package fn

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"io"

	"sigs.k8s.io/kustomize/kyaml/errors"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The fast writers: the output of framework.Execute (KRM mode) and of
// kio.ByteWriter (render mode), byte for byte, with the generated Services
// written by the fast encoder instead of as yaml nodes. Everything else (the
// pass-through items, functionConfig, results, annotation bookkeeping) still
// goes through kyaml. fastwrite_test.go compares both with the reference
// paths on every golden case and on randomized inputs.

// executeFast is framework.Execute(p, rw) for a processor p that returns the
// generated Services typed (nil Output: nothing generated, rl.Items is the
// whole answer). The steps are Execute's, in its order.
func executeFast(p func(*framework.ResourceList) (*Output, error), rw *kio.ByteReadWriter) error {
	rl := framework.ResourceList{}
	var err error
	if rl.Items, err = rw.Read(); err != nil {
		return errors.WrapPrefixf(err, "failed to read ResourceList input")
	}
	rl.FunctionConfig = rw.FunctionConfig

	nodeAnnos, err := kio.PreprocessResourcesForInternalAnnotationMigration(rl.Items)
	if err != nil {
		return err
	}

	out, retErr := p(&rl)

	// Execute reconciles the items and the generated Services alike; the
	// Services' share is done by krmAnnotations when they are written.
	if err := kio.ReconcileInternalAnnotations(rl.Items, nodeAnnos); err != nil {
		return err
	}

	if len(rl.Results) > 0 {
		b, err := yaml.Marshal(rl.Results)
		if err != nil {
			return errors.Wrap(err)
		}
		y, err := yaml.Parse(string(b))
		if err != nil {
			return errors.Wrap(err)
		}
		rw.Results = y
	}
	if out == nil || len(out.Services) == 0 {
		if err := rw.Write(rl.Items); err != nil {
			return err
		}
		return retErr
	}
	if err := writeResourceList(rw, out, annotationsFormat(nodeAnnos), nodeAnnos); err != nil {
		return err
	}
	return retErr
}

// annotationFormat is which of the internal and the legacy path/index/id
// annotations the output uses: kio's determineAnnotationsFormat, for input
// it has already accepted as consistent.
type annotationFormat struct{ internal, legacy bool }

func annotationsFormat(nodeAnnos map[string]map[string]string) annotationFormat {
	if len(nodeAnnos) == 0 {
		return annotationFormat{true, true}
	}
	var f annotationFormat
	for _, annos := range nodeAnnos {
		_, path := annos[kioutil.PathAnnotation]
		_, index := annos[kioutil.IndexAnnotation]
		_, id := annos[kioutil.IdAnnotation]
		_, lpath := annos[kioutil.LegacyPathAnnotation]
		_, lindex := annos[kioutil.LegacyIndexAnnotation]
		_, lid := annos[kioutil.LegacyIdAnnotation]
		if path || index || id || lpath || lindex || lid {
			return annotationFormat{path || index || id, lpath || lindex || lid}
		}
	}
	return f
}

// The internal annotations and their legacy twins, in the order kio
// reconciles them.
var annotationPairs = [3][2]string{
	{kioutil.PathAnnotation, kioutil.LegacyPathAnnotation},
	{kioutil.IndexAnnotation, kioutil.LegacyIndexAnnotation},
	{kioutil.IdAnnotation, kioutil.LegacyIdAnnotation},
}

// krmAnnotations is what kio.ReconcileInternalAnnotations leaves of the
// annotations of a generated Service (a node it did not see in the input):
// for each of path, index and id, a missing twin is appended (by
// SetAnnotation, so single-quoted), then the format the input did not use is
// removed. ok is false for annotations a generated Service never has (a twin
// already present, an empty value, the migration id): those take the exact
// path.
func krmAnnotations(m map[string]string, f annotationFormat) (out []annotation, ok bool) {
	if _, found := m[kioutil.InternalAnnotationsMigrationResourceIDAnnotation]; found {
		return nil, false
	}
	out = sortedAnnotations(m)
	for _, pair := range annotationPairs {
		v, hasNew := m[pair[0]]
		_, hasLegacy := m[pair[1]]
		if hasLegacy || (hasNew && v == "") {
			return nil, false
		}
		if hasNew {
			out = append(out, annotation{key: pair[1], value: v, single: true})
		}
	}
	drop := func(key string) bool {
		for _, pair := range annotationPairs {
			if (!f.internal && key == pair[0]) || (!f.legacy && key == pair[1]) {
				return true
			}
		}
		return false
	}
	kept := out[:0]
	for _, a := range out {
		if !drop(a.key) {
			kept = append(kept, a)
		}
	}
	return kept, true
}

// writeResourceList writes what rw.Write(append(rl.Items, ServiceNodes...))
// writes after framework.Execute's reconciliation. The wrapper, the kept
// items, functionConfig and results are encoded by kyaml in one document, with
// a placeholder item where the Services go; the placeholder's line is then
// replaced by the Services.
func writeResourceList(rw *kio.ByteReadWriter, out *Output, f annotationFormat, nodeAnnos map[string]map[string]string) error {
	if rw.NoWrap || rw.WrappingKind == "" || rw.Style != 0 {
		return rw.Write(out.Nodes())
	}
	// ByteWriter.Write, wrapping branch, with KeepReaderAnnotations (the
	// only setting RunKRM uses). It copies the nodes first so the caller's
	// stay untouched; nothing here uses them afterwards.
	for _, n := range out.Kept {
		if err := yaml.ClearEmptyAnnotations(n); err != nil {
			return err
		}
	}
	token := placeholder()
	items := &yaml.Node{Kind: yaml.SequenceNode}
	for _, n := range out.Kept {
		items.Content = append(items.Content, n.YNode())
	}
	items.Content = append(items.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: token})
	list := &yaml.Node{
		Kind: yaml.MappingNode,
		Content: []*yaml.Node{
			{Kind: yaml.ScalarNode, Value: "apiVersion"},
			{Kind: yaml.ScalarNode, Value: rw.WrappingAPIVersion},
			{Kind: yaml.ScalarNode, Value: "kind"},
			{Kind: yaml.ScalarNode, Value: rw.WrappingKind},
			{Kind: yaml.ScalarNode, Value: "items"}, items,
		}}
	if rw.FunctionConfig != nil {
		list.Content = append(list.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "functionConfig"}, rw.FunctionConfig.YNode())
	}
	if rw.Results != nil {
		list.Content = append(list.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "results"}, rw.Results.YNode())
	}
	var frame bytes.Buffer
	enc := yaml.NewEncoder(&frame)
	if err := enc.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{list}}); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	mark := []byte("\n- " + token + "\n")
	at := bytes.Index(frame.Bytes(), mark)
	if at < 0 || bytes.Count(frame.Bytes(), []byte(token)) != 1 {
		// Cannot happen with a random token; stay exact anyway.
		return errors.Errorf("internal error: placeholder not found in the encoded ResourceList")
	}

	cw := newChunkWriter(rw.Writer, frame.Len()+len(out.Services)*700)
	cw.write(frame.Bytes()[:at+1])
	for i := range out.Services {
		svc := &out.Services[i]
		var err error
		if annos, ok := krmAnnotations(svc.Annotations, f); ok {
			cw.buf, err = encodeServiceItem(cw.buf, svc, annos)
		} else {
			cw.buf, err = exactServiceItem(cw.buf, ServiceNode(svc), nodeAnnos)
		}
		if err != nil {
			return err
		}
		cw.flushIfFull()
	}
	cw.write(frame.Bytes()[at+len(mark):])
	return cw.flush()
}

// chunkWriter collects output in a small buffer and writes it on in chunks,
// so no second copy of the whole output is held. A bytes.Buffer destination
// is grown once to the expected size.
type chunkWriter struct {
	w   io.Writer
	buf []byte
	err error
}

const chunkSize = 64 << 10

func newChunkWriter(w io.Writer, expected int) *chunkWriter {
	if b, ok := w.(*bytes.Buffer); ok {
		b.Grow(expected)
	}
	return &chunkWriter{w: w, buf: make([]byte, 0, 2*chunkSize)}
}

func (c *chunkWriter) flushIfFull() {
	if len(c.buf) >= chunkSize {
		_ = c.flush()
	}
}

// write writes p through, after what is buffered.
func (c *chunkWriter) write(p []byte) {
	if c.flush() == nil {
		_, c.err = c.w.Write(p)
	}
}

func (c *chunkWriter) flush() error {
	if c.err == nil && len(c.buf) > 0 {
		_, c.err = c.w.Write(c.buf)
	}
	c.buf = c.buf[:0]
	return c.err
}

// exactServiceItem reconciles one Service node with kio itself and encodes it
// as a ResourceList item.
func exactServiceItem(buf []byte, node *yaml.RNode, nodeAnnos map[string]map[string]string) ([]byte, error) {
	if err := kio.ReconcileInternalAnnotations([]*yaml.RNode{node}, nodeAnnos); err != nil {
		return buf, err
	}
	if err := yaml.ClearEmptyAnnotations(node); err != nil {
		return buf, err
	}
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	if err := enc.Encode(&yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{node.YNode()}}); err != nil {
		return buf, err
	}
	if err := enc.Close(); err != nil {
		return buf, err
	}
	return append(buf, out.Bytes()...), nil
}

func placeholder() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "flapp-services-placeholder-" + hex.EncodeToString(b[:])
}

// renderAnnotations are the annotations of a generated Service in render mode:
// kio.ByteWriter clears the reader annotations.
func renderAnnotations(m map[string]string) []annotation {
	out := sortedAnnotations(m)
	kept := out[:0]
	for _, a := range out {
		switch a.key {
		case kioutil.PathAnnotation, kioutil.IndexAnnotation, kioutil.LegacyPathAnnotation,
			kioutil.LegacyIndexAnnotation, kioutil.SeqIndentAnnotation:
		default:
			kept = append(kept, a)
		}
	}
	return kept
}

// writeRender writes what kio.ByteWriter{ClearAnnotations: readerAnnotations}
// writes for out.Nodes(): the kept objects through kyaml's encoder, each
// generated Service as one more document of the stream.
func writeRender(w io.Writer, out *Output) error {
	bw := kio.ByteWriter{Writer: w, ClearAnnotations: readerAnnotations}
	if len(out.Services) == 0 || len(out.Kept) == 0 {
		return bw.Write(out.Nodes())
	}
	// ByteWriter.Write without wrapping (more than one node, so no JSON);
	// a placeholder document stands where the Services start, so the
	// separator is the encoder's own.
	var frame bytes.Buffer
	enc := yaml.NewEncoder(&frame)
	for _, n := range out.Kept {
		n = n.Copy()
		seqIndent := n.GetAnnotations()[kioutil.SeqIndentAnnotation]
		for _, a := range []string{kioutil.IndexAnnotation, kioutil.LegacyIndexAnnotation, kioutil.SeqIndentAnnotation} {
			if _, err := n.Pipe(yaml.ClearAnnotation(a)); err != nil {
				return errors.Wrap(err)
			}
		}
		for _, a := range bw.ClearAnnotations {
			if _, err := n.Pipe(yaml.ClearAnnotation(a)); err != nil {
				return errors.Wrap(err)
			}
		}
		if err := yaml.ClearEmptyAnnotations(n); err != nil {
			return err
		}
		if seqIndent == string(yaml.WideSequenceStyle) {
			enc.DefaultSeqIndent()
		} else {
			enc.CompactSeqIndent()
		}
		if err := enc.Encode(upWrap(n.Document())); err != nil {
			return errors.Wrap(err)
		}
	}
	token := placeholder()
	enc.CompactSeqIndent()
	if err := enc.Encode(&yaml.Node{Kind: yaml.ScalarNode, Value: token}); err != nil {
		return errors.Wrap(err)
	}
	if err := enc.Close(); err != nil {
		return err
	}
	mark := []byte(token + "\n")
	if !bytes.HasSuffix(frame.Bytes(), mark) || bytes.Count(frame.Bytes(), []byte(token)) != 1 {
		return errors.Errorf("internal error: placeholder not found in the encoded render")
	}
	cw := newChunkWriter(w, frame.Len()+len(out.Services)*600)
	cw.write(frame.Bytes()[:frame.Len()-len(mark)])
	for i := range out.Services {
		if i > 0 {
			cw.buf = append(cw.buf, "---\n"...)
		}
		var err error
		if cw.buf, err = encodeServiceDoc(cw.buf, &out.Services[i], renderAnnotations(out.Services[i].Annotations)); err != nil {
			return err
		}
		cw.flushIfFull()
	}
	return cw.flush()
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
