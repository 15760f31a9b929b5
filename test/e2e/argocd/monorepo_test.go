package argocd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/reposerver/apiclient"
	"github.com/argoproj/argo-cd/v3/util/app/discovery"
)

// monorepoApp is one Application of testdata/monorepo, a repository shared
// by many teams: its spec.source.path, what the README's table calls it,
// and whether the plugin claims it (discover matches).
type monorepoApp struct {
	path string
	what string
	ours bool
}

var monorepoApps = []monorepoApp{
	{"apps/flapp-yaml", "an FLApp (YAML) and a ConfigMap", true},
	{"apps/flapp-json", "an FLApp as JSON", true},
	{"apps/flapp-list", "a `kind: List` of 2 FLApps (`kubectl get -o yaml`)", true},
	{"apps/broken-flapp", "a file mentioning FLApp that does not parse", true},
	{"apps/nested-kustomization", "an FLApp, and a kustomization in a subdirectory", true},
	{"apps/no-flapp", "a ConfigMap and a Deployment", false},
	{"apps/mentions-flapp", "a ConfigMap whose comment mentions FLApp", false},
	{"apps/no-flapp-nested-kustomization", "a ConfigMap, and a kustomization in a subdirectory", false},
	{"apps/empty", "no manifest (a README.md only)", false},
	{"kustomize/flapp/base", "kustomization running flapp-services (`container:` entry)", true},
	{"kustomize/flapp/overlays/staging", "overlay of that base: a namespace (the entry is only in the base)", true},
	{"kustomize/flapp/overlays/prod", "overlay of that base: a namespace, 4 Workers, the function again", true},
	{"kustomize/exec", "`kustomization.yml` running flapp-services (`exec:` entry)", true},
	{"kustomize/inline", "`Kustomization` with an inline `FLAppServices` entry", true},
	{"kustomize/no-function", "kustomization of an FLApp, without the function", false},
	{"kustomize/other-function", "kustomization of an FLApp running another function", false},
	{"kustomize/plain", "kustomization of a ConfigMap", false},
	{"helm/flapp-chart", "Helm chart whose templates hold an FLApp", false},
	{"helm/plain-chart", "Helm chart of a ConfigMap", false},
}

// monorepoRow is what Argo CD makes of one Application, as the table's
// cells: the source type discovery.AppType gives and the generate's outcome.
type monorepoRow struct {
	without string // no plugin installed: AppType and Argo CD's own generate
	unnamed string // the plugin installed, an Application naming no plugin
	named   string // the plugin installed, an Application naming flapp-services
}

