package repofs

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// Read reads a listed file, no further than its ceiling (it may have grown
// since it was listed).
func (l *Loader) Read(f File) ([]byte, error) {
	fh, err := os.Open(f.path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = fh.Close() }()
	data, err := io.ReadAll(io.LimitReader(fh, l.limits.MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name, err)
	}
	if int64(len(data)) > l.limits.MaxFileSize {
		return nil, ceiling("%s grew over the ceiling of %s per file (--max-file-size) while it was read", f.Name, Size(l.limits.MaxFileSize))
	}
	if l.total += int64(len(data)) - f.size; l.total > l.limits.MaxInputSize {
		return nil, ceiling("%s grew while it was read, bringing the input over the ceiling of %s in total (--max-input-size)", f.Name, Size(l.limits.MaxInputSize))
	}
	return data, nil
}

// ReadStream reads a stream (stdin) within the same ceilings.
func (l *Loader) ReadStream(name string, r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, l.limits.MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if int64(len(data)) > l.limits.MaxFileSize {
		return nil, ceiling("%s is over the ceiling of %s per file (--max-file-size)", name, Size(l.limits.MaxFileSize))
	}
	if err := l.account(name, int64(len(data))); err != nil {
		return nil, err
	}
	return data, nil
}

// ReadConfined reads a file named by a flag (already Confined) within the
// given ceiling.
func (l *Loader) ReadConfined(flag, name, resolved string, ceiling int64) ([]byte, error) {
	fh, err := l.OpenConfined(flag, name, resolved, ceiling)
	if err != nil {
		return nil, err
	}
	defer func() { _ = fh.Close() }()
	data, err := io.ReadAll(io.LimitReader(fh, ceiling+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	if int64(len(data)) > ceiling {
		return nil, fmt.Errorf("%s %s grew over the ceiling of %s while it was read", flag, name, Size(ceiling))
	}
	return data, nil
}

// Size is a number of bytes as every message and help text writes it: a
// Kubernetes quantity when it is a whole number of KiB, MiB or GiB (the
// form the size flags take), bytes otherwise.
func Size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGi", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMi", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKi", n>>10)
	case n >= 1<<20:
		return fmt.Sprintf("%d bytes (%.1fMi)", n, float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}

// OpenConfined opens a file named by a flag (already Confined), to be read
// as a stream, once checked: a regular file within the given ceiling.
func (l *Loader) OpenConfined(flag, name, resolved string, ceiling int64) (*os.File, error) {
	info, err := os.Stat(resolved)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s %s is not a regular file (%s)", flag, name, kindOf(info.Mode()))
	}
	if info.Size() > ceiling {
		return nil, fmt.Errorf("%s %s is %s, over the ceiling of %s", flag, name, Size(info.Size()), Size(ceiling))
	}
	fh, err := os.Open(resolved)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	return fh, nil
}

// ErrCeiling is what every error of a size ceiling is: a caller that reads
// on another's behalf (a kustomize build) tells it from a missing file.
var ErrCeiling = errors.New("over a size ceiling")

type ceilingError struct{ msg string }

func (e *ceilingError) Error() string        { return e.msg }
func (e *ceilingError) Is(target error) bool { return target == ErrCeiling }

func ceiling(format string, args ...any) error {
	return &ceilingError{fmt.Sprintf(format, args...)}
}
