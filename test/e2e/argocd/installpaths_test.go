package argocd

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
)

// The install paths besides the kustomize one (examples/argocd/helm/values.yaml
// for the argo-cd Helm chart, examples/argocd/operator/argocd.yaml for the
// Argo CD Operator) carry the same sidecar, plugin and health check. These
// tests hold them to the kustomize install as kustomize v5.8.1 builds it,
// field by field.

const (
	pluginConfigPath = "/home/argocd/cmp-server/config/plugin.yaml"
	healthKey        = "resource.customizations.health.fedlearner.k8s.io_FLApp"
)

// kustomizeInstall is what the kustomize install gives the repo-server:
// the sidecar, the pod's volumes by name, the plugin ConfigMap, argocd-cm's
// health check.
type kustomizeInstall struct {
	sidecar corev1.Container
	volumes map[string]corev1.Volume
	cm      corev1.ConfigMap
	health  map[string]string
}

func readKustomizeInstall(t *testing.T) kustomizeInstall {
	t.Helper()
	b := buildInstall(t)
	var k kustomizeInstall
	toTyped(t, findObject(t, b.objs, "ConfigMap", "flapp-services-cmp-"), &k.cm)
	var repoServer appsv1.Deployment
	toTyped(t, findObject(t, b.objs, "Deployment", "argocd-repo-server"), &repoServer)
	found := false
	for _, c := range repoServer.Spec.Template.Spec.Containers {
		if c.Name == sidecarName {
			k.sidecar, found = c, true
		}
	}
	require.True(t, found, "the kustomize install has the sidecar")
	k.volumes = map[string]corev1.Volume{}
	for _, v := range repoServer.Spec.Template.Spec.Volumes {
		k.volumes[v.Name] = v
	}
	var patch struct {
		Data map[string]string `json:"data"`
	}
	data, err := os.ReadFile(filepath.Join(env.repo, "examples", "argocd", "argocd-cm-patch.yaml"))
	require.NoError(t, err)
	require.NoError(t, yaml.UnmarshalStrict(data, &patch))
	k.health = patch.Data
	return k
}

// requireSameSidecar holds another install's sidecar to the kustomize one:
// equal in every field, except the mount of plugin.yaml, which comes from
// that install's own ConfigMap volume (cmVolume) and key (subPath). It
// returns that volume's ConfigMap name.
func requireSameSidecar(t *testing.T, k kustomizeInstall, got corev1.Container, volumes []corev1.Volume, subPath string) string {
	t.Helper()
	byName := map[string]corev1.Volume{}
	for _, v := range volumes {
		byName[v.Name] = v
	}
	want := k.sidecar.DeepCopy()
	cmName := ""
	for i, m := range want.VolumeMounts {
		if m.MountPath != pluginConfigPath {
			continue
		}
		var mine *corev1.VolumeMount
		for j := range got.VolumeMounts {
			if got.VolumeMounts[j].MountPath == pluginConfigPath {
				mine = &got.VolumeMounts[j]
			}
		}
		require.NotNil(t, mine, "plugin.yaml is mounted at %s", pluginConfigPath)
		assert.Equal(t, subPath, mine.SubPath, "plugin.yaml is the ConfigMap's key %s", subPath)
		v, ok := byName[mine.Name]
		require.True(t, ok, "the pod has the volume %s", mine.Name)
		require.NotNil(t, v.ConfigMap, "%s is a ConfigMap volume", mine.Name)
		cmName = v.ConfigMap.Name
		want.VolumeMounts[i].Name, want.VolumeMounts[i].SubPath = mine.Name, mine.SubPath
	}
	require.NotEmpty(t, cmName, "the kustomize install mounts plugin.yaml")
	assert.Equal(t, *want, got, "the sidecar, field by field, as the kustomize install's")
	// The sidecar's own volumes are the kustomize install's (the tmp
	// emptyDir); var-files and plugins are the repo-server's own.
	for _, m := range got.VolumeMounts {
		if m.Name == "var-files" || m.Name == "plugins" || m.MountPath == pluginConfigPath {
			continue
		}
		require.Contains(t, byName, m.Name, "the pod has the volume %s", m.Name)
		assert.Equal(t, k.volumes[m.Name], byName[m.Name], "volume %s as the kustomize install's", m.Name)
	}
	return cmName
}

