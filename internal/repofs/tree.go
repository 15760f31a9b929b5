package repofs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// Tree is a directory that a reader, a kustomization build, may not leave:
// under RootOnly every path it reads, through any symlinks, must resolve
// inside it, and every file it reads counts toward the run's ceilings.
type Tree struct {
	l   *Loader
	dir string // resolved
}

// Tree is the tree a kustomization at the resolved root may read: the
// repository root when the root lies inside it, the root itself otherwise
// (a PATH written outside the repository is read on its own).
func (l *Loader) Tree(root Root) *Tree {
	if within(root.resolved, l.top) {
		return &Tree{l: l, dir: l.top}
	}
	return &Tree{l: l, dir: root.resolved}
}

// Dir is the tree's directory, resolved.
func (t *Tree) Dir() string { return t.dir }

// Name is how messages name an absolute path: from the current directory
// when the path is below it, else as it is.
func (t *Tree) Name(p string) string {
	if within(p, t.l.cwd) || within(p, t.dir) {
		if rel, err := filepath.Rel(t.l.cwd, p); err == nil {
			return filepath.ToSlash(rel)
		}
	}
	return p
}

// Resolve resolves the absolute path p through its symlinks. Under RootOnly
// the result must lie inside the tree; the error names the symlink that
// leads out.
//
// Under RootOnly a path that leads outside is refused before the disk is
// asked whether its target exists, so that no message tells what lies
// outside the tree: a path written outside it, and one through a symlink
// whose target is outside it, get the same error whether or not that
// target exists.
func (t *Tree) Resolve(p string) (string, error) {
	p = filepath.Clean(p)
	confined := t.l.restrictor == RootOnly
	if confined && !within(p, t.dir) {
		return "", t.l.outside(t.Name(p), p, p, t.where())
	}
	resolved, err := t.l.resolve(p)
	if err != nil {
		var git *gitError
		if link, target := t.l.firstLink(p); confined && link != "" && !errors.As(err, &git) {
			// Dangling or looping through any number of hops reads as
			// leading outside: the same words either way.
			return "", unresolved(link, target, t.where())
		}
		return "", err
	}
	if confined && !within(resolved, t.dir) {
		return "", t.l.outside(t.Name(p), p, resolved, t.where())
	}
	return resolved, nil
}

// where names the tree in messages.
func (t *Tree) where() string {
	if t.dir != t.l.top {
		return "the PATH " + t.Name(t.dir)
	}
	return t.l.topName()
}

// Charge counts n more bytes toward the run's total ceiling, for a file
// read again from memory (each read of a build counts, as if from disk).
func (t *Tree) Charge(name string, n int64) error { return t.l.account(name, n) }

// Stat is os.Stat of a path of the tree.
func (t *Tree) Stat(p string) (fs.FileInfo, error) {
	resolved, err := t.Resolve(p)
	if err != nil {
		return nil, err
	}
	return os.Stat(resolved)
}

// ReadFile reads a regular file of the tree, within the per-file ceiling
// and, with everything read so far, the total one.
func (t *Tree) ReadFile(p string) ([]byte, error) {
	resolved, err := t.Resolve(p)
	if err != nil {
		return nil, err
	}
	name := t.Name(p)
	f, err := t.l.file(name, resolved)
	if err != nil {
		return nil, err
	}
	fh, err := os.Open(f.path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = fh.Close() }()
	data, err := io.ReadAll(io.LimitReader(fh, t.l.limits.MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if int64(len(data)) > t.l.limits.MaxFileSize {
		return nil, ceiling("%s grew over the ceiling of %s per file (--max-file-size) while it was read", name, Size(t.l.limits.MaxFileSize))
	}
	if t.l.total += int64(len(data)) - f.size; t.l.total > t.l.limits.MaxInputSize {
		return nil, ceiling("%s grew while it was read, bringing the input over the ceiling of %s in total (--max-input-size)", name, Size(t.l.limits.MaxInputSize))
	}
	return data, nil
}

// ReadDir lists the names in a directory of the tree, sorted.
func (t *Tree) ReadDir(p string) ([]string, error) {
	resolved, err := t.Resolve(p)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(resolved)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names, nil
}
