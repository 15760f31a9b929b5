package repofs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
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
// what would exhaust a repo-server (SECURITY.md, Memory and Known limits,
// measure what the largest inputs they admit cost).
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
	top        string   // the repository root, resolved: the current directory unless SetTop
	roots      []string // resolved PATHs (a file's directory), for Confine
	total      int64    // bytes read or about to be read

	mu       sync.Mutex        // a build reads on its own goroutine
	resolved map[string]string // evalSymlinks' resolved paths
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
	return &Loader{restrictor: r, limits: limits, cwd: cwd, top: cwd}, nil
}

// SetTop makes dir, the current directory or a directory above it, the
// repository root: PATHs and flag files written inside it must resolve
// inside it, and a kustomization may read anything inside it (an overlay's
// ../../base). Argo CD's plugin runs in the Application's directory of a
// checkout: its repository root lies above.
func (l *Loader) SetTop(dir string) error {
	resolved, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	if !within(l.cwd, resolved) {
		return fmt.Errorf("the repository root %s does not hold the current directory %s", dir, l.cwd)
	}
	l.top = resolved
	return nil
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
// inside the repository root (the current directory unless SetTop) must
// resolve inside it: the symlinks on the way belong to the tree. A PATH
// written outside it (absolute, or ../) is the caller's explicit choice and
// is taken as it resolves.
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
	if l.restrictor == RootOnly && within(abs, l.top) && !within(resolved, l.top) {
		return Root{}, l.outside(p, abs, resolved, l.topName())
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
// resolve inside the repository root or inside a PATH resolved so far (for
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
	if l.restrictor == RootOnly && !within(resolved, l.top) && !slices.ContainsFunc(l.roots, func(r string) bool { return within(resolved, r) }) {
		err := l.outside(p, filepath.Clean(abs), resolved, l.topName()+" and every PATH")
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

// Find returns the first of names that is an entry directly in the
// directory root (a file, a directory or a link, even a dangling one),
// named as Files names it, or false when none is; a file root finds
// nothing. It reads nothing.
func (l *Loader) Find(root Root, names ...string) (string, bool) {
	if !root.dir {
		return "", false
	}
	for _, name := range names {
		if _, err := os.Lstat(filepath.Join(root.resolved, name)); err == nil {
			return filepath.ToSlash(filepath.Join(root.Name, name)), true
		}
	}
	return "", false
}

// topName names the repository root in messages.
func (l *Loader) topName() string {
	if l.top == l.cwd {
		return "the current directory"
	}
	rel, err := filepath.Rel(l.cwd, l.top)
	if err != nil {
		rel = l.top
	}
	return "the repository root (" + filepath.ToSlash(rel) + ")"
}

// Path is the root's resolved path.
func (r Root) Path() string { return r.resolved }

// Restrictor is the restrictor in force.
func (l *Loader) Restrictor() Restrictor { return l.restrictor }

// Limits are the ceilings in force.
func (l *Loader) Limits() Limits { return l.limits }
