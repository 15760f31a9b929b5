package repofs

import "testing"

// A directory whose name starts with the name of a PATH or of the current
// directory (apps and apps-secret, repo and repo-secret) is outside it.
func TestSiblingSharingANamePrefixIsOutside(t *testing.T) {
	files := map[string]string{
		"repo/apps/a.yaml":         "a",
		"repo/apps-secret/x.yaml":  "secret",
		"repo-secret/x.yaml":       "secret",
		"apps/a.yaml":              "a",
		"apps-secret/x.yaml":       "secret",
		"repo/apps-secret/ok.yaml": "inside the current directory",
	}
	for name, tc := range map[string]struct {
		links map[string]string
		path  string
		want  []string
	}{
		"file link":      {map[string]string{"repo/apps/l.yaml": "../apps-secret/x.yaml"}, "apps", []string{"apps/l.yaml is a symlink to ../apps-secret/x.yaml", "which does not lead to a file inside apps"}},
		"directory link": {map[string]string{"repo/apps/v": "../apps-secret"}, "apps", []string{"apps/v is a symlink to ../apps-secret", "which does not lead to a file inside apps"}},
		"PATH":           {map[string]string{"repo/deploy": "../repo-secret"}, "deploy", []string{"deploy is a symlink to ../repo-secret", "which does not lead to a file inside the current directory"}},
	} {
		t.Run(name, func(t *testing.T) {
			tree(t, files, tc.links)
			_, err := list(t, RootOnly, Limits{}, tc.path)
			wantErr(t, err, tc.want...)
		})
	}

	t.Run("flag files", func(t *testing.T) {
		tree(t, files, map[string]string{"repo/cfg.yaml": "../repo-secret/x.yaml"})
		l, err := New(RootOnly, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Resolve("../apps"); err != nil { // written outside: the caller's choice
			t.Fatal(err)
		}
		_, err = l.Confine("--config", "cfg.yaml")
		wantErr(t, err, "--config cfg.yaml is a symlink to ../repo-secret/x.yaml", "which does not lead to a file inside the current directory and every PATH")
		_, err = l.Confine("--check", "../repo-secret/x.yaml")
		wantErr(t, err, "--check ../repo-secret/x.yaml resolves to", "outside the current directory and every PATH")
		_, err = l.Confine("--config", "../apps-secret/x.yaml")
		wantErr(t, err, "--config ../apps-secret/x.yaml resolves to", "outside the current directory and every PATH")
		for _, p := range []string{"apps-secret/ok.yaml", "../apps/a.yaml"} {
			if _, err := l.Confine("--config", p); err != nil {
				t.Errorf("%s is inside the current directory or a PATH: %v", p, err)
			}
		}
	})
}
