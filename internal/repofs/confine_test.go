package repofs

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// evalSymlinks, which resolves each directory once, resolves every path
// as filepath.EvalSymlinks does: links to directories and files, relative
// and absolute, chained, through "..", and twice (from its memory).
func TestEvalSymlinksAsTheOS(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for _, d := range []string{"real/sub", "other"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	for _, f := range []string{"real/a.yaml", "real/sub/b.yaml", "other/c.yaml"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), nil, 0o644))
	}
	for link, target := range map[string]string{
		"l0":           "l1", // a chain of directory links
		"l1":           "real",
		"abs":          filepath.Join(dir, "real/sub"),
		"real/up":      "../other",   // relative to the link's own directory
		"real/sub/up2": "../../l0",   // back through the chain
		"real/file":    "sub/b.yaml", // a link to a file
		"real/sub/f2":  "../file",    // to a link to a file
	} {
		require.NoError(t, os.Symlink(target, filepath.Join(dir, link)))
	}
	ld := &Loader{}
	var paths []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		paths = append(paths, p)
		return err
	}))
	paths = append(paths, filepath.Join(dir, "l0/sub/up2/up/c.yaml"), filepath.Join(dir, "abs/f2"), filepath.Join(dir, "l0/up/../a.yaml"))
	for range 2 {
		for _, p := range paths {
			p = filepath.Clean(p)
			want, err := filepath.EvalSymlinks(p)
			require.NoError(t, err, p)
			got, err := ld.evalSymlinks(p)
			require.NoError(t, err, p)
			assert.Equal(t, want, got, p)
		}
	}
	_, err = ld.evalSymlinks(filepath.Join(dir, "l0/missing"))
	assert.Error(t, err, "a path that does not exist")
}
