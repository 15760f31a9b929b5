// Package argocd holds the cheap, static checks of examples/argocd:
// plugin.yaml against the fields of Argo CD's ConfigManagementPlugin, the
// Application against the plugin, and the repo-server sidecar patch through
// Kubernetes' own strategic merge. The plugin itself runs in the real
// argocd-cmp-server v3.6.1, driven by Argo CD's repo-server code and synced
// by gitops-engine, in test/e2e/argocd (make e2e-argocd).
package argocd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"sigs.k8s.io/yaml"

	h "github.com/fedlearner/flapp-services/test/integration/internal/harness"
)

func TestMain(m *testing.M) { os.Exit(h.Main(m)) }

// pluginConfig is the subset of Argo CD's cmpserver/plugin.PluginConfig we use.
type command struct {
	Command []string `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
}

type pluginConfig struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version  string  `json:"version"`
		Init     command `json:"init"`
		Generate command `json:"generate"`
		Discover struct {
			Find struct {
				command
				Glob string `json:"glob"`
			} `json:"find"`
			FileName string `json:"fileName"`
		} `json:"discover"`
		Parameters struct {
			// Argo CD's ParameterAnnouncement.
			Static []struct {
				Name           string            `json:"name"`
				Title          string            `json:"title"`
				Tooltip        string            `json:"tooltip"`
				Required       bool              `json:"required"`
				ItemType       string            `json:"itemType"`
				CollectionType string            `json:"collectionType"`
				String         string            `json:"string"`
				Array          []string          `json:"array"`
				Map            map[string]string `json:"map"`
			} `json:"static"`
			Dynamic command `json:"dynamic"`
		} `json:"parameters"`
	} `json:"spec"`
}

func readPlugin(t *testing.T) pluginConfig {
	t.Helper()
	return readPluginFile(t, "examples/argocd/plugin.yaml")
}

// The Helm variant is a valid plugin too, without discover (named use only).
func TestHelmPluginConfig(t *testing.T) {
	pc := readPluginFile(t, "examples/argocd/helm/plugin.yaml")
	assert.Equal(t, "flapp-services-helm", pc.Metadata.Name)
	assert.Empty(t, pc.Spec.Discover.Find.Command)
	assert.Empty(t, pc.Spec.Discover.FileName)
	script := strings.Join(pc.Spec.Generate.Args, "\n")
	assert.Contains(t, script, "pipefail")
	assert.Contains(t, script, "helm template")
	assert.Contains(t, script, "flapp-services render")
}

func readPluginFile(t *testing.T, rel string) pluginConfig {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(h.RepoRoot(), rel))
	require.NoError(t, err)
	var pc pluginConfig
	require.NoError(t, yaml.UnmarshalStrict(b, &pc, yaml.DisallowUnknownFields), "plugin.yaml has a field Argo CD does not know")
	// Argo CD's ValidatePluginConfig.
	require.Equal(t, "ConfigManagementPlugin", pc.Kind)
	require.Equal(t, "argoproj.io/v1alpha1", pc.APIVersion)
	require.NotEmpty(t, pc.Metadata.Name)
	require.NotEmpty(t, pc.Spec.Generate.Command)
	return pc
}

// The Application refers to the plugin by its name, at the example app path,
// with env names the plugin reads (`--argocd-env`, listed in plugin.yaml's
// comments); generate and discover exec flapp-services without a shell.
func TestApplication(t *testing.T) {
	pc := readPlugin(t)
	b, err := os.ReadFile(filepath.Join(h.RepoRoot(), "examples/argocd/application.yaml"))
	require.NoError(t, err)
	var app struct {
		Kind string `json:"kind"`
		Spec struct {
			Source struct {
				Path   string `json:"path"`
				Plugin struct {
					Name string `json:"name"`
					Env  []struct{ Name, Value string }
				} `json:"plugin"`
			} `json:"source"`
			Destination struct {
				Namespace string `json:"namespace"`
			} `json:"destination"`
		} `json:"spec"`
	}
	require.NoError(t, yaml.Unmarshal(b, &app))
	assert.Equal(t, "Application", app.Kind)
	name := pc.Metadata.Name
	if pc.Spec.Version != "" {
		name += "-" + pc.Spec.Version
	}
	assert.Equal(t, name, app.Spec.Source.Plugin.Name)
	assert.DirExists(t, filepath.Join(h.RepoRoot(), app.Spec.Source.Path))
	assert.NotEmpty(t, app.Spec.Destination.Namespace)
	assert.Equal(t, []string{"flapp-services", "render", "--argocd-env", "."}, pc.Spec.Generate.Command)
	assert.Empty(t, pc.Spec.Generate.Args)
	assert.Equal(t, []string{"flapp-services", "discover", "--argocd-env", "."}, pc.Spec.Discover.Find.Command)
	plugin, err := os.ReadFile(filepath.Join(h.RepoRoot(), "examples/argocd/plugin.yaml"))
	require.NoError(t, err)
	for _, e := range app.Spec.Source.Plugin.Env {
		assert.Contains(t, string(plugin), "ARGOCD_ENV_"+e.Name, "plugin.yaml does not name env %s", e.Name)
	}
}

// kubectl patch --patch-file (strategic merge) on a stock repo-server adds the
// sidecar next to the repo-server container, with Argo CD's requirements.
func TestRepoServerPatch(t *testing.T) {
	patchYAML, err := os.ReadFile(filepath.Join(h.RepoRoot(), "examples/argocd/argocd-repo-server-patch.yaml"))
	require.NoError(t, err)
	patch, err := yaml.YAMLToJSON(patchYAML)
	require.NoError(t, err)
	stock := []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"argocd-repo-server","namespace":"argocd"},
"spec":{"selector":{"matchLabels":{"app.kubernetes.io/name":"argocd-repo-server"}},"template":{"metadata":{"labels":{"app.kubernetes.io/name":"argocd-repo-server"}},
"spec":{"containers":[{"name":"argocd-repo-server","image":"quay.io/argoproj/argocd:v3.2.0","volumeMounts":[{"name":"var-files","mountPath":"/var/run/argocd"},{"name":"plugins","mountPath":"/home/argocd/cmp-server/plugins"},{"name":"tmp","mountPath":"/tmp"}]}],
"volumes":[{"name":"var-files","emptyDir":{}},{"name":"plugins","emptyDir":{}},{"name":"tmp","emptyDir":{}}]}}}}`)
	merged, err := strategicpatch.StrategicMergePatch(stock, patch, appsv1.Deployment{})
	require.NoError(t, err)
	var d appsv1.Deployment
	require.NoError(t, json.Unmarshal(merged, &d))

	pod := d.Spec.Template.Spec
	require.Len(t, pod.Containers, 2, "the repo-server container stays, the sidecar is added")
	byName := map[string]int{}
	for i, c := range pod.Containers {
		byName[c.Name] = i
	}
	require.Contains(t, byName, "argocd-repo-server")
	require.Contains(t, byName, "flapp-services")
	assert.Equal(t, "quay.io/argoproj/argocd:v3.2.0", pod.Containers[byName["argocd-repo-server"]].Image, "repo-server untouched")
	c := pod.Containers[byName["flapp-services"]]
	assert.Equal(t, []string{"/var/run/argocd/argocd-cmp-server"}, c.Command)
	assert.True(t, strings.HasPrefix(c.Image, "ghcr.io/fedlearner/flapp-services:"), "the sidecar is the function image, not %s", c.Image)
	require.NotNil(t, c.SecurityContext)
	require.NotNil(t, c.SecurityContext.RunAsUser)
	assert.Equal(t, int64(999), *c.SecurityContext.RunAsUser)
	require.NotNil(t, c.SecurityContext.RunAsGroup)
	assert.Equal(t, int64(999), *c.SecurityContext.RunAsGroup)

	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m.Name
		if m.MountPath == "/home/argocd/cmp-server/config/plugin.yaml" {
			assert.Equal(t, "plugin.yaml", m.SubPath)
		}
	}
	assert.Equal(t, "var-files", mounts["/var/run/argocd"])
	assert.Equal(t, "plugins", mounts["/home/argocd/cmp-server/plugins"])
	volumes := map[string]int{}
	for i, v := range pod.Volumes {
		volumes[v.Name] = i
	}
	cfg := pod.Volumes[volumes[mounts["/home/argocd/cmp-server/config/plugin.yaml"]]]
	require.NotNil(t, cfg.ConfigMap, "plugin.yaml comes from a ConfigMap")
	tmp := pod.Volumes[volumes[mounts["/tmp"]]]
	require.NotNil(t, tmp.EmptyDir, "/tmp is an emptyDir")
	assert.NotEqual(t, "tmp", tmp.Name, "the sidecar has its own /tmp, not the repo-server's")

	readme, err := os.ReadFile(filepath.Join(h.RepoRoot(), "examples/argocd/README.md"))
	require.NoError(t, err)
	assert.Contains(t, string(readme), "create configmap "+cfg.ConfigMap.Name, "README creates the ConfigMap the patch mounts")
}
