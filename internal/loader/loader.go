// Package loader reads the manifest files of `flapp-services render` from
// a tree that may belong to anyone who can push a branch. It follows
// symlinks only while they stay inside the PATH they are reached from, like
// kustomize's LoadRestrictionsRootOnly, turns symlink loops into errors, and
// bounds what it reads: a ceiling per file and in total, checked on the
// files' sizes before anything is read.
//
// It knows nothing of YAML or FLApps; it must not import the rest of the
// module.
package loader

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// Restrictor says which files a PATH may reach, named as kustomize names
// its load restrictor.
type Restrictor string

// The restrictors.
const (
	// RootOnly: every file and directory reached from a PATH, through any
	// symlinks, must resolve inside that PATH.
	RootOnly Restrictor = "LoadRestrictionsRootOnly"
	// None follows symlinks anywhere: for trees you trust.
	None Restrictor = "LoadRestrictionsNone"
)

// Restrictors lists the valid restrictors, default first.
var Restrictors = []Restrictor{RootOnly, None}

// Default ceilings: far above any resolved repository (Argo CD itself refuses
// more than 10 MB of plain manifests per application by default), far below
// what would exhaust a repo-server (parsing costs about 100 times the input).
const (
	DefaultMaxFileSize  int64 = 8 << 20
	DefaultMaxInputSize int64 = 32 << 20
)

// Limits bound what one run reads. Zero means the default.
type Limits struct {
	MaxFileSize  int64 // any one file, stdin included
	MaxInputSize int64 // all files together
}

// Loader reads the files of one run.
type Loader struct {
	restrictor Restrictor
	limits     Limits
	cwd        string   // the current directory, resolved
	roots      []string // resolved PATHs (a file's directory), for Confine
	total      int64    // bytes read or about to be read
}

// New returns a Loader for paths relative to the current directory.
func New(r Restrictor, limits Limits) (*Loader, error) {
	if !slices.Contains(Restrictors, r) {
		return nil, fmt.Errorf("--load-restrictor must be %s or %s, not %q", RootOnly, None, r)
	}
	if limits.MaxFileSize == 0 {
		limits.MaxFileSize = DefaultMaxFileSize
	}
	if limits.MaxInputSize == 0 {
		limits.MaxInputSize = DefaultMaxInputSize
	}
	if limits.MaxFileSize < 0 || limits.MaxInputSize < 0 {
		return nil, errors.New("size ceilings must be positive")
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	cwd, err := filepath.EvalSymlinks(wd)
	if err != nil {
		return nil, err
	}
	return &Loader{restrictor: r, limits: limits, cwd: cwd}, nil
}

// File is one manifest file found below a PATH.
type File struct {
	Name string // as reached from the PATH, for messages and annotations
	path string // to open: resolved
	size int64
}

// Root is a PATH argument, resolved and checked.
type Root struct {
	Name     string // as written
	resolved string
	dir      bool
}

// Resolve resolves a PATH argument and records it as a root. A PATH written
// inside the current directory must resolve inside it: the symlinks on the
// way belong to the tree. A PATH written outside it (absolute, or ../) is
// the caller's explicit choice and is taken as it resolves.
func (l *Loader) Resolve(p string) (Root, error) {
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(l.cwd, p)
	}
	abs = filepath.Clean(abs)
	resolved, err := l.resolve(abs)
	if err != nil {
		return Root{}, err
	}
	if l.restrictor == RootOnly && within(abs, l.cwd) && !within(resolved, l.cwd) {
		return Root{}, l.outside(p, abs, resolved, "the current directory")
	}
	info, err := os.Stat(resolved)
	if err != nil {
		return Root{}, err
	}
	if info.IsDir() {
		l.roots = append(l.roots, resolved)
	} else {
		l.roots = append(l.roots, filepath.Dir(resolved))
	}
	return Root{Name: filepath.ToSlash(filepath.Clean(p)), resolved: resolved, dir: info.IsDir()}, nil
}

// Confine checks a file named by a flag (--config, --check): it must
// resolve inside the current directory or inside a PATH resolved so far (for
// a file PATH, its directory), however it is written. It returns the
// resolved path.
func (l *Loader) Confine(flag, p string) (string, error) {
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(l.cwd, p)
	}
	resolved, err := l.resolve(filepath.Clean(abs))
	if err != nil {
		return "", fmt.Errorf("%s: %w", flag, err)
	}
	if l.restrictor == RootOnly && !within(resolved, l.cwd) && !slices.ContainsFunc(l.roots, func(r string) bool { return within(resolved, r) }) {
		err := l.outside(p, filepath.Clean(abs), resolved, "the current directory and every PATH")
		return "", fmt.Errorf("%s %w", flag, err)
	}
	return resolved, nil
}

