package repofs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The Tree a kustomization build reads through, and the reads of files
// named by flags: each expectation is written here by hand.

// treeOf lays out base (tree) with links, makes repo/app the current
// directory and repo the repository root, and returns the loader, the
// Tree of the PATH "." and the resolved temporary directory.
func treeOf(t *testing.T, r Restrictor, limits Limits, files, links map[string]string) (*Loader, *Tree, string) {
	t.Helper()
	dir := tree(t, files, links)
	dir, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	t.Chdir(filepath.Join(dir, "repo", "app"))
	l, err := New(r, limits)
	require.NoError(t, err)
	require.NoError(t, l.SetTop(filepath.Join(dir, "repo")))
	root, err := l.Resolve(".")
	require.NoError(t, err)
	return l, l.Tree(root), dir
}

var treeFiles = map[string]string{
	"secret.yaml":             "secret",
	"repo/base/b.yaml":        "b",
	"repo/base/z.yaml":        "z",
	"repo/base/a.yaml":        "a",
	"repo/app/k.yaml":         "k",
	"repo/app/.git/config":    "token",
	"repo/app/sub/.Git/x.yml": "x",
}

func TestTreeIsTheRepositoryRootOrThePathAlone(t *testing.T) {
	l, tr, dir := treeOf(t, RootOnly, Limits{}, treeFiles, nil)
	assert.Equal(t, filepath.Join(dir, "repo"), tr.Dir(), "a PATH inside the repository reads the repository")
	assert.Equal(t, "the repository root (..)", tr.where())

	outside, err := l.Resolve(filepath.Join(dir, "secret.yaml"))
	require.NoError(t, err, "a PATH written outside is the caller's choice")
	assert.Equal(t, filepath.Join(dir, "secret.yaml"), l.Tree(outside).Dir(), "a PATH outside is read on its own")
	assert.Equal(t, "the PATH ../../secret.yaml", l.Tree(outside).where(), "named from the current directory")

	assert.Equal(t, RootOnly, l.Restrictor())
	assert.Equal(t, Limits{MaxFileSize: DefaultMaxFileSize, MaxInputSize: DefaultMaxInputSize}, l.Limits())
}

func TestTreeNames(t *testing.T) {
	_, tr, dir := treeOf(t, RootOnly, Limits{}, treeFiles, nil)
	assert.Equal(t, "k.yaml", tr.Name(filepath.Join(dir, "repo/app/k.yaml")), "below the current directory")
	assert.Equal(t, "../base/a.yaml", tr.Name(filepath.Join(dir, "repo/base/a.yaml")), "in the tree, above the current directory")
	assert.Equal(t, filepath.Join(dir, "secret.yaml"), tr.Name(filepath.Join(dir, "secret.yaml")), "outside: as it is")
}

func TestTreeResolve(t *testing.T) {
	links := map[string]string{
		"repo/app/up":       "../base",            // inside the tree, outside the PATH: a base
		"repo/app/out.yaml": "../../secret.yaml",  // outside, exists
		"repo/app/no.yaml":  "../../nothing.yaml", // outside, does not exist
		"repo/app/dd.yaml":  "gone.yaml",          // dangling inside
		"repo/app/two.yaml": "out.yaml",           // two hops to outside
	}
	_, tr, dir := treeOf(t, RootOnly, Limits{}, treeFiles, links)

	got, err := tr.Resolve(filepath.Join(dir, "repo/app/up/a.yaml"))
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "repo/base/a.yaml"), got)
	got, err = tr.Resolve(filepath.Join(dir, "repo/app/sub/../k.yaml"))
	require.NoError(t, err, "cleaned first")
	assert.Equal(t, filepath.Join(dir, "repo/app/k.yaml"), got)

	const hint = ": symlinks are followed only while they stay inside the PATH they are reached from; pass --load-restrictor=LoadRestrictionsNone to lift this in a tree you trust"
	for p, want := range map[string]string{
		"out.yaml": "out.yaml is a symlink to ../../secret.yaml, which does not lead to a file inside the repository root (..) (it dangles, loops or leaves it)" + hint,
		"no.yaml":  "no.yaml is a symlink to ../../nothing.yaml, which does not lead to a file inside the repository root (..) (it dangles, loops or leaves it)" + hint,
		"dd.yaml":  "dd.yaml is a symlink to gone.yaml, which does not lead to a file inside the repository root (..) (it dangles, loops or leaves it)" + hint,
		"two.yaml": "two.yaml is a symlink to out.yaml, which does not lead to a file inside the repository root (..) (it dangles, loops or leaves it)" + hint,
	} {
		_, err := tr.Resolve(filepath.Join(dir, "repo/app", p))
		require.Error(t, err, p)
		assert.Equal(t, want, err.Error(), p)
	}

	// A path written outside the tree: the same words whether it exists.
	const pathHint = ": files are read only from inside the current directory and the PATHs; pass --load-restrictor=LoadRestrictionsNone to lift this in a tree you trust"
	for _, p := range []string{"secret.yaml", "nothing.yaml"} {
		_, err := tr.Resolve(filepath.Join(dir, p))
		require.Error(t, err, p)
		assert.Equal(t, filepath.Join(dir, p)+" is outside the repository root (..)"+pathHint, err.Error(), p)
	}

	// Version control metadata, in any case, is refused as it is named.
	for p, vcs := range map[string]string{"repo/app/.git/config": ".git", "repo/app/sub/.Git/x.yml": ".git", "repo/app/.svn/x": ".svn", "repo/app/.hg": ".hg"} {
		_, err := tr.Resolve(filepath.Join(dir, p))
		var git *gitError
		require.True(t, errors.As(err, &git), "%s: %v", p, err)
		assert.Equal(t, vcs, git.dir, p)
		assert.Contains(t, err.Error(), " lies inside a "+vcs+" directory: flapp-services never reads a repository's version control metadata, which holds credentials", p)
	}
}