// The plugin claims only what is its own, in an Argo CD shared by many
// teams. Proven with Argo CD v3.6.1's own code over a monorepo of every
// kind of Application: discovery.AppType without the
// plugin and with its argocd-cmp-server reachable, and GenerateManifests
// without the plugin, unnamed and named. Every Application keeps its type
// when the plugin is installed except those the plugin claims, and those
// render as `flapp-services render` does. The table is the README's.
//
// FLAPP_SERVICES_OLD_BIN (an absolute path) measures the same table with
// that binary in a second argocd-cmp-server, for the README's "before"
// table; it is checked only then.
func TestMonorepo(t *testing.T) {
	root := t.TempDir()
	copyDir(t, filepath.Join("testdata", "monorepo"), root)
	// Git holds no empty directory: apps/empty holds a README.md only.
	withTools(t)

	noPlugin := t.TempDir()
	var old string
	if bin := os.Getenv("FLAPP_SERVICES_OLD_BIN"); bin != "" {
		require.True(t, filepath.IsAbs(bin), "FLAPP_SERVICES_OLD_BIN must be absolute")
		tmp, err := os.MkdirTemp("", "argocd-old-")
		require.NoError(t, err)
		t.Cleanup(func() { _ = os.RemoveAll(tmp) })
		old = filepath.Join(tmp, "plugins")
		require.NoError(t, os.MkdirAll(old, 0o755))
		stop, err := startPlugin(context.Background(), tmp, pluginSpec{
			config: filepath.Join(env.repo, "examples", "argocd", "plugin.yaml"), name: pluginName, flapp: bin, sockDir: old})
		require.NoError(t, err)
		t.Cleanup(stop)
	}

	readme, err := os.ReadFile(filepath.Join(env.repo, "examples", "argocd", "README.md"))
	require.NoError(t, err)
	var table, beforeTable []string
	for _, app := range monorepoApps {
		t.Run(app.path, func(t *testing.T) {
			appPath := filepath.Join(root, filepath.FromSlash(app.path))
			without := appTypeWith(t, noPlugin, appPath, root, app)
			argo, argoErr := generateWith(t, noPlugin, root, application{name: "app", namespace: "fl", path: app.path})
			with := appTypeWith(t, env.sockDir, appPath, root, app)
			unnamed, unnamedErr := generateWith(t, env.sockDir, root, application{name: "app", namespace: "fl", path: app.path})
			named, namedErr := generateWith(t, env.sockDir, root, application{name: "app", namespace: "fl", path: app.path, plugin: namedPlugin(nil, nil)})

			assert.NotEqual(t, string(v1alpha1.ApplicationSourceTypePlugin), without)
			if app.ours {
				assert.Equal(t, string(v1alpha1.ApplicationSourceTypePlugin), with, "discover must claim it")
			} else {
				assert.Equal(t, without, with, "discover must leave it to Argo CD")
				assert.Equal(t, outcome(t, root, argo, argoErr), outcome(t, root, unnamed, unnamedErr),
					"an Application naming no plugin gets what it gets without the plugin")
				require.Error(t, namedErr)
				assert.Contains(t, namedErr.Error(), notFound)
			}
			if unnamedErr == nil {
				assert.Equal(t, with, unnamed.SourceType, "GenerateManifests detects what AppType says")
			}
			if app.ours && namedErr == nil {
				// What the plugin gives is the render of the same path, from the
				// repository root (a kustomization may read above its directory).
				want := render(t, root, app.path)
				assert.Equal(t, want, manifestValues(t, named))
				require.NoError(t, unnamedErr)
				assert.Equal(t, want, manifestValues(t, unnamed))
			}
			if app.ours && namedErr != nil {
				assert.NotContains(t, namedErr.Error(), "could not find", "a claimed Application fails with the render's reason")
				assert.Equal(t, outcome(t, root, named, namedErr), outcome(t, root, unnamed, unnamedErr))
			}

			now := monorepoRow{
				without: cell(without, outcome(t, root, argo, argoErr)),
				unnamed: cell(with, outcome(t, root, unnamed, unnamedErr)),
				named:   outcome(t, root, named, namedErr),
			}
			line := fmt.Sprintf("| `%s` | %s | %s | %s | %s |", app.path, app.what, now.without, now.unnamed, now.named)
			table = append(table, line)
			assert.True(t, readmeHas(string(readme), line), "examples/argocd/README.md lacks the row\n%s", line)
			if old != "" {
				before := monorepoRow{}
				oldWith := appTypeWith(t, old, appPath, root, app)
				u, uErr := generateWith(t, old, root, application{name: "app", namespace: "fl", path: app.path})
				n, nErr := generateWith(t, old, root, application{name: "app", namespace: "fl", path: app.path, plugin: namedPlugin(nil, nil)})
				before.unnamed, before.named = cell(oldWith, outcome(t, root, u, uErr)), outcome(t, root, n, nErr)
				line := fmt.Sprintf("| `%s` | %s | %s |", app.path, before.unnamed, before.named)
				beforeTable = append(beforeTable, line)
				assert.True(t, readmeHas(string(readme), line), "examples/argocd/README.md lacks the row of the table before\n%s", line)
			}
		})
	}
	// The README's fix for "could not find cmp-server plugin" on a
	// kustomization of FLApps: the transformer entry.
	t.Run("kustomize/no-function with the README's entry", func(t *testing.T) {
		require.Contains(t, string(readme), "```yaml\n# flapp-services.yaml\n"+transformerEntry+"```\n")
		require.Contains(t, string(readme), "transformers: [flapp-services.yaml]\n")
		dir := filepath.Join(root, "kustomize", "no-function")
		require.NoError(t, os.WriteFile(filepath.Join(dir, "flapp-services.yaml"), []byte(transformerEntry), 0o644))
		f, err := os.OpenFile(filepath.Join(dir, "kustomization.yaml"), os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = f.WriteString("transformers: [flapp-services.yaml]\n")
		require.NoError(t, err)
		require.NoError(t, f.Close())
		app := monorepoApp{path: "kustomize/no-function"}
		assert.Equal(t, string(v1alpha1.ApplicationSourceTypePlugin), appTypeWith(t, env.sockDir, dir, root, app))
		resp, err := generate(t, root, application{name: "app", namespace: "fl", path: app.path, plugin: namedPlugin(nil, nil)})
		require.NoError(t, err)
		assert.Equal(t, "1 FLApp, 3 Services", outcome(t, root, resp, nil))
		for _, o := range objectsOf(t, resp) {
			assert.Equal(t, "fl-plain", o.GetNamespace(), o.GetName())
		}
	})
	t.Logf("the monorepo table:\n%s\n\nbefore:\n%s", strings.Join(table, "\n"), strings.Join(beforeTable, "\n"))
}

// readmeHas reports whether the README holds the line.
func readmeHas(readme, line string) bool {
	return slices.Contains(strings.Split(readme, "\n"), line)
}

// withTools puts Argo CD's own tools on PATH for its Kustomize and Helm
// source types: kustomize v5.8.1 and helm v3 (what the repo-server image
// ships, by version line).
func withTools(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.Symlink(kustomizeBinary(t), filepath.Join(dir, "kustomize")))
	require.NoError(t, os.Symlink(helmBinary(t), filepath.Join(dir, "helm")))
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// withSockDir runs f with Argo CD's plugin socket directory set to dir: an
// empty one stands for an Argo CD without the plugin.
func withSockDir(t *testing.T, dir string, f func()) {
	t.Helper()
	prev := os.Getenv("ARGOCD_PLUGINSOCKFILEPATH")
	require.NoError(t, os.Setenv("ARGOCD_PLUGINSOCKFILEPATH", dir))
	defer func() { _ = os.Setenv("ARGOCD_PLUGINSOCKFILEPATH", prev) }()
	f()
}

// appTypeWith is Argo CD's discovery.AppType of the Application, with the
// environment GenerateManifests gives it, the plugins of sockDir installed.
func appTypeWith(t *testing.T, sockDir, appPath, root string, app monorepoApp) string {
	t.Helper()
	var typ string
	withSockDir(t, sockDir, func() {
		var err error
		typ, err = discovery.AppType(ctxFor(t), appPath, root, nil, nil, appEnv(app.path))
		require.NoError(t, err)
	})
	return typ
}

func generateWith(t *testing.T, sockDir, root string, app application) (resp *apiclient.ManifestResponse, err error) {
	t.Helper()
	withSockDir(t, sockDir, func() { resp, err = generate(t, root, app) })
	return resp, err
}

// appEnv is the environment the repo-server gives source-type detection
// (reposerver/repository newEnv, unexported), for the request generate sends.
func appEnv(path string) []string {
	e := v1alpha1.Env{
		{Name: "ARGOCD_APP_NAME", Value: "app"},
		{Name: "ARGOCD_APP_NAMESPACE", Value: "fl"},
		{Name: "ARGOCD_APP_PROJECT_NAME", Value: "default"},
		{Name: "ARGOCD_APP_REVISION", Value: revision},
		{Name: "ARGOCD_APP_REVISION_SHORT", Value: revision[:7]},
		{Name: "ARGOCD_APP_REVISION_SHORT_8", Value: revision[:8]},
		{Name: "ARGOCD_APP_SOURCE_REPO_URL", Value: repoURL},
		{Name: "ARGOCD_APP_SOURCE_PATH", Value: path},
		{Name: "ARGOCD_APP_SOURCE_TARGET_REVISION", Value: "main"},
	}
	return e.Environ()
}

func cell(sourceType, outcome string) string {
	return "`" + sourceType + "`: " + outcome
}

// outcome is a generate's result as the table says it: the objects by
// kind, or the failure's gist.
func outcome(t *testing.T, root string, resp *apiclient.ManifestResponse, err error) string {
	t.Helper()
	if err != nil {
		return "fails: " + failureGist(err, root)
	}
	var kinds []string
	count := map[string]int{}
	for _, o := range objectsOf(t, resp) {
		if count[o.GetKind()] == 0 {
			kinds = append(kinds, o.GetKind())
		}
		count[o.GetKind()]++
	}
	if len(kinds) == 0 {
		return "no objects"
	}
	// FLApps first, Services last: the render's order.
	slices.SortStableFunc(kinds, func(a, b string) int { return rank(a) - rank(b) })
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		n := count[k]
		if n > 1 {
			k += "s"
		}
		parts[i] = fmt.Sprintf("%d %s", n, k)
	}
	return strings.Join(parts, ", ")
}