// Files lists the manifest files of a root: the file itself, or the .yaml,
// .yml and .json files below the directory in lexical order, hidden
// directories skipped, following symlinks that stay inside the root.
// skip, when set, leaves out one resolved path (the config file).
func (l *Loader) Files(root Root, skip string) ([]File, error) {
	if !root.dir {
		f, err := l.file(root.Name, root.resolved)
		if err != nil {
			return nil, err
		}
		return []File{f}, nil
	}
	w := walker{l: l, root: root, skip: skip, seen: map[string]string{root.resolved: root.Name}}
	if err := w.dir(root.Name, root.resolved, []string{root.resolved}); err != nil {
		return nil, err
	}
	return w.files, nil
}

type walker struct {
	l     *Loader
	root  Root
	skip  string
	seen  map[string]string // resolved directory -> the name it was first read as
	files []File
}

func (w *walker) dir(name, dirPath string, stack []string) error {
	entries, err := os.ReadDir(dirPath)
	if err != nil {
		return err
	}
	for _, e := range entries { // sorted by name
		child := filepath.ToSlash(filepath.Join(name, e.Name()))
		childReal := filepath.Join(dirPath, e.Name())
		mode := e.Type()
		if mode&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(childReal)
			resolved, err := filepath.EvalSymlinks(childReal)
			if err != nil {
				if isLoop(childReal) {
					return fmt.Errorf("%s is a symlink to %s, part of a symlink loop", child, target)
				}
				if _, statErr := os.Stat(childReal); errors.Is(statErr, fs.ErrNotExist) {
					if !isManifest(e.Name()) {
						continue // a dangling link that would not be read anyway
					}
					return fmt.Errorf("%s is a symlink to %s, which does not exist", child, target)
				}
				return err
			}
			info, err := os.Stat(resolved)
			if err != nil {
				return err
			}
			if info.IsDir() && strings.HasPrefix(e.Name(), ".") || !info.IsDir() && !isManifest(e.Name()) {
				continue // never read: where it points does not matter
			}
			if w.l.restrictor == RootOnly && !within(resolved, w.root.resolved) {
				return fmt.Errorf("%s is a symlink to %s, which resolves to %s, outside %s (the PATH it was reached from): %s",
					child, target, resolved, w.root.Name, linkHint)
			}
			if info.IsDir() {
				if slices.Contains(stack, resolved) {
					return fmt.Errorf("%s is a symlink to %s, which leads back to %s: a symlink loop", child, target, w.seen[resolved])
				}
				if first, ok := w.seen[resolved]; ok {
					return fmt.Errorf("%s is a symlink to %s, a directory already read as %s: each directory is read once", child, target, first)
				}
				w.seen[resolved] = child
				if err := w.dir(child, resolved, append(stack, resolved)); err != nil {
					return err
				}
				continue
			}
			if resolved == w.skip {
				continue
			}
			f, err := w.l.file(child, resolved)
			if err != nil {
				return err
			}
			w.files = append(w.files, f)
			continue
		}
		if e.IsDir() {
			if strings.HasPrefix(e.Name(), ".") {
				continue
			}
			if _, ok := w.seen[childReal]; ok {
				return fmt.Errorf("%s is a directory already read as %s: each directory is read once", child, w.seen[childReal])
			}
			w.seen[childReal] = child
			if err := w.dir(child, childReal, append(stack, childReal)); err != nil {
				return err
			}
			continue
		}
		if !isManifest(e.Name()) || childReal == w.skip {
			continue
		}
		f, err := w.l.file(child, childReal)
		if err != nil {
			return err
		}
		w.files = append(w.files, f)
	}
	return nil
}

// file checks one file before anything is read: a regular file, within the
// per-file ceiling and, with everything listed so far, the total one.
func (l *Loader) file(name, resolved string) (File, error) {
	info, err := os.Stat(resolved)
	if err != nil {
		return File{}, err
	}
	if !info.Mode().IsRegular() {
		return File{}, fmt.Errorf("%s is not a regular file (%s): only regular files are read; use - for stdin", name, kindOf(info.Mode()))
	}
	if err := l.account(name, info.Size()); err != nil {
		return File{}, err
	}
	return File{Name: name, path: resolved, size: info.Size()}, nil
}

