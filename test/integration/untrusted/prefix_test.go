package untrusted

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A directory whose name starts with the name of a PATH or of the current
// directory (apps and apps-secret, repo and repo-secret) is outside it: the
// containment checks compare whole path elements, not string prefixes.
func TestSiblingSharingANamePrefixIsOutside(t *testing.T) {
	files := map[string]string{
		"repo/apps/flapp.yaml":     flapp("normal", "leader", "Leader", 1, false),
		"repo/apps-secret/db.yaml": secretObject,
		"repo-secret/db.yaml":      secretObject,
		"repo-secret/cfg.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {ownerReferences: " + secretMarker + "}\n",
		"apps/flapp.yaml":          flapp("beside", "leader", "Leader", 1, false),
		"apps-secret/cfg.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {ownerReferences: " + secretMarker + "}\n",
		"apps-secret/db.yaml":      secretObject,
	}
	tests := map[string]struct {
		links map[string]string
		args  []string
		want  []string
	}{
		"file link into a sibling of the PATH": {
			links: map[string]string{"repo/apps/link.yaml": "../apps-secret/db.yaml"},
			args:  []string{"apps"}, want: []string{"apps/link.yaml", "../apps-secret/db.yaml", "does not lead to a file inside apps"},
		},
		"directory link into a sibling of the PATH": {
			links: map[string]string{"repo/apps/vendor": "../apps-secret"},
			args:  []string{"apps"}, want: []string{"apps/vendor", "../apps-secret", "does not lead to a file inside apps"},
		},
		"the PATH is a link into a sibling of the current directory": {
			links: map[string]string{"repo/deploy": "../repo-secret"},
			args:  []string{"deploy"}, want: []string{"deploy", "../repo-secret", "does not lead to a file inside the current directory"},
		},
		"--config through a link into a sibling of the current directory": {
			links: map[string]string{"repo/cfg.yaml": "../repo-secret/cfg.yaml"},
			args:  []string{"--config", "cfg.yaml", "apps"}, want: []string{"--config", "cfg.yaml", "../repo-secret/cfg.yaml"},
		},
		"--config in a sibling of a PATH written outside the current directory": {
			args: []string{"--config", "../apps-secret/cfg.yaml", "../apps"}, want: []string{"--config", "../apps-secret/cfg.yaml", "outside the current directory and every PATH"},
		},
		"--check through a link into a sibling of the current directory": {
			links: map[string]string{"repo/rendered/old.yaml": "../../repo-secret/db.yaml"},
			args:  []string{"--check", "rendered/old.yaml", "apps"}, want: []string{"--check", "rendered/old.yaml", "../../repo-secret/db.yaml"},
		},
		"--check in a sibling of a PATH written outside the current directory": {
			args: []string{"--check", "../apps-secret/db.yaml", "../apps"}, want: []string{"--check", "../apps-secret/db.yaml", "outside the current directory and every PATH"},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			root := layout(t, files, tt.links)
			res := render(t, filepath.Join(root, "repo"), "", tt.args...)
			refused(t, res, tt.want...)
			assert.Contains(t, res.stderr, "--load-restrictor", "the error says how to lift the restriction")
		})
	}
}