func rank(kind string) int {
	switch kind {
	case "FLApp":
		return 0
	case "Service":
		return 2
	}
	return 1
}

// exitStatus precedes a failing command's stderr in Argo CD's error.
var exitStatus = regexp.MustCompile("failed exit status [0-9]+: ")

// failureGist is the part of a failed generate's error that says why: Argo
// CD's "could not find" message, or the first line of the failing command's
// stderr (the render's, kustomize's or helm's), with the checkout's
// directory cut out, kustomize's chain of accumulation errors cut to its
// cause, and the rest cut short.
func failureGist(err error, root string) string {
	msg := err.Error()
	if strings.Contains(msg, notFound) {
		return "could not find cmp-server plugin"
	}
	if loc := exitStatus.FindStringIndex(msg); loc != nil {
		msg = msg[loc[1]:]
	}
	if _, desc, ok := strings.Cut(msg, "desc = "); ok {
		msg = desc
	}
	msg, _, _ = strings.Cut(msg, "\n")
	msg = strings.TrimPrefix(strings.TrimPrefix(msg, "error: "), "Error: ")
	if strings.HasPrefix(msg, "accumulating resources: ") {
		msg = msg[strings.LastIndex(msg, "': ")+3:]
	}
	msg = strings.ReplaceAll(msg, root+string(filepath.Separator), "")
	if len(msg) > 160 {
		msg = msg[:160] + "…"
	}
	msg = strings.ReplaceAll(msg, "|", `\|`)
	msg = strings.ReplaceAll(msg, "`", "'")
	return "`" + msg + "`"
}

// transformerEntry is the README's flapp-services entry for a kustomization.
const transformerEntry = `apiVersion: fn.fedlearner.k8s.io/v1alpha1
kind: FLAppServices
metadata:
  name: flapp-services
  annotations:
    config.kubernetes.io/function: |
      container:
        image: ghcr.io/fedlearner/flapp-services:v0.1.0
spec:
  ownerReferences: Never
`
