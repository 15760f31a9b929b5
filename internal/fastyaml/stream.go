package fastyaml

import (
	"bytes"
	"errors"
	"io"
	"slices"

	corev1 "k8s.io/api/core/v1"
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

// WriteStream writes what kio.ByteWriter{Writer: w, ClearAnnotations: the
// reader annotations}.Write(WithServiceNodes(kept, services)) writes: a
// multi-document YAML stream of the kept objects through kyaml's encoder,
// then each generated Service as one more document, by the fast encoder.
func WriteStream(w io.Writer, kept []*yaml.RNode, services []corev1.Service) error {
	bw := kio.ByteWriter{Writer: w, ClearAnnotations: readerAnnotations}
	if !fastPath || len(services) == 0 || len(kept) == 0 {
		return bw.Write(WithServiceNodes(kept, services))
	}
	// ByteWriter.Write without wrapping (more than one node, so no JSON);
	// a placeholder document stands where the Services start, so the
	// separator is the encoder's own.
	var frame bytes.Buffer
	enc := yaml.NewEncoder(&frame)
	for _, n := range kept {
		n = n.Copy()
		seqIndent := n.GetAnnotations()[kioutil.SeqIndentAnnotation]
		for _, a := range []string{kioutil.IndexAnnotation, kioutil.LegacyIndexAnnotation, kioutil.SeqIndentAnnotation} {
			if _, err := n.Pipe(yaml.ClearAnnotation(a)); err != nil {
				return kerrors.Wrap(err)
			}
		}
		for _, a := range bw.ClearAnnotations {
			if _, err := n.Pipe(yaml.ClearAnnotation(a)); err != nil {
				return kerrors.Wrap(err)
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
			return kerrors.Wrap(err)
		}
	}
	token := placeholder()
	enc.CompactSeqIndent()
	if err := enc.Encode(&yaml.Node{Kind: yaml.ScalarNode, Value: token}); err != nil {
		return kerrors.Wrap(err)
	}
	if err := enc.Close(); err != nil {
		return err
	}
	mark := []byte(token + "\n")
	if !bytes.HasSuffix(frame.Bytes(), mark) || bytes.Count(frame.Bytes(), []byte(token)) != 1 {
		return errors.New("internal error: placeholder not found in the encoded render")
	}
	cw := newChunkWriter(w, frame.Len()+len(services)*600)
	cw.write(frame.Bytes()[:frame.Len()-len(mark)])
	for i := range services {
		if i > 0 {
			cw.buf = append(cw.buf, "---\n"...)
		}
		var err error
		if cw.buf, err = encodeServiceDoc(cw.buf, &services[i], streamAnnotations(services[i].Annotations)); err != nil {
			return err
		}
		cw.flushIfFull()
	}
	return cw.flush()
}

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
