package repofs

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tree lays out files and symlinks under a fresh directory and makes it the
// current directory for the test.
func tree(t *testing.T, files, links map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, content := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for p, target := range links {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, full); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(filepath.Join(root, "repo"))
	return root
}

// list resolves paths and lists their files, or returns the first error.
func list(t *testing.T, r Restrictor, limits Limits, paths ...string) ([]string, error) {
	t.Helper()
	l, err := New(r, limits)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range paths {
		root, err := l.Resolve(p)
		if err != nil {
			return nil, err
		}
		files, err := l.Files(root, "")
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if _, err := l.Read(f); err != nil {
				return nil, err
			}
			names = append(names, f.Name)
		}
	}
	return names, nil
}

func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not contain %q", err, p)
		}
	}
}

var base = map[string]string{
	"secret.yaml":          "secret",
	"private/x.yaml":       "secret",
	"repo/apps/a.yaml":     "a",
	"repo/apps/.hidden/h":  "h",
	"repo/apps/z/z.json":   "z",
	"repo/apps/notes.txt":  "n",
	"repo/store/v1/s.yaml": "s",
}

func TestLinksOutOfThePathAreRefused(t *testing.T) {
	for name, tc := range map[string]struct {
		links map[string]string
		path  string
		want  []string
	}{
		"file":        {map[string]string{"repo/apps/l.yaml": "../../secret.yaml"}, "apps", []string{"apps/l.yaml is a symlink to ../../secret.yaml", "which does not lead to a file inside apps"}},
		"dir":         {map[string]string{"repo/apps/v": "../../private"}, "apps", []string{"apps/v is a symlink to ../../private"}},
		"sibling":     {map[string]string{"repo/apps/s": "../store"}, "apps", []string{"apps/s", "which does not lead to a file inside apps"}},
		"path itself": {map[string]string{"repo/deploy": "../private"}, "deploy", []string{"deploy is a symlink to ../private", "which does not lead to a file inside the current directory"}},
		"path parent": {map[string]string{"repo/deploy": "../private"}, "deploy/x.yaml", []string{"deploy is a symlink to ../private"}},
		"dangling":    {map[string]string{"repo/apps/d.yaml": "nowhere.yaml"}, "apps", []string{"apps/d.yaml is a symlink to nowhere.yaml, which does not lead to a file inside apps"}},
		"file loop":   {map[string]string{"repo/apps/l1.yaml": "l2.yaml", "repo/apps/l2.yaml": "l1.yaml"}, "apps", []string{"apps/l1.yaml", "loop"}},
		"dir loop":    {map[string]string{"repo/apps/z/up": ".."}, "apps", []string{"apps/z/up is a symlink to .., which leads back to apps: a symlink loop"}},
		"dir twice":   {map[string]string{"repo/apps/s1": "z", "repo/apps/s2": "z"}, "apps", []string{"apps/s2 is a symlink to z, a directory already read as apps/s1"}},
	} {
		t.Run(name, func(t *testing.T) {
			tree(t, base, tc.links)
			_, err := list(t, RootOnly, Limits{}, tc.path)
			wantErr(t, err, tc.want...)
		})
	}
}

func TestLinksInsideThePathAreFollowed(t *testing.T) {
	tree(t, base, map[string]string{
		"repo/apps/cur":       ".hidden",
		"repo/apps/h.yaml":    ".hidden/h",
		"repo/apps/LICENSE":   "../../secret.yaml", // never read: no manifest extension
		"repo/apps/.vendor":   "../../private",     // never walked: hidden
		"repo/apps/gone.txt":  "nowhere",
		"repo/store-link":     "store/v1",
		"repo/apps/z/up.yaml": "../a.yaml",
	})
	got, err := list(t, RootOnly, Limits{}, "apps", "store-link")
	if err != nil {
		t.Fatal(err)
	}
	want := "apps/a.yaml apps/h.yaml apps/z/up.yaml apps/z/z.json store-link/s.yaml"
	if strings.Join(got, " ") != want {
		t.Errorf("got %v, want %s", got, want)
	}
}

