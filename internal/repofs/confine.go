package repofs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// The hints of the confinement errors.
const (
	linkHint = "symlinks are followed only while they stay inside the PATH they are reached from; " + liftHint
	pathHint = "files are read only from inside the current directory and the PATHs; " + liftHint
	liftHint = "pass --load-restrictor=" + string(None) + " to lift this in a tree you trust"
)

// resolve resolves abs, naming the symlink on the way when
// it is part of a loop or dangles. Nothing inside a .git directory (or a
// worktree's .git file), nor .hg or .svn, resolves: Git's metadata holds credentials (the
// token actions/checkout persists in .git/config), and no manifest lives
// there; the path as written is checked before the disk is asked, the
// resolved one after its symlinks.
func (l *Loader) resolve(abs string) (string, error) {
	if err := notGit(l.name(abs), abs); err != nil {
		return "", err
	}
	resolved, err := l.evalSymlinks(abs)
	if err == nil {
		return resolved, notGit(l.name(abs), resolved)
	}
	if link, target := l.firstLink(abs); link != "" {
		if l.restrictor == RootOnly {
			return "", unresolved(link, target, l.topName())
		}
		if isLoop(abs) {
			return "", fmt.Errorf("%s is a symlink to %s, part of a symlink loop", link, target)
		}
		if _, statErr := os.Stat(abs); errors.Is(statErr, fs.ErrNotExist) {
			return "", fmt.Errorf("%s is a symlink to %s, which does not exist", link, target)
		}
	}
	return "", err
}

// evalSymlinks is filepath.EvalSymlinks, each directory resolved once: a
// kustomization of 100,000 entries reached through a chain of 250
// symlinks costs 100,000 lookups, not 25 million. Failures are not kept:
// the caller names them the slow way, and they end the render.
func (l *Loader) evalSymlinks(abs string) (string, error) {
	l.mu.Lock()
	resolved, ok := l.resolved[abs]
	l.mu.Unlock()
	if ok {
		return resolved, nil
	}
	dir := filepath.Dir(abs)
	if dir == abs {
		return abs, nil // the file system's root
	}
	rdir, err := l.evalSymlinks(dir)
	if err != nil {
		return "", err
	}
	if resolved, err = filepath.EvalSymlinks(filepath.Join(rdir, filepath.Base(abs))); err != nil {
		return "", err
	}
	l.mu.Lock()
	if l.resolved == nil {
		l.resolved = map[string]string{}
	}
	l.resolved[abs] = resolved
	l.mu.Unlock()
	return resolved, nil
}

// outside is the error for a path that resolves outside where it must stay.
func (l *Loader) outside(p, abs, resolved, where string) error {
	link, target := l.firstLink(abs)
	if link == "" {
		if filepath.Clean(p) == resolved {
			return fmt.Errorf("%s is outside %s: %s", p, where, pathHint)
		}
		return fmt.Errorf("%s resolves to %s, outside %s: %s", p, resolved, where, pathHint)
	}
	return unresolved(link, target, where)
}

// unresolved is the one error for a symlink that does not lead to a file
// inside where it must stay: a dangling one, a loop and one that leads
// outside read alike, and the path it resolves to is not named, so that no
// message tells whether a path outside exists.
func unresolved(link, target, where string) error {
	return fmt.Errorf("%s is a symlink to %s, which does not lead to a file inside %s (it dangles, loops or leaves it): %s", link, target, where, linkHint)
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

// notGit refuses the file name when it lies inside Git's metadata: a
// component of its resolved path is .git (in any case: some file systems
// ignore it).
func notGit(name, resolved string) error {
	for _, part := range strings.Split(filepath.ToSlash(resolved), "/") {
		for _, vcs := range vcsDirs {
			if strings.EqualFold(part, vcs) {
				return &gitError{name, vcs}
			}
		}
	}
	return nil
}

// vcsDirs are the folders of version control metadata: Git's (.git is a
// file in a worktree), Mercurial's and Subversion's.
var vcsDirs = []string{".git", ".hg", ".svn"}

// gitError refuses a path inside Git's metadata; it tells nothing of what
// lies outside the tree, so it is said as it is.
type gitError struct{ name, dir string }

func (e *gitError) Error() string {
	return e.name + " lies inside a " + e.dir + " directory: flapp-services never reads a repository's version control metadata, which holds credentials"
}

// name is how messages name an absolute path: from the current directory
// when it lies below it.
func (l *Loader) name(abs string) string {
	if rel, err := filepath.Rel(l.cwd, abs); err == nil && within(abs, l.cwd) {
		return filepath.ToSlash(rel)
	}
	return filepath.ToSlash(abs)
}