func TestTreeWithoutRestrictionFollowsLinksOut(t *testing.T) {
	_, tr, dir := treeOf(t, None, Limits{}, treeFiles, map[string]string{"repo/app/out.yaml": "../../secret.yaml"})
	got, err := tr.Resolve(filepath.Join(dir, "repo/app/out.yaml"))
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "secret.yaml"), got)
	data, err := tr.ReadFile(filepath.Join(dir, "secret.yaml"))
	require.NoError(t, err)
	assert.Equal(t, "secret", string(data))
	_, err = tr.Resolve(filepath.Join(dir, "repo/app/.git/config"))
	assert.Error(t, err, ".git is never read, restricted or not")
}

func TestTreeReadsWithinTheCeilings(t *testing.T) {
	files := map[string]string{
		"repo/app/k.yaml":   "12345678", // 8 bytes
		"repo/app/big.yaml": "123456789",
		"repo/app/m.yaml":   "1234567",
	}
	_, tr, dir := treeOf(t, RootOnly, Limits{MaxFileSize: 8, MaxInputSize: 20}, files, nil)
	p := func(name string) string { return filepath.Join(dir, "repo/app", name) }

	data, err := tr.ReadFile(p("k.yaml"))
	require.NoError(t, err, "at the per-file ceiling")
	assert.Equal(t, "12345678", string(data))

	_, err = tr.ReadFile(p("big.yaml"))
	require.ErrorIs(t, err, ErrCeiling, "one byte over the per-file ceiling")
	assert.Equal(t, "big.yaml is 9 bytes, over the ceiling of 8 bytes per file (--max-file-size)", err.Error())

	_, err = tr.ReadFile(p("m.yaml"))
	require.NoError(t, err, "15 bytes in all")
	require.NoError(t, tr.Charge("k.yaml", 5), "read again from memory: 20 bytes, at the total ceiling")
	err = tr.Charge("k.yaml", 1)
	require.ErrorIs(t, err, ErrCeiling, "one byte past the total ceiling")
	assert.Equal(t, "k.yaml brings the input to 21 bytes, over the ceiling of 20 bytes in total (--max-input-size)", err.Error())

	_, err = tr.ReadFile(p("missing.yaml"))
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.NotErrorIs(t, err, ErrCeiling, "a missing file is not a ceiling")

	_, err = tr.ReadFile(filepath.Join(dir, "repo/app"))
	require.Error(t, err)
	assert.Equal(t, ". is not a regular file (a directory): only regular files are read; use - for stdin", err.Error())
}