// requireParallelismFits: the parallelism limit is what the sidecar's memory
// limit holds, 128 MiB + 256 MiB per generate (examples/argocd/README.md,
// The sidecar's memory against concurrency).
func requireParallelismFits(t *testing.T, limit string, sidecar corev1.Container) {
	t.Helper()
	n, err := strconv.Atoi(limit)
	require.NoError(t, err, "the parallelism limit %q", limit)
	require.Positive(t, n, "0 is Argo CD's unlimited")
	want := resource.MustParse(strconv.Itoa(128+256*n) + "Mi")
	got := sidecar.Resources.Limits[corev1.ResourceMemory]
	assert.Zero(t, want.Cmp(got), "a memory limit of %s holds %d generates at once, not %s", want.String(), n, got.String())
}

// helmValues is the part of the argo-cd chart's values the file sets; any
// other key fails the strict read.
type helmValues struct {
	Configs struct {
		Cmp struct {
			Create  bool           `json:"create"`
			Plugins map[string]any `json:"plugins"`
		} `json:"cmp"`
		Cm     map[string]string `json:"cm"`
		Params map[string]any    `json:"params"`
	} `json:"configs"`
	RepoServer struct {
		ExtraContainers []corev1.Container `json:"extraContainers"`
		Volumes         []corev1.Volume    `json:"volumes"`
	} `json:"repoServer"`
}

// TestHelmChartValues holds examples/argocd/helm/values.yaml to the kustomize
// install, read strictly (a key the file should not set fails), with what
// the chart's templates do with it restated from argo-helm's charts/argo-cd
// (TestHelmChartRendered renders the real chart with the real Helm):
// argocd-cmp-cm holds, for each configs.cmp.plugins
// entry <name>, the key <name>.yaml with a ConfigManagementPlugin named
// <name> whose spec is the entry; repoServer.extraContainers and
// repoServer.volumes join the repo-server pod as written; configs.cm and
// configs.params become argocd-cm's and argocd-cmd-params-cm's data.
//
// What is checked: the plugin the chart's ConfigMap holds equals plugin.yaml
// as shipped (the same name and spec), and the real argocd-cmp-server,
// started with it, renders the example app through Argo CD's repo-server
// code exactly as the shipped one does, named and unnamed; the sidecar equals
// the kustomize install's field by field, mounting the chart's argocd-cmp-cm
// with subPath flapp-services.yaml; its tmp volume is the kustomize install's;
// the health check is the argocd-cm patch's; the parallelism limit is what
// the sidecar's memory limit holds.
func TestHelmChartValues(t *testing.T) {
	k := readKustomizeInstall(t)
	data, err := os.ReadFile(filepath.Join(env.repo, "examples", "argocd", "helm", "values.yaml"))
	require.NoError(t, err)
	var v helmValues
	require.NoError(t, yaml.UnmarshalStrict(data, &v))

	// The plugin: the chart's argocd-cmp-cm entry, as its template writes it.
	assert.True(t, v.Configs.Cmp.Create, "the chart creates argocd-cmp-cm")
	require.Len(t, v.Configs.Cmp.Plugins, 1)
	spec, ok := v.Configs.Cmp.Plugins[pluginName]
	require.True(t, ok, "the plugin is named %s, as Applications name it", pluginName)
	chartPlugin := map[string]any{
		"apiVersion": "argoproj.io/v1alpha1",
		"kind":       "ConfigManagementPlugin",
		"metadata":   map[string]any{"name": pluginName},
		"spec":       spec,
	}
	var shipped map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(k.cm.Data["plugin.yaml"]), &shipped))
	assert.Equal(t, shipped, chartPlugin, "argocd-cmp-cm's %s.yaml is plugin.yaml", pluginName)

	// The real argocd-cmp-server with that ConfigMap entry renders the
	// example app as the shipped plugin.yaml does.
	b, err := yaml.Marshal(chartPlugin)
	require.NoError(t, err)
	requireServesExampleApp(t, b)

	// The sidecar and its volumes.
	require.Len(t, v.RepoServer.ExtraContainers, 1)
	cmName := requireSameSidecar(t, k, v.RepoServer.ExtraContainers[0], v.RepoServer.Volumes, pluginName+".yaml")
	assert.Equal(t, "argocd-cmp-cm", cmName, "the ConfigMap the chart creates")

	// The health check and the parallelism.
	assert.Equal(t, k.health, v.Configs.Cm, "configs.cm holds the argocd-cm patch's health check, nothing else")
	require.Len(t, v.Configs.Params, 1)
	limit, ok := v.Configs.Params["reposerver.parallelism.limit"]
	require.True(t, ok, "configs.params sets reposerver.parallelism.limit")
	requireParallelismFits(t, strconv.FormatFloat(limit.(float64), 'f', -1, 64), v.RepoServer.ExtraContainers[0])
}