func TestNoneFollowsLinksAnywhereButNotInLoops(t *testing.T) {
	tree(t, base, map[string]string{"repo/apps/l.yaml": "../../secret.yaml", "repo/apps/v": "../../private"})
	got, err := list(t, None, Limits{}, "apps")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, " ") != "apps/a.yaml apps/l.yaml apps/v/x.yaml apps/z/z.json" {
		t.Errorf("got %v", got)
	}
	tree(t, base, map[string]string{"repo/apps/z/up": ".."})
	_, err = list(t, None, Limits{}, "apps")
	wantErr(t, err, "loop")
}

func TestConfine(t *testing.T) {
	tree(t, base, map[string]string{"repo/cfg.yaml": "../secret.yaml", "repo/ok.yaml": "store/v1/s.yaml"})
	l, err := New(RootOnly, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.Confine("--config", "cfg.yaml")
	wantErr(t, err, "--config cfg.yaml is a symlink to ../secret.yaml")
	_, err = l.Confine("--config", "../secret.yaml")
	wantErr(t, err, "--config ../secret.yaml resolves to", "outside the current directory and every PATH")
	if _, err := l.Confine("--config", "ok.yaml"); err != nil {
		t.Error(err)
	}
	if _, err := l.Resolve("../private"); err != nil { // written outside: the caller's choice
		t.Fatal(err)
	}
	if _, err := l.Confine("--config", "../private/x.yaml"); err != nil {
		t.Errorf("inside a PATH: %v", err)
	}
}

func TestCeilings(t *testing.T) {
	tree(t, map[string]string{"repo/apps/a.yaml": "12345", "repo/apps/b.yaml": "12345", "repo/apps/c.yaml": "12345"}, nil)
	_, err := list(t, RootOnly, Limits{MaxFileSize: 4}, "apps")
	wantErr(t, err, "apps/a.yaml is 5 bytes, over the ceiling of 4 bytes per file (--max-file-size)")
	_, err = list(t, RootOnly, Limits{MaxInputSize: 11}, "apps")
	wantErr(t, err, "apps/c.yaml brings the input to 15 bytes, over the ceiling of 11 bytes in total (--max-input-size)")
	if _, err := list(t, RootOnly, Limits{MaxFileSize: 5, MaxInputSize: 15}, "apps"); err != nil {
		t.Error(err)
	}

	l, err := New(RootOnly, Limits{MaxFileSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.ReadStream("<stdin>", strings.NewReader("12345"))
	wantErr(t, err, "<stdin> is over the ceiling of 4 bytes per file")
}

func TestSpecialFilesAreRefused(t *testing.T) {
	tree(t, base, map[string]string{"repo/apps/zero.yaml": "/dev/zero"})
	_, err := list(t, None, Limits{}, "apps")
	wantErr(t, err, "apps/zero.yaml is not a regular file (a device)")
}

// sized lays out files of the given sizes under repo/ (sparse: nothing is
// written) and makes repo the current directory.
func sized(t *testing.T, sizes map[string]int64) {
	t.Helper()
	files := map[string]string{}
	for p := range sizes {
		files["repo/"+p] = ""
	}
	root := tree(t, files, nil)
	for p, n := range sizes {
		if err := os.Truncate(filepath.Join(root, "repo", p), n); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDefaultCeilings: a Loader given no ceilings enforces the documented
// defaults (SECURITY.md, internal/cli.Limits): 8Mi a file, 32Mi in all.
func TestDefaultCeilings(t *testing.T) {
	const mi = 1 << 20
	l, err := New(RootOnly, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := l.Limits(), (Limits{MaxFileSize: 8 * mi, MaxInputSize: 32 * mi}); got != want {
		t.Errorf("Limits() = %+v, want %+v", got, want)
	}

	for name, tc := range map[string]struct {
		sizes map[string]int64
		want  string // "" when the files are read
	}{
		"a file of 8Mi":   {map[string]int64{"apps/a.yaml": 8 * mi}, ""},
		"a file of 8Mi+1": {map[string]int64{"apps/a.yaml": 8*mi + 1}, "apps/a.yaml is 8388609 bytes (8.0Mi), over the ceiling of 8Mi per file (--max-file-size)"},
		"32Mi in all":     {map[string]int64{"apps/a.yaml": 8 * mi, "apps/b.yaml": 8 * mi, "apps/c.yaml": 8 * mi, "apps/d.yaml": 8 * mi}, ""},
		"32Mi+1 in all":   {map[string]int64{"apps/a.yaml": 8 * mi, "apps/b.yaml": 8 * mi, "apps/c.yaml": 8 * mi, "apps/d.yaml": 8 * mi, "apps/e.yaml": 1}, "apps/e.yaml brings the input to 33554433 bytes (32.0Mi), over the ceiling of 32Mi in total (--max-input-size)"},
	} {
		t.Run(name, func(t *testing.T) {
			sized(t, tc.sizes)
			_, err := list(t, RootOnly, Limits{}, "apps")
			if tc.want == "" {
				if err != nil {
					t.Error(err)
				}
				return
			}
			wantErr(t, err, tc.want)
		})
	}

	if _, err := l.ReadStream("<stdin>", bytes.NewReader(make([]byte, 8*mi))); err != nil {
		t.Errorf("stdin of 8Mi: %v", err)
	}
	_, err = l.ReadStream("<stdin>", bytes.NewReader(make([]byte, 8*mi+1)))
	wantErr(t, err, "<stdin> is over the ceiling of 8Mi per file (--max-file-size)")
}

// TestStdinCountsWithTheFiles: stdin and the files share the total ceiling,
// whichever comes first on the command line (the files are listed first).
func TestStdinCountsWithTheFiles(t *testing.T) {
	tree(t, map[string]string{"repo/apps/a.yaml": "12345"}, nil)
	read := func(files bool, stdin string) error {
		l, err := New(RootOnly, Limits{MaxInputSize: 8})
		if err != nil {
			t.Fatal(err)
		}
		if files {
			root, err := l.Resolve("apps")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := l.Files(root, ""); err != nil {
				return err
			}
		}
		_, err = l.ReadStream("<stdin>", strings.NewReader(stdin))
		return err
	}
	if err := read(true, ""); err != nil {
		t.Errorf("the files alone: %v", err)
	}
	if err := read(false, "1234"); err != nil {
		t.Errorf("stdin alone: %v", err)
	}
	wantErr(t, read(true, "1234"), "<stdin> brings the input to 9 bytes, over the ceiling of 8 bytes in total (--max-input-size)")
}

// No message tells whether a path outside the tree exists: a link to an
// outside file that exists, and one to an outside file that does not, in
// one hop or two, as a file or a directory, get the same words.
func TestLinksOutsideAreNoExistenceOracle(t *testing.T) {
	for name, links := range map[string][2]string{
		"one hop":   {"../../secret.yaml", "../../missing.yaml"},
		"two hops":  {"hop.yaml", "hop2.yaml"},
		"directory": {"../../private", "../../absent"},
	} {
		t.Run(name, func(t *testing.T) {
			var got [2]string
			for i, target := range links {
				tree(t, base, map[string]string{"repo/apps/l.yaml": target, "repo/apps/hop.yaml": "../../secret.yaml", "repo/apps/hop2.yaml": "../../missing.yaml"})
				_, err := list(t, RootOnly, Limits{}, "apps/l.yaml")
				if err == nil {
					t.Fatalf("%s: no error", target)
				}
				got[i] = strings.ReplaceAll(err.Error(), target, "TARGET")
			}
			if got[0] != got[1] {
				t.Errorf("an existing and a missing target read differently:\n%s\n%s", got[0], got[1])
			}
		})
	}
}
