package argocd

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/sync/common"
	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/utils/kube"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
)

// The overlays of testdata/monorepo's kustomize/flapp, each an Application
// naming the plugin (which keeps its discover): staging (the base's 2
// Workers, namespace fl-staging) and prod (4 Workers, namespace fl-prod),
// rendered by argocd-cmp-server in Argo CD's copy of the whole repository
// and synced by gitops-engine. Scaling prod down to 2 prunes exactly its
// two stale Services; staging's are untouched.
func TestSyncKustomizeOverlays(t *testing.T) {
	needCluster(t)
	staging := newNamespace(t, "fl-staging")
	prod := newNamespace(t, "fl-prod")
	root := t.TempDir()
	copyDir(t, filepath.Join("testdata", "monorepo"), root)

	// The destination namespace is another one: the overlays' namespaces
	// must come from their builds.
	stagingApp := newArgoSync(t, application{name: "mnist-staging", namespace: "default", path: "kustomize/flapp/overlays/staging", plugin: namedPlugin(nil, nil)})
	prodApp := newArgoSync(t, application{name: "mnist-prod", namespace: "default", path: "kustomize/flapp/overlays/prod", plugin: namedPlugin(nil, nil)})

	first := stagingApp.sync(t, root)
	assert.Empty(t, byStatus(first, common.ResultCodeSyncFailed))
	assert.Equal(t, []string{"FLApp/mnist", "Service/mnist-leader-master-0", "Service/mnist-leader-worker-0", "Service/mnist-leader-worker-1"},
		byStatus(first, common.ResultCodeSynced))
	first = prodApp.sync(t, root)
	assert.Empty(t, byStatus(first, common.ResultCodeSyncFailed))
	assert.Equal(t, []string{"FLApp/mnist", "Service/mnist-leader-master-0", "Service/mnist-leader-worker-0", "Service/mnist-leader-worker-1",
		"Service/mnist-leader-worker-2", "Service/mnist-leader-worker-3"}, byStatus(first, common.ResultCodeSynced))

	stagingBefore, prodBefore := liveServices(t, staging), liveServices(t, prod)
	require.Len(t, stagingBefore, 3)
	require.Len(t, prodBefore, 5)
	for _, svcs := range []map[string]corev1.Service{stagingBefore, prodBefore} {
		for name, s := range svcs {
			assert.Contains(t, s.Annotations, "argocd.argoproj.io/tracking-id", name)
			assert.Empty(t, s.OwnerReferences, "%s: the base's entry says ownerReferences: Never", name)
		}
	}

	// A commit scales prod down to 2 Workers.
	prodKustomization := filepath.Join(root, "kustomize", "flapp", "overlays", "prod", "kustomization.yaml")
	b, err := os.ReadFile(prodKustomization)
	require.NoError(t, err)
	require.Equal(t, 1, bytes.Count(b, []byte("value: 4\n")))
	require.NoError(t, os.WriteFile(prodKustomization, bytes.Replace(b, []byte("value: 4\n"), []byte("value: 2\n"), 1), 0o644))

	second := prodApp.sync(t, root)
	assert.Equal(t, []string{"Service/mnist-leader-worker-2", "Service/mnist-leader-worker-3"}, byStatus(second, common.ResultCodePruned))
	assert.Empty(t, byStatus(second, common.ResultCodeSyncFailed))
	assert.Empty(t, byStatus(second, common.ResultCodePruneSkipped))
	again := stagingApp.sync(t, root)
	assert.Empty(t, byStatus(again, common.ResultCodePruned), "staging did not change")
	assert.Empty(t, byStatus(again, common.ResultCodeSyncFailed))

	waitUntil(t, 30*time.Second, "the pruned Services to be gone", func() (bool, error) {
		return len(liveServices(t, prod)) == 3, nil
	})
	want := uidsOf(prodBefore)
	delete(want, "mnist-leader-worker-2")
	delete(want, "mnist-leader-worker-3")
	assert.Equal(t, want, uidsOf(liveServices(t, prod)), "prod's remaining Services keep their UIDs")
	assert.Equal(t, uidsOf(stagingBefore), uidsOf(liveServices(t, staging)), "staging's Services are untouched")
}

