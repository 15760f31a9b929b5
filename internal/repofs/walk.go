package repofs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

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
					if w.l.restrictor == RootOnly {
						// Whether it dangles inside or leads to nothing outside
						// reads alike: no message tells what exists outside.
						return unresolved(child, target, w.root.Name+" (the PATH it was reached from)")
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
				return unresolved(child, target, w.root.Name+" (the PATH it was reached from)")
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
	if err := notGit(name, resolved); err != nil {
		return File{}, err
	}
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
		return ceiling("%s is %s, over the ceiling of %s per file (--max-file-size)", name, Size(size), Size(l.limits.MaxFileSize))
	}
	l.total += size
	if l.total > l.limits.MaxInputSize {
		return ceiling("%s brings the input to %s, over the ceiling of %s in total (--max-input-size)", name, Size(l.total), Size(l.limits.MaxInputSize))
	}
	return nil
}

// isManifest says whether a file is listed: a .yaml, .yml or .json file,
// or one named Kustomization, the one kustomization file name kustomize
// reads without an extension (the caller decides what a kustomization is).
func isManifest(name string) bool {
	if name == "Kustomization" {
		return true
	}
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