func TestTreeStatAndReadDir(t *testing.T) {
	_, tr, dir := treeOf(t, RootOnly, Limits{}, treeFiles, map[string]string{"repo/app/out": "../.."})
	names, err := tr.ReadDir(filepath.Join(dir, "repo/base"))
	require.NoError(t, err)
	assert.Equal(t, []string{"a.yaml", "b.yaml", "z.yaml"}, names, "sorted")
	info, err := tr.Stat(filepath.Join(dir, "repo/base/b.yaml"))
	require.NoError(t, err)
	assert.Equal(t, int64(1), info.Size())
	_, err = tr.Stat(filepath.Join(dir, "repo/app/out/secret.yaml"))
	assert.ErrorContains(t, err, "out is a symlink to ../.., which does not lead to a file inside")
	_, err = tr.ReadDir(filepath.Join(dir, "repo/app/out"))
	assert.ErrorContains(t, err, "out is a symlink to ../.., which does not lead to a file inside")
	_, err = tr.ReadDir(filepath.Join(dir, "repo/base/a.yaml"))
	assert.Error(t, err, "not a directory")
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{
		0:             "0 bytes",
		1023:          "1023 bytes",
		1 << 10:       "1Ki",
		1<<10 + 1:     "1025 bytes",
		1536 << 10:    "1536Ki",
		1 << 20:       "1Mi",
		1<<20 + 1:     "1048577 bytes (1.0Mi)",
		3 << 20:       "3Mi",
		1 << 30:       "1Gi",
		5 << 30:       "5Gi",
		3<<30 + 1<<20: "3073Mi",
	} {
		assert.Equal(t, want, Size(n), "%d", n)
	}
}

func TestReadStream(t *testing.T) {
	l, err := New(RootOnly, Limits{MaxFileSize: 4, MaxInputSize: 6})
	require.NoError(t, err)
	data, err := l.ReadStream("-", strings.NewReader("1234"))
	require.NoError(t, err, "at the per-file ceiling")
	assert.Equal(t, "1234", string(data))
	_, err = l.ReadStream("-", strings.NewReader("12345"))
	require.ErrorIs(t, err, ErrCeiling)
	assert.Equal(t, "- is over the ceiling of 4 bytes per file (--max-file-size)", err.Error())
	_, err = l.ReadStream("-", strings.NewReader("12"))
	require.NoError(t, err, "6 bytes in all, at the total ceiling")
	_, err = l.ReadStream("-", strings.NewReader("1"))
	require.ErrorIs(t, err, ErrCeiling, "7 bytes in all")
	_, err = l.ReadStream("-", iotestErrReader{})
	assert.EqualError(t, err, "-: broken")
}

type iotestErrReader struct{}

func (iotestErrReader) Read([]byte) (int, error) { return 0, errors.New("broken") }

func TestReadConfined(t *testing.T) {
	dir := tree(t, map[string]string{"repo/config.yaml": "12345"}, nil)
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "repo/fifo"), 0o600))
	l, err := New(RootOnly, Limits{})
	require.NoError(t, err)
	config, err := l.Confine("--config", "config.yaml")
	require.NoError(t, err)

	data, err := l.ReadConfined("--config", "config.yaml", config, 5)
	require.NoError(t, err, "at its ceiling")
	assert.Equal(t, "12345", string(data))
	_, err = l.ReadConfined("--config", "config.yaml", config, 4)
	assert.EqualError(t, err, "--config config.yaml is 5 bytes, over the ceiling of 4 bytes")

	fifo, err := l.Confine("--config", "fifo")
	require.NoError(t, err)
	_, err = l.OpenConfined("--config", "fifo", fifo, 5)
	assert.EqualError(t, err, "--config fifo is not a regular file (a named pipe)", "never opened: opening a FIFO blocks")
	here, err := l.Confine("--check", ".")
	require.NoError(t, err)
	_, err = l.OpenConfined("--check", ".", here, 5)
	assert.EqualError(t, err, "--check . is not a regular file (a directory)")
	_, err = l.OpenConfined("--config", "gone", filepath.Join(dir, "repo/gone"), 5)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.True(t, strings.HasPrefix(err.Error(), "--config: "), err.Error())
}

