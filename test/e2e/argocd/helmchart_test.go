package argocd

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// The argo-cd Helm chart, as argoproj/argo-helm publishes it: that
// repository has no go.mod, and the Go module proxy serves it at a
// pseudo-version of its commit, held here to its hash, so the chart the
// test renders is that commit's charts/argo-cd, byte for byte.
const (
	argoHelmModule     = "github.com/argoproj/argo-helm"
	argoHelmVersion    = "v0.0.0-20260904222229-3bbb4305eea9"
	argoHelmSum        = "h1:WwVk8y5P+B0c9yiH8dF0VZtBHpsIWE9dq9osMjul8UM="
	argoCDChartVersion = "10.8.0"
)

// argoCDChart copies charts/argo-cd out of the module cache into a folder
// of the test and returns it. Its one dependency, redis-ha (the HA Redis,
// condition redis-ha.enabled, off by default and in values.yaml), is left
// out of Chart.yaml: helm refuses to template a chart whose dependencies
// are missing from charts/, whatever their condition, and redis-ha lives
// in another repository. Nothing else of the chart is changed.
func argoCDChart(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", argoHelmModule+"@"+argoHelmVersion)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	var info struct{ Dir, Sum, Error string }
	require.NoError(t, json.Unmarshal(out, &info), "go mod download %s@%s: %v\n%s", argoHelmModule, argoHelmVersion, err, out)
	require.Empty(t, info.Error)
	require.Equal(t, argoHelmSum, info.Sum, "the chart is the commit this test pins")

	dir := filepath.Join(t.TempDir(), "argo-cd")
	copyDir(t, filepath.Join(info.Dir, "charts", "argo-cd"), dir)
	chartFile := filepath.Join(dir, "Chart.yaml")
	b, err := os.ReadFile(chartFile)
	require.NoError(t, err)
	var chart map[string]any
	require.NoError(t, yaml.Unmarshal(b, &chart))
	require.Equal(t, argoCDChartVersion, chart["version"], "the chart's version")
	deps, _ := chart["dependencies"].([]any)
	require.Len(t, deps, 1, "the chart's dependencies")
	require.Equal(t, "redis-ha", deps[0].(map[string]any)["name"])
	delete(chart, "dependencies")
	b, err = yaml.Marshal(chart)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(chartFile, b, 0o644))
	require.NoError(t, os.Remove(filepath.Join(dir, "Chart.lock")))
	return dir
}

// TestHelmChartRendered renders the argo-cd chart with the real Helm (v3)
// and examples/argocd/helm/values.yaml, for the Kubernetes of the e2e
// control plane (v1.37.2: a helm built from source assumes v1.20.0, which
// the chart refuses), and holds what it gives to the
// kustomize install: the repo-server Deployment's flapp-services sidecar
// equals the kustomize install's field by field, mounting the chart's
// argocd-cmp-cm at key flapp-services.yaml; argocd-cmp-cm's plugin, served
// to the real argocd-cmp-server, renders the example app as the shipped
// plugin.yaml does; argocd-cm holds the health check; argocd-cmd-params-cm
// the parallelism limit the sidecar's memory holds.
func TestHelmChartRendered(t *testing.T) {
	k := readKustomizeInstall(t)
	chart := argoCDChart(t)
	cmd := exec.Command(helmBinary(t), "template", "argocd", chart, "--namespace", "argocd", "--kube-version", "1.37.2",
		"--values", filepath.Join(env.repo, "examples", "argocd", "helm", "values.yaml"))
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "helm template: %s", stderr.String())

	var repoServer *appsv1.Deployment
	configMaps := map[string]corev1.ConfigMap{}
	for _, doc := range strings.Split(string(out), "\n---\n") {
		var meta struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		require.NoError(t, yaml.Unmarshal([]byte(doc), &meta))
		switch {
		case meta.Kind == "Deployment" && meta.Metadata.Name == "argocd-repo-server":
			repoServer = &appsv1.Deployment{}
			require.NoError(t, yaml.Unmarshal([]byte(doc), repoServer))
		case meta.Kind == "ConfigMap":
			var cm corev1.ConfigMap
			require.NoError(t, yaml.Unmarshal([]byte(doc), &cm))
			configMaps[cm.Name] = cm
		}
	}
	require.NotNil(t, repoServer, "the chart renders argocd-repo-server")

	// The sidecar, in the repo-server's pod.
	pod := repoServer.Spec.Template.Spec
	var sidecar *corev1.Container
	for i := range pod.Containers {
		if pod.Containers[i].Name == pluginName {
			sidecar = &pod.Containers[i]
		}
	}
	require.NotNil(t, sidecar, "the repo-server pod has the %s sidecar", pluginName)
	cmName := requireSameSidecar(t, k, *sidecar, pod.Volumes, pluginName+".yaml")
	assert.Equal(t, "argocd-cmp-cm", cmName, "the sidecar mounts the ConfigMap the chart creates")

	// The plugin the chart's ConfigMap holds: plugin.yaml as shipped, and
	// the real argocd-cmp-server renders the example app with it.
	cmp, ok := configMaps["argocd-cmp-cm"]
	require.True(t, ok, "the chart renders argocd-cmp-cm")
	plugin, ok := cmp.Data[pluginName+".yaml"]
	require.True(t, ok, "argocd-cmp-cm has the key %s.yaml", pluginName)
	var rendered, shipped map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(plugin), &rendered))
	require.NoError(t, yaml.Unmarshal([]byte(k.cm.Data["plugin.yaml"]), &shipped))
	assert.Equal(t, shipped, rendered, "argocd-cmp-cm's %s.yaml is plugin.yaml", pluginName)
	requireServesExampleApp(t, []byte(plugin))

	// The health check and the parallelism.
	for key, script := range k.health {
		assert.Equal(t, script, configMaps["argocd-cm"].Data[key], "argocd-cm's %s is the argocd-cm patch's", key)
	}
	limit, ok := configMaps["argocd-cmd-params-cm"].Data["reposerver.parallelism.limit"]
	require.True(t, ok, "argocd-cmd-params-cm sets reposerver.parallelism.limit")
	requireParallelismFits(t, limit, *sidecar)
}