// What argocd-cmp-server gives the plugin's commands: ARGOCD_APP_SOURCE_PATH
// is the Application's path, the working directory is that path in the
// cmp-server's copy of the whole repository, so the working directory less
// ARGOCD_APP_SOURCE_PATH is the repository root, which `--argocd-env` reads
// (an overlay's ../../base lies there). A probe plugin beside the shipped one
// prints what its command sees, and what `flapp-services discover
// --argocd-env .` answers there.
func TestPluginEnvironmentOfAnOverlay(t *testing.T) {
	tmp, err := os.MkdirTemp("", "argocd-probe-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(tmp) })
	config := filepath.Join(tmp, "plugin.yaml")
	require.NoError(t, os.WriteFile(config, []byte(probePlugin), 0o644))
	stop, err := startPlugin(context.Background(), tmp, pluginSpec{config: config, name: "env-probe", shell: true})
	require.NoError(t, err)
	t.Cleanup(stop)

	root := t.TempDir()
	copyDir(t, filepath.Join("testdata", "monorepo"), root)
	const path = "kustomize/flapp/overlays/prod"
	resp, err := generate(t, root, application{name: "probe", namespace: "fl", path: path, plugin: namedPluginNamed("env-probe")})
	require.NoError(t, err)
	objs := objectsOf(t, resp)
	require.Len(t, objs, 1)
	data, _, _ := unstructuredStrings(objs[0].Object, "data")
	assert.Equal(t, path, data["sourcePath"], "ARGOCD_APP_SOURCE_PATH is spec.source.path")
	workDir := filepath.Join(tmp, "env-probe", "work")
	assert.True(t, strings.HasPrefix(data["pwd"], workDir+"/"), "the command runs in the cmp-server's copy (%s), not in %s", data["pwd"], workDir)
	assert.Equal(t, data["root"]+"/"+path, data["pwd"], "the working directory is the Application's path in that copy")
	assert.Equal(t, "yes", data["base"], "the copy is the whole repository: the base is there")
	assert.Equal(t, "kustomization.yaml runs flapp-services as a transformer (../../base/flapp-services.yaml)",
		data["discover"], "discover finds the base's entry through the repository root")
}

// probePlugin prints, as a ConfigMap, what a plugin command sees.
const probePlugin = `apiVersion: argoproj.io/v1alpha1
kind: ConfigManagementPlugin
metadata:
  name: env-probe
spec:
  generate:
    command: [bash, -c]
    args:
      - |
        set -euo pipefail
        root=${PWD%/"$ARGOCD_APP_SOURCE_PATH"}
        base=no
        if [ -f "$root/kustomize/flapp/base/flapp.yaml" ]; then base=yes; fi
        cat <<EOF
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: probe
        data:
          sourcePath: "$ARGOCD_APP_SOURCE_PATH"
          pwd: "$PWD"
          root: "$root"
          base: "$base"
          discover: "$(flapp-services discover --argocd-env .)"
        EOF
`

func unstructuredStrings(obj map[string]any, field string) (map[string]string, bool, error) {
	out := map[string]string{}
	m, ok := obj[field].(map[string]any)
	if !ok {
		return out, false, nil
	}
	for k, v := range m {
		out[k], _ = v.(string)
	}
	return out, true, nil
}

// Where an overlay runs flapp-services as its own transformer, what Argo CD
// gets through the plugin (the render building the overlay in-process, the
// entry read as its configuration) equals, as a set of objects, what the
// real kustomize v5.8.1 builds running the function: `kustomize build
// --enable-alpha-plugins --enable-exec` with the entry's exec path the
// project binary.
func TestOverlayEqualsKustomizeBuild(t *testing.T) {
	root := repoDir(t, map[string]string{
		"compare/base/flapp.yaml":         toYAML(t, flapp("mnist", "", 2)),
		"compare/base/kustomization.yaml": "resources: [flapp.yaml]\n",
		"compare/overlay/kustomization.yaml": "namespace: fl-compare\nresources: [../base]\nlabels:\n  - pairs: {team: fl}\n" +
			"patches:\n  - target: {kind: FLApp, name: mnist}\n    patch: |-\n      - op: replace\n        path: /spec/flReplicaSpecs/Worker/replicas\n        value: 3\n" +
			"transformers: [flapp-services.yaml]\n",
		"compare/overlay/flapp-services.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: flapp-services\n  annotations:\n" +
			"    config.kubernetes.io/function: |\n      exec:\n        path: " + env.flapp + "\ndata:\n  ownerReferences: Never\n",
	})
	resp, err := generate(t, root, application{name: "compare", namespace: "fl", path: "compare/overlay", plugin: namedPlugin(nil, nil)})
	require.NoError(t, err)
	got := objectSet(t, manifestValues(t, resp))

	built := kustomizeBuild(t, root, "compare/overlay", "--enable-alpha-plugins", "--enable-exec")
	want := objectSet(t, built)
	assert.Equal(t, want, got)
	assert.Len(t, serviceNames(objectsOf(t, resp)), 4, "the master and the overlay's 3 Workers")
}

// objectSet keys objects by kind, namespace and name.
func objectSet(t *testing.T, objs []any) map[string]any {
	t.Helper()
	out := map[string]any{}
	var keys []string
	for _, o := range objs {
		m := o.(map[string]any)
		meta, _ := m["metadata"].(map[string]any)
		key := m["kind"].(string) + "/" + str(meta["namespace"]) + "/" + str(meta["name"])
		require.NotContains(t, out, key)
		out[key] = o
		keys = append(keys, key)
	}
	sort.Strings(keys)
	t.Logf("objects: %s", strings.Join(keys, ", "))
	return out
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// examples/argocd/application-kustomize.yaml: the overlay
// examples/kustomize/scale-up through the plugin gives what the README's
// local command renders, and the same objects as the real kustomize v5.8.1
// building it with the function (its entries in the exec form, which the
// kustomize client suite proves equal to the image).
func TestExampleKustomizeApplication(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(env.repo, "examples", "argocd", "application-kustomize.yaml"))
	require.NoError(t, err)
	var app v1alpha1.Application
	require.NoError(t, yaml.UnmarshalStrict(data, &app))
	src := app.Spec.Source
	require.NotNil(t, src.Plugin)
	require.Equal(t, pluginName, src.Plugin.Name)

	root := t.TempDir()
	copyDir(t, filepath.Join(env.repo, "examples", "kustomize"), filepath.Join(root, "examples", "kustomize"))
	resp, err := generate(t, root, application{name: app.Name, namespace: app.Spec.Destination.Namespace, path: src.Path, plugin: src.Plugin})
	require.NoError(t, err)
	assert.Equal(t, []string{"mnist-leader-master-0", "mnist-leader-ps-0", "mnist-leader-worker-0", "mnist-leader-worker-1",
		"mnist-leader-worker-2", "mnist-leader-worker-3"}, serviceNames(objectsOf(t, resp)))
	for _, o := range objectsOf(t, resp) {
		assert.Equal(t, "fl-leader", o.GetNamespace(), "%s: the kustomization's namespace", o.GetName())
	}

	readme, err := os.ReadFile(filepath.Join(env.repo, "examples", "argocd", "README.md"))
	require.NoError(t, err)
	require.Contains(t, string(readme), "bin/flapp-services render "+src.Path)
	assert.Equal(t, render(t, root, src.Path), manifestValues(t, resp))

	// kustomize runs the function: the entries' image replaced by the binary.
	withExec := t.TempDir()
	copyDir(t, filepath.Join(env.repo, "examples", "kustomize"), withExec)
	const image = "      container:\n        image: ghcr.io/fedlearner/flapp-services:v0.1.0\n"
	for _, entry := range []string{"leader/flapp-services.yaml", "scale-up/flapp-services.yaml"} {
		p := filepath.Join(withExec, filepath.FromSlash(entry))
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		require.Equal(t, 1, strings.Count(string(b), image), entry)
		b = []byte(strings.Replace(string(b), image, "      exec:\n        path: "+env.flapp+"\n", 1))
		require.NoError(t, os.WriteFile(p, b, 0o644))
	}
	built := kustomizeBuild(t, withExec, "scale-up", "--enable-alpha-plugins", "--enable-exec")
	assert.Equal(t, objectSet(t, built), objectSet(t, manifestValues(t, resp)))
}

// kustomizeBuild runs the real kustomize build of dir (relative to root)
// with flags and returns its objects as JSON-normalised values.
func kustomizeBuild(t *testing.T, root, dir string, flags ...string) []any {
	t.Helper()
	cmd := exec.Command(kustomizeBinary(t), append(append([]string{"build"}, flags...), dir)...)
	cmd.Dir = root
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "kustomize build: %s", stderr.String())
	objs, err := kube.SplitYAML(stdout.Bytes())
	require.NoError(t, err)
	var out []any
	for _, o := range objs {
		out = append(out, normalise(t, o.Object))
	}
	return out
}