func (l *Loader) account(name string, size int64) error {
	if size > l.limits.MaxFileSize {
		return fmt.Errorf("%s is %s, over the ceiling of %s per file (--max-file-size)", name, human(size), human(l.limits.MaxFileSize))
	}
	l.total += size
	if l.total > l.limits.MaxInputSize {
		return fmt.Errorf("%s brings the input to %s, over the ceiling of %s in total (--max-input-size)", name, human(l.total), human(l.limits.MaxInputSize))
	}
	return nil
}

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
		return nil, fmt.Errorf("%s grew over the ceiling of %s per file (--max-file-size) while it was read", f.Name, human(l.limits.MaxFileSize))
	}
	if l.total += int64(len(data)) - f.size; l.total > l.limits.MaxInputSize {
		return nil, fmt.Errorf("%s grew while it was read, bringing the input over the ceiling of %s in total (--max-input-size)", f.Name, human(l.limits.MaxInputSize))
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
		return nil, fmt.Errorf("%s is over the ceiling of %s per file (--max-file-size)", name, human(l.limits.MaxFileSize))
	}
	if err := l.account(name, int64(len(data))); err != nil {
		return nil, err
	}
	return data, nil
}

// ReadConfined reads a file named by a flag (already Confined) within the
// given ceiling.
func (l *Loader) ReadConfined(flag, name, resolved string, ceiling int64) ([]byte, error) {
	info, err := os.Stat(resolved)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s %s is not a regular file (%s)", flag, name, kindOf(info.Mode()))
	}
	if info.Size() > ceiling {
		return nil, fmt.Errorf("%s %s is %s, over the ceiling of %s", flag, name, human(info.Size()), human(ceiling))
	}
	fh, err := os.Open(resolved)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	defer func() { _ = fh.Close() }()
	data, err := io.ReadAll(io.LimitReader(fh, ceiling+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	if int64(len(data)) > ceiling {
		return nil, fmt.Errorf("%s %s grew over the ceiling of %s while it was read", flag, name, human(ceiling))
	}
	return data, nil
}

// Limits are the ceilings in force.
func (l *Loader) Limits() Limits { return l.limits }

// The hints of the confinement errors.
const (
	linkHint = "symlinks are followed only while they stay inside the PATH they are reached from; " + liftHint
	pathHint = "files are read only from inside the current directory and the PATHs; " + liftHint
	liftHint = "pass --load-restrictor=" + string(None) + " to lift this in a tree you trust"
)

// resolve resolves abs, naming the symlink on the way when
// it is part of a loop or dangles.
func (l *Loader) resolve(abs string) (string, error) {
	resolved, err := filepath.EvalSymlinks(abs)
	if err == nil {
		return resolved, nil
	}
	if link, target := l.firstLink(abs); link != "" {
		if isLoop(abs) {
			return "", fmt.Errorf("%s is a symlink to %s, part of a symlink loop", link, target)
		}
		if _, statErr := os.Stat(abs); errors.Is(statErr, fs.ErrNotExist) {
			return "", fmt.Errorf("%s is a symlink to %s, which does not exist", link, target)
		}
	}
	return "", err
}

// outside is the error for a path that resolves outside where it must stay.
func (l *Loader) outside(p, abs, resolved, where string) error {
	link, target := l.firstLink(abs)
	if link == "" {
		return fmt.Errorf("%s resolves to %s, outside %s: %s", p, resolved, where, pathHint)
	}
	return fmt.Errorf("%s is a symlink to %s, which resolves to %s, outside %s: %s", link, target, resolved, where, linkHint)
}

// firstLink finds the first symlink on the way to abs, named from the
// current directory when abs is below it.
func (l *Loader) firstLink(abs string) (link, target string) {
	base := l.cwd
	rel, err := filepath.Rel(l.cwd, abs)
	if err != nil || !within(abs, l.cwd) {
		base, rel = string(filepath.Separator), strings.TrimPrefix(abs, string(filepath.Separator))
	}
	cur := base
	parts := strings.Split(rel, string(filepath.Separator))
	for i, part := range parts {
		cur = filepath.Join(cur, part)
		info, err := os.Lstat(cur)
		if err != nil {
			return "", ""
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			t, _ := os.Readlink(cur)
			name := filepath.Join(parts[:i+1]...)
			if base != l.cwd {
				name = cur
			}
			return filepath.ToSlash(name), t
		}
	}
	return "", ""
}

func isLoop(p string) bool {
	_, err := os.Stat(p)
	return errors.Is(err, syscall.ELOOP)
}

func isManifest(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// within tells whether p is dir or below it (both clean and absolute).
func within(p, dir string) bool {
	if p == dir {
		return true
	}
	if dir == string(filepath.Separator) {
		return strings.HasPrefix(p, dir)
	}
	return strings.HasPrefix(p, dir+string(filepath.Separator))
}

func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	}
	return m.Type().String()
}

// human prints a size the way the flags take it.
func human(n int64) string {
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
