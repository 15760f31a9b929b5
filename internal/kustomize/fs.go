package kustomize

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"

	"github.com/fedlearner/flapp-services/internal/repofs"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// confinedFS is the file system krusty builds on: the repository as
// repofs.Tree confines it (symlinks that stay inside, the render's size
// ceilings), read-only, with some kustomization files read as rewritten.
// Every YAML file it gives kustomize is within the node ceiling, aliases
// expanded; every read counts toward the size ceilings (the scan's read of
// a file stands for the build's first). kustomize sees the repository's
// top as the root of the file system, so its messages name a file as
// /overlays/prod/kustomization.yaml, from there, and never where the
// repository lies on the disk; without the repository's confinement
// (--load-restrictor=none) it sees the disk as it is.
type confinedFS struct {
	build    *Root
	top      string            // the directory on disk kustomize sees as /
	rewrites map[string][]byte // resolved path -> content
	served   map[string]bool   // resolved paths read once from the scan's copy
	refused  error             // the first read refused for a ceiling: the build's error, in these words
}

var _ filesys.FileSystem = (*confinedFS)(nil)

var errReadOnly = errors.New("flapp-services' kustomize build writes nothing")

func newConfinedFS(b *Root) *confinedFS {
	top := string(filepath.Separator)
	if b.tight {
		top = b.tree.Dir()
	}
	return &confinedFS{build: b, top: top, rewrites: b.rewrites, served: map[string]bool{}}
}

// abs is the path on disk of p, a path kustomize names (absolute, from
// its root): inside the top, whatever ".." it holds.
func (c *confinedFS) abs(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%s: internal error: a relative path in the build", p)
	}
	return filepath.Join(c.top, filepath.Clean(p)), nil
}

// named is err with the path of a file system error named as kustomize
// names it: an error of the disk's says where the repository lies.
func (c *confinedFS) named(err error) error {
	var pe *iofs.PathError
	if errors.As(err, &pe) {
		return &iofs.PathError{Op: pe.Op, Path: c.seen(pe.Path), Err: pe.Err}
	}
	return err
}

// seen is how kustomize names abs, a path on disk inside the top.
func (c *confinedFS) seen(abs string) string {
	rel, err := filepath.Rel(c.top, abs)
	if err != nil {
		return abs
	}
	return filepath.Join(string(filepath.Separator), rel)
}

func (c *confinedFS) Create(string) (filesys.File, error) { return nil, errReadOnly }
func (c *confinedFS) Mkdir(string) error                  { return errReadOnly }
func (c *confinedFS) MkdirAll(string) error               { return errReadOnly }
func (c *confinedFS) RemoveAll(string) error              { return errReadOnly }
func (c *confinedFS) WriteFile(string, []byte) error      { return errReadOnly }

// Open is not used by a build; reads go through ReadFile, which bounds
// them.
func (c *confinedFS) Open(p string) (filesys.File, error) {
	return nil, fmt.Errorf("%s: flapp-services' kustomize build reads files whole, through its ceilings", p)
}

func (c *confinedFS) IsDir(p string) bool {
	abs, err := c.abs(p)
	if err != nil || c.build.virtual[abs] != nil {
		return false
	}
	info, err := c.build.tree.Stat(abs)
	return err == nil && info.IsDir()
}

func (c *confinedFS) Exists(p string) bool {
	abs, err := c.abs(p)
	if err != nil {
		return false
	}
	if c.build.virtual[abs] != nil {
		return true
	}
	_, err = c.build.tree.Stat(abs)
	return err == nil
}

func (c *confinedFS) ReadDir(p string) ([]string, error) {
	abs, err := c.abs(p)
	if err != nil {
		return nil, err
	}
	names, err := c.build.tree.ReadDir(abs)
	return names, c.named(err)
}

// CleanedAbs is filesys' on-disk CleanedAbs: the path with its symlinks
// resolved, as a directory and a file name, as kustomize names them; the
// path must resolve inside the tree.
func (c *confinedFS) CleanedAbs(p string) (filesys.ConfirmedDir, string, error) {
	abs, err := c.abs(p)
	if err != nil {
		return "", "", err
	}
	if c.build.virtual[abs] != nil {
		return filesys.ConfirmedDir(c.seen(filepath.Dir(abs))), filepath.Base(abs), nil
	}
	resolved, err := c.build.tree.Resolve(abs)
	if err != nil {
		return "", "", c.named(err)
	}
	info, err := os.Stat(resolved)
	if err != nil {
		return "", "", c.named(err)
	}
	if info.IsDir() {
		return filesys.ConfirmedDir(c.seen(resolved)), "", nil
	}
	return filesys.ConfirmedDir(c.seen(filepath.Dir(resolved))), filepath.Base(resolved), nil
}

// Glob is not used by a build (kustomize's API v0.21.2 never calls it): it
// would read directories of the disk for a pattern a repository wrote.
func (c *confinedFS) Glob(pattern string) ([]string, error) {
	return nil, fmt.Errorf("flapp-services' kustomize build does not glob (%s)", pattern)
}

func (c *confinedFS) ReadFile(p string) ([]byte, error) {
	abs, err := c.abs(p)
	if err != nil {
		return nil, err
	}
	if data, ok := c.build.virtual[abs]; ok {
		return data, nil
	}
	tree := c.build.tree
	resolved, err := tree.Resolve(abs)
	if err != nil {
		return nil, c.named(err)
	}
	data, scanned := c.build.read[resolved]
	switch {
	case scanned && !c.served[resolved]:
		c.served[resolved] = true
	case scanned:
		err = tree.Charge(tree.Name(abs), int64(len(data)))
	default:
		data, err = tree.ReadFile(abs)
	}
	if errors.Is(err, repofs.ErrCeiling) {
		return nil, c.refuse(err)
	}
	if err != nil {
		return nil, c.named(err) // kustomize tries what is not a file as a directory
	}
	if content, ok := c.rewrites[resolved]; ok {
		data = content
	}
	if !c.build.dataFiles[resolved] {
		if msg := yamlProblem(data, c.build.limits.MaxDocumentNodes); msg != "" {
			return nil, c.refuse(fmt.Errorf("%s: %s", tree.Name(abs), msg))
		}
	}
	return data, nil
}

// refuse keeps the first error of a ceiling as the build's own.
func (c *confinedFS) refuse(err error) error {
	if c.refused == nil {
		c.refused = err
	}
	return err
}

// Walk is not used by a build.
func (c *confinedFS) Walk(p string, _ filepath.WalkFunc) error {
	return fmt.Errorf("%s: flapp-services' kustomize build does not walk directories", p)
}
