package krmio

import (
	"bytes"
	"io"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// appendEncoded appends what kyaml's encoder (yaml.NewEncoder) writes for
// node.
func appendEncoded(buf []byte, node *yaml.Node) ([]byte, error) {
	out := bytes.NewBuffer(buf)
	enc := yaml.NewEncoder(out)
	if err := enc.Encode(node); err != nil {
		return buf, err
	}
	if err := enc.Close(); err != nil {
		return buf, err
	}
	return out.Bytes(), nil
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

func newChunkWriter(w io.Writer) *chunkWriter {
	return &chunkWriter{w: w, buf: make([]byte, 0, 2*chunkSize)}
}

func (c *chunkWriter) flushIfFull() {
	if len(c.buf) >= chunkSize {
		_ = c.flush()
	}
}

func (c *chunkWriter) flush() error {
	if c.err == nil && len(c.buf) > 0 {
		_, c.err = c.w.Write(c.buf)
	}
	c.buf = c.buf[:0]
	return c.err
}