// requireServesExampleApp starts the real argocd-cmp-server with plugin (a
// ConfigManagementPlugin, as a ConfigMap key holds it) and holds what Argo
// CD's repo-server code gets from it for the example app, named and
// unnamed, to what the render prints.
func requireServesExampleApp(t *testing.T, plugin []byte) {
	t.Helper()
	tmp, err := os.MkdirTemp("", "argocd-helm-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(tmp) })
	config := filepath.Join(tmp, pluginName+".yaml")
	require.NoError(t, os.WriteFile(config, plugin, 0o644))
	sockDir := filepath.Join(tmp, "plugins")
	require.NoError(t, os.MkdirAll(sockDir, 0o755))
	stop, err := startPlugin(context.Background(), tmp, pluginSpec{config: config, name: pluginName, sockDir: sockDir})
	require.NoError(t, err)
	t.Cleanup(stop)
	root := t.TempDir()
	copyDir(t, filepath.Join(env.repo, "examples", "argocd", "app"), filepath.Join(root, "app"))
	want := render(t, root, "--owner-references", "Never", "app")
	for _, plugin := range []*v1alpha1.ApplicationSourcePlugin{nil, namedPlugin(nil, nil)} {
		resp, err := generateWith(t, sockDir, root, application{name: "mnist-leader", namespace: "fl-leader", path: "app", plugin: plugin})
		require.NoError(t, err, "named: %v", plugin != nil)
		assert.Equal(t, string(v1alpha1.ApplicationSourceTypePlugin), resp.SourceType)
		assert.Equal(t, want, manifestValues(t, resp), "named: %v", plugin != nil)
	}
}

// TestArgoCDOperatorSidecarMatchesInstall holds the sidecar of
// examples/argocd/operator/argocd.yaml to the kustomize install's, field by
// field (the operator adds spec.repo.sidecarContainers and spec.repo.volumes
// to the repo-server pod as written: controllers/argocd/repo_server.go of
// argocd-operator v0.18.0), its health check to the argocd-cm patch's, and
// its parallelism (spec.repo.env) to the sidecar's memory limit. That the
// Operator's CRD accepts the resource is TestArgoCDOperatorResource's, in
// test/e2e.
func TestArgoCDOperatorSidecarMatchesInstall(t *testing.T) {
	k := readKustomizeInstall(t)
	data, err := os.ReadFile(filepath.Join(env.repo, "examples", "argocd", "operator", "argocd.yaml"))
	require.NoError(t, err)
	var obj map[string]any
	require.NoError(t, yaml.Unmarshal(data, &obj))
	u := &unstructured.Unstructured{Object: obj}
	require.Equal(t, "ArgoCD", u.GetKind())

	var repo struct {
		Env               []corev1.EnvVar    `json:"env"`
		SidecarContainers []corev1.Container `json:"sidecarContainers"`
		Volumes           []corev1.Volume    `json:"volumes"`
		Annotations       map[string]string  `json:"annotations"`
	}
	r, _, err := unstructured.NestedMap(u.Object, "spec", "repo")
	require.NoError(t, err)
	rb, err := yaml.Marshal(r)
	require.NoError(t, err)
	require.NoError(t, yaml.UnmarshalStrict(rb, &repo))
	require.Len(t, repo.SidecarContainers, 1)
	cmName := requireSameSidecar(t, k, repo.SidecarContainers[0], repo.Volumes, "plugin.yaml")
	assert.Equal(t, "flapp-services-cmp", cmName, "the ConfigMap the README creates")

	limit := ""
	for _, e := range repo.Env {
		if e.Name == "ARGOCD_REPO_SERVER_PARALLELISM_LIMIT" {
			limit = e.Value
		}
	}
	requireParallelismFits(t, limit, repo.SidecarContainers[0])

	checks, _, err := unstructured.NestedSlice(u.Object, "spec", "resourceHealthChecks")
	require.NoError(t, err)
	require.Len(t, checks, 1)
	c := checks[0].(map[string]any)
	// The operator's key: "resource.customizations.health." + group + "_" + kind
	// (controllers/argocd/configmap.go, getResourceHealthChecks).
	assert.Equal(t, k.health, map[string]string{"resource.customizations.health." + c["group"].(string) + "_" + c["kind"].(string): c["check"].(string)})
	assert.Contains(t, k.health, healthKey)
}
