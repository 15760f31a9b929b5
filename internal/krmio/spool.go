package krmio

import (
	"bufio"
	"io"
	"os"
)

// SpoolMemory is how much of a render is kept in memory before it moves to
// a temporary file.
const SpoolMemory = 1 << 20

// spool holds encoded output until it may be written: in memory up to
// SpoolMemory, then in a private temporary file, unlinked as soon as it is
// created (mode 0600, gone when the process ends, whatever way it ends).
// Where no temporary file can be created (a read-only file system without
// $TMPDIR) it stays in memory: the render still works, bounded by the
// input ceilings, only its memory then grows with the input.
type spool struct {
	mem  []byte
	file *os.File
	buf  *bufio.Writer
	size int64
	err  error
}

func (s *spool) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if s.file == nil && len(s.mem)+len(p) > SpoolMemory {
		s.toFile()
	}
	s.size += int64(len(p))
	if s.buf != nil {
		_, s.err = s.buf.Write(p)
		return len(p), s.err
	}
	s.mem = append(s.mem, p...)
	return len(p), nil
}

func (s *spool) toFile() {
	f, err := os.CreateTemp("", "flapp-services-render-*")
	if err != nil {
		return
	}
	if os.Remove(f.Name()) != nil {
		_ = f.Close()
		return
	}
	s.file, s.buf = f, bufio.NewWriterSize(f, 64<<10)
	if _, s.err = s.buf.Write(s.mem); s.err == nil {
		s.mem = nil
	}
}

// copyTo writes the first n bytes to w.
func (s *spool) copyTo(w io.Writer, n int64) error {
	if s.err != nil {
		return s.err
	}
	if s.file == nil {
		_, err := w.Write(s.mem[:n])
		return err
	}
	if err := s.buf.Flush(); err != nil {
		return err
	}
	_, err := io.Copy(w, io.NewSectionReader(s.file, 0, n))
	return err
}

func (s *spool) close() error {
	s.mem = nil
	if s.file == nil {
		return nil
	}
	f := s.file
	s.file, s.buf = nil, nil
	return f.Close()
}