func TestNewAndSetTop(t *testing.T) {
	dir := tree(t, map[string]string{"repo/a/k.yaml": "k", "other/x.yaml": "x"}, nil)
	_, err := New("LoadRestrictionsRootOnlyish", Limits{})
	assert.EqualError(t, err, `--load-restrictor must be LoadRestrictionsRootOnly or LoadRestrictionsNone, not "LoadRestrictionsRootOnlyish"`)
	for _, limits := range []Limits{{MaxFileSize: -1}, {MaxInputSize: -1}} {
		_, err := New(RootOnly, limits)
		assert.EqualError(t, err, "size ceilings must be positive", "%+v", limits)
	}
	l, err := New(None, Limits{MaxFileSize: 1})
	require.NoError(t, err)
	assert.Equal(t, Limits{MaxFileSize: 1, MaxInputSize: DefaultMaxInputSize}, l.Limits(), "zero is the default")
	assert.Equal(t, "the current directory", l.topName())

	t.Chdir(filepath.Join(dir, "repo/a"))
	l, err = New(RootOnly, Limits{})
	require.NoError(t, err)
	require.NoError(t, l.SetTop(filepath.Join(dir, "repo/a")), "the current directory itself")
	assert.Equal(t, "the current directory", l.topName())
	require.NoError(t, l.SetTop(filepath.Join(dir, "repo")))
	assert.Equal(t, "the repository root (..)", l.topName())
	err = l.SetTop(filepath.Join(dir, "other"))
	assert.ErrorContains(t, err, "does not hold the current directory")
	err = l.SetTop(filepath.Join(dir, "missing"))
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

func TestFind(t *testing.T) {
	dir := tree(t, map[string]string{"repo/k/Kustomization": "x", "repo/k/kustomization.yml": "y", "repo/f.yaml": "f"}, map[string]string{"repo/d/kustomization.yaml": "gone"})
	_ = dir
	l, err := New(RootOnly, Limits{})
	require.NoError(t, err)
	k, err := l.Resolve("k")
	require.NoError(t, err)
	got, ok := l.Find(k, "kustomization.yaml", "kustomization.yml", "Kustomization")
	assert.True(t, ok)
	assert.Equal(t, "k/kustomization.yml", got, "the first of the names that is there")
	_, ok = l.Find(k, "kustomization.yaml")
	assert.False(t, ok)
	d, err := l.Resolve("d")
	require.NoError(t, err)
	got, ok = l.Find(d, "kustomization.yaml")
	assert.True(t, ok, "a dangling link is found: the build says what is wrong with it")
	assert.Equal(t, "d/kustomization.yaml", got)
	f, err := l.Resolve("f.yaml")
	require.NoError(t, err)
	_, ok = l.Find(f, "f.yaml")
	assert.False(t, ok, "a file root finds nothing")
	assert.Equal(t, filepath.Join(dir, "repo/f.yaml"), evalOrSelf(f.Path()))
}

func evalOrSelf(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

func TestKindOf(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600))
	info, err := os.Lstat(filepath.Join(dir, "fifo"))
	require.NoError(t, err)
	assert.Equal(t, "a named pipe", kindOf(info.Mode()))
	info, err = os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, "a directory", kindOf(info.Mode()))
	info, err = os.Stat("/dev/null")
	require.NoError(t, err)
	assert.Equal(t, "a device", kindOf(info.Mode()))
	assert.Equal(t, "a socket", kindOf(fs.ModeSocket))
	assert.Equal(t, "L---------", kindOf(fs.ModeSymlink))
}

// Files leaves out the one file it is told to skip (the --config file),
// however it is reached, and lists the rest; a file PATH over the
// per-file ceiling is refused before it is read.
func TestFilesSkipAndFileRoot(t *testing.T) {
	dir := tree(t, map[string]string{"repo/p/a.yaml": "a", "repo/p/config.yaml": "c", "repo/p/z.yaml": "z", "repo/big.yaml": "123456789"},
		map[string]string{"repo/p/b.yaml": "config.yaml"})
	dir, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	l, err := New(RootOnly, Limits{MaxFileSize: 8})
	require.NoError(t, err)
	p, err := l.Resolve("p")
	require.NoError(t, err)
	files, err := l.Files(p, filepath.Join(dir, "repo/p/config.yaml"))
	require.NoError(t, err)
	var names []string
	for _, f := range files {
		names = append(names, f.Name)
	}
	assert.Equal(t, []string{"p/a.yaml", "p/z.yaml"}, names, "config.yaml and the link to it left out, z.yaml still listed")

	big, err := l.Resolve("big.yaml")
	require.NoError(t, err)
	_, err = l.Files(big, "")
	require.ErrorIs(t, err, ErrCeiling)
	assert.Equal(t, "big.yaml is 9 bytes, over the ceiling of 8 bytes per file (--max-file-size)", err.Error())
}
