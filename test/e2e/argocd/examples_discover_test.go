package argocd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/cache"
	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/sync"
	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/sync/common"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
)

// kustomizeExample is what one kustomization of examples/kustomize builds,
// read by hand from its files: the FLApp mnist, where it lands, the labels
// the kustomizations give it, and the Services of its replicas (the
// operator's names, <app>-<role>-<type>-<index>, each with the ports of its
// replica type's container).
type kustomizeExample struct {
	namespace   string
	role        string            // the FLApp's spec.role, lower-cased as in the Services' names and labels
	flappLabels map[string]string // on the FLApp (kustomize's labels:)
	// overlayLabels are the labels an overlay adds over its base's build:
	// kustomize puts them on the base's Services too; the render of the
	// commit this test was written on does not (examples/argocd/README.md),
	// so a Service may carry them, and no other label beyond the render's.
	overlayLabels map[string]string
	services      map[string]string // name -> its ports, name:port in order
}

const (
	masterPorts = "flapp-port:50051"
	fullPorts   = "flapp-port:50051,tf-port:50052"
)

// kustomizeExamples: every kustomization root of examples/kustomize.
//   - leader: namespace fl-leader, labels part-of on the FLApp only (the
//     Services are generated after the labels ran), Master 1, PS 1, Worker 2;
//   - follower: namespace fl-follower, Master 1, Worker 2, no PS, no labels;
//   - scale-up: ../leader with Worker patched to 4, in fl-leader;
//   - staging: ../leader moved to fl-leader-staging, label environment:
//     staging on the FLApp (and, as kustomize builds it, on the Services).
var kustomizeExamples = map[string]kustomizeExample{
	"leader": {"fl-leader", "leader", map[string]string{"app.kubernetes.io/part-of": "mnist-federation"}, nil, map[string]string{
		"mnist-leader-master-0": masterPorts, "mnist-leader-ps-0": fullPorts,
		"mnist-leader-worker-0": fullPorts, "mnist-leader-worker-1": fullPorts,
	}},
	"follower": {"fl-follower", "follower", nil, nil, map[string]string{
		"mnist-follower-master-0": masterPorts, "mnist-follower-worker-0": fullPorts, "mnist-follower-worker-1": fullPorts,
	}},
	"scale-up": {"fl-leader", "leader", map[string]string{"app.kubernetes.io/part-of": "mnist-federation"}, nil, map[string]string{
		"mnist-leader-master-0": masterPorts, "mnist-leader-ps-0": fullPorts,
		"mnist-leader-worker-0": fullPorts, "mnist-leader-worker-1": fullPorts,
		"mnist-leader-worker-2": fullPorts, "mnist-leader-worker-3": fullPorts,
	}},
	"staging": {"fl-leader-staging", "leader", map[string]string{"app.kubernetes.io/part-of": "mnist-federation", "environment": "staging"},
		map[string]string{"environment": "staging"}, map[string]string{
			"mnist-leader-master-0": masterPorts, "mnist-leader-ps-0": fullPorts,
			"mnist-leader-worker-0": fullPorts, "mnist-leader-worker-1": fullPorts,
		}},
}

// kustomizationFileNames are the names kustomize (and Argo CD's detection)
// takes for a kustomization file.
var kustomizationFileNames = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// The plugin's discover claims every kustomization root of this
// repository's examples/kustomize, each built by flapp-services as its own
// transformer or through its base (staging): Argo CD v3.6.1's own detection
// (discovery.AppType, which asks the plugin's discover before its own
// kustomize detection) says Plugin for each, and Kustomize without the
// plugin, whose kustomize cannot build them. Each is an Application naming
// no plugin and one naming flapp-services; both are rendered by the plugin
// through argocd-cmp-server (source type Plugin, the objects of `flapp-
// services render` of the path from the repository root) and synced by
// gitops-engine into the cluster: the FLApp and exactly the expected Services
// live, then pruned again by a sync of nothing. A kustomization without
// flapp-services anywhere, beside them in the same copy, is not claimed: an
// Application naming no plugin is rendered by Argo CD's own kustomize
// v5.8.1 and synced; one naming the plugin fails with "could not find".
func TestDiscoverClaimsEveryKustomizeExample(t *testing.T) {
	needCluster(t)
	withTools(t) // Argo CD's own kustomize (and helm) on PATH, as in the repo-server image
	src := filepath.Join(env.repo, "examples", "kustomize")
	entries, err := os.ReadDir(src)
	require.NoError(t, err)
	var examples []string
	for _, e := range entries {
		if e.IsDir() && hasKustomization(filepath.Join(src, e.Name())) {
			examples = append(examples, e.Name())
		}
	}
	require.NotEmpty(t, examples, "examples/kustomize holds no kustomization")
	for _, name := range examples {
		require.Contains(t, kustomizeExamples, name, "examples/kustomize/%s is new: write down what it builds in kustomizeExamples", name)
	}
	for name := range kustomizeExamples {
		require.Contains(t, examples, name, "examples/kustomize/%s is gone: drop it from kustomizeExamples", name)
	}
	t.Logf("the kustomizations of examples/kustomize: %s", strings.Join(examples, ", "))

	root := t.TempDir()
	copyDir(t, src, filepath.Join(root, "examples", "kustomize"))
	// The negative control, beside the examples: no flapp-services entry
	// anywhere in its build.
	const control = "examples/kustomize/no-function"
	require.NoDirExists(t, filepath.Join(root, filepath.FromSlash(control)))
	require.NoError(t, writeFile(filepath.Join(root, filepath.FromSlash(control), "kustomization.yaml"),
		"apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - settings.yaml\n"+
			"configMapGenerator:\n  - name: generated\n    literals: [k=v]\n"))
	require.NoError(t, writeFile(filepath.Join(root, filepath.FromSlash(control), "settings.yaml"), configMap("settings")))

	namespaces := map[string]bool{}
	for _, ex := range kustomizeExamples {
		if !namespaces[ex.namespace] {
			newNamespace(t, ex.namespace)
			namespaces[ex.namespace] = true
		}
	}
	noPlugin := t.TempDir() // a socket directory without plugins: Argo CD without this one

	for _, name := range examples {
		ex := kustomizeExamples[name]
		path := "examples/kustomize/" + name
		t.Run(name, func(t *testing.T) {
			appPath := filepath.Join(root, filepath.FromSlash(path))
			assert.Equal(t, string(v1alpha1.ApplicationSourceTypeKustomize), appTypeWith(t, noPlugin, appPath, root, monorepoApp{path: path}),
				"without the plugin Argo CD takes it for a kustomization")
			assert.Equal(t, string(v1alpha1.ApplicationSourceTypePlugin), appTypeWith(t, env.sockDir, appPath, root, monorepoApp{path: path}),
				"the plugin's discover claims it before Argo CD's kustomize detection")
			_, argoErr := generateWith(t, noPlugin, root, application{name: "ex-" + name, namespace: "default", path: path})
			require.Error(t, argoErr, "Argo CD's own kustomize cannot build it")
			assert.Contains(t, argoErr.Error(), "external plugins disabled")

			want := render(t, root, path)
			for _, variant := range []struct {
				name   string
				plugin *v1alpha1.ApplicationSourcePlugin
			}{{"no plugin named", nil}, {"naming the plugin", namedPlugin(nil, nil)}} {
				t.Run(variant.name, func(t *testing.T) {
					// The destination namespace is another one: the build's must win.
					app := application{name: "ex-" + name + "-" + strings.ReplaceAll(variant.name, " ", "-"), namespace: "default", path: path, plugin: variant.plugin}
					resp, err := generate(t, root, app)
					require.NoError(t, err)
					assert.Equal(t, string(v1alpha1.ApplicationSourceTypePlugin), resp.SourceType, "rendered by the plugin")
					assert.Equal(t, want, manifestValues(t, resp), "the render of the path from the repository root")
					syncExample(t, root, app, ex)
				})
			}
		})
	}

	t.Run("a kustomization without flapp-services", func(t *testing.T) {
		appPath := filepath.Join(root, filepath.FromSlash(control))
		kust := string(v1alpha1.ApplicationSourceTypeKustomize)
		assert.Equal(t, kust, appTypeWith(t, noPlugin, appPath, root, monorepoApp{path: control}))
		assert.Equal(t, kust, appTypeWith(t, env.sockDir, appPath, root, monorepoApp{path: control}), "discover leaves it to Argo CD")

		_, err := generate(t, root, application{name: "ex-control", namespace: "default", path: control, plugin: namedPlugin(nil, nil)})
		require.Error(t, err, "an Application naming the plugin")
		assert.Contains(t, err.Error(), notFound)

		ns := newNamespace(t, "argocd-examples-control")
		app := application{name: "ex-control", namespace: ns, path: control}
		resp, err := generate(t, root, app)
		require.NoError(t, err)
		assert.Equal(t, kust, resp.SourceType, "rendered by Argo CD's own kustomize")
		assert.Equal(t, objectSet(t, kustomizeBuild(t, root, control)), objectSet(t, manifestValues(t, resp)),
			"the objects of the real kustomize v5.8.1's build")
		var names []string
		for _, o := range objectsOf(t, resp) {
			assert.Equal(t, "ConfigMap", o.GetKind())
			names = append(names, o.GetName())
		}
		require.Len(t, names, 2)
		sort.Strings(names)
		assert.True(t, strings.HasPrefix(names[0], "generated-"), "kustomize's configMapGenerator names it with a hash: %s", names[0])
		assert.Equal(t, "settings", names[1])

		s := newArgoSync(t, app)
		tracked, err := generate(t, root, s.app)
		require.NoError(t, err)
		require.Equal(t, kust, tracked.SourceType)
		results := s.syncObjects(t, objectsOf(t, tracked))
		assert.Empty(t, byStatus(results, common.ResultCodeSyncFailed))
		assert.Equal(t, []string{"ConfigMap/" + names[0], "ConfigMap/settings"}, byStatus(results, common.ResultCodeSynced))
		for _, n := range names {
			cm, err := env.kube.CoreV1().ConfigMaps(ns).Get(ctxFor(t), n, metav1.GetOptions{})
			require.NoError(t, err, n)
			assert.True(t, strings.HasPrefix(cm.Annotations["argocd.argoproj.io/tracking-id"], app.name+":"), "%s is the Application's", n)
		}
		assert.Empty(t, liveServices(t, ns), "no Service")
	})
}

// hasKustomization reports whether dir holds a kustomization file.
func hasKustomization(dir string) bool {
	for _, name := range kustomizationFileNames {
		if info, err := os.Stat(filepath.Join(dir, name)); err == nil && info.Mode().IsRegular() {
			return true
		}
	}
	return false
}

// syncExample syncs the Application (its manifests generated as the
// controller asks for them, with the tracking annotation), checks the FLApp
// and its Services live against the example's expectations, then syncs
// nothing with prune, so the next Application of the same objects starts
// from an empty namespace.
func syncExample(t *testing.T, root string, app application, ex kustomizeExample) {
	t.Helper()
	s := newArgoSync(t, app)
	resp, err := generate(t, root, s.app)
	require.NoError(t, err)
	require.Equal(t, string(v1alpha1.ApplicationSourceTypePlugin), resp.SourceType)
	results := s.syncObjects(t, objectsOf(t, resp))
	assert.Empty(t, byStatus(results, common.ResultCodeSyncFailed))
	want := []string{"FLApp/mnist"}
	for name := range ex.services {
		want = append(want, "Service/"+name)
	}
	sort.Strings(want)
	assert.Equal(t, want, byStatus(results, common.ResultCodeSynced))

	tracking := func(obj metav1.Object) string { return obj.GetAnnotations()["argocd.argoproj.io/tracking-id"] }
	flappObj, err := env.dyn.Resource(flappGVR).Namespace(ex.namespace).Get(ctxFor(t), "mnist", metav1.GetOptions{})
	require.NoError(t, err, "the FLApp in %s", ex.namespace)
	assert.True(t, strings.HasPrefix(tracking(flappObj), app.name+":"), "the FLApp is the Application's: %s", tracking(flappObj))
	for k, v := range ex.flappLabels {
		assert.Equal(t, v, flappObj.GetLabels()[k], "the FLApp's label %s", k)
	}
	if ex.flappLabels == nil {
		assert.NotContains(t, flappObj.GetLabels(), "app.kubernetes.io/part-of")
	}

	live := liveServices(t, ex.namespace)
	var liveNames []string
	for name := range live {
		liveNames = append(liveNames, name)
	}
	sort.Strings(liveNames)
	var wantNames []string
	for name := range ex.services {
		wantNames = append(wantNames, name)
	}
	sort.Strings(wantNames)
	require.Equal(t, wantNames, liveNames, "the Services live in %s", ex.namespace)
	for name, svc := range live {
		assert.True(t, strings.HasPrefix(tracking(&svc), app.name+":"), "%s is the Application's: %s", name, tracking(&svc))
		assert.Empty(t, svc.OwnerReferences, "%s: the entries say ownerReferences: Never", name)
		// <app>-<role>-<type>-<index>
		parts := strings.Split(name, "-")
		require.Len(t, parts, 4, name)
		selector := map[string]string{"app-name": "mnist", "role": ex.role, "fl-replica-type": parts[2], "fl-replica-index": parts[3]}
		assert.Equal(t, selector, svc.Spec.Selector, "%s: the operator's four pod labels", name)
		labels := map[string]string{"app.kubernetes.io/managed-by": "flapp-services"}
		for k, v := range selector {
			labels[k] = v
		}
		for k, v := range ex.overlayLabels {
			if got, ok := svc.Labels[k]; ok {
				assert.Equal(t, v, got, "%s: the overlay's label %s", name, k)
				labels[k] = v
			}
		}
		assert.Equal(t, labels, svc.Labels, "%s: the render's labels (and the overlay's)", name)
		var ports []string
		for _, p := range svc.Spec.Ports {
			assert.Equal(t, p.Name, p.TargetPort.String(), "%s: the named targetPort", name)
			ports = append(ports, fmt.Sprintf("%s:%d", p.Name, p.Port))
		}
		assert.Equal(t, ex.services[name], strings.Join(ports, ","), "%s: the ports", name)
	}

	// A sync of nothing prunes all of it.
	pruned := s.syncObjects(t, nil)
	assert.Equal(t, want, byStatus(pruned, common.ResultCodePruned))
	assert.Empty(t, byStatus(pruned, common.ResultCodeSyncFailed))
	waitUntil(t, 60*time.Second, "the Application's objects to be gone from "+ex.namespace, func() (bool, error) {
		if n := len(liveServices(t, ex.namespace)); n > 0 {
			return false, fmt.Errorf("%d Services left", n)
		}
		_, err := env.dyn.Resource(flappGVR).Namespace(ex.namespace).Get(ctxFor(t), "mnist", metav1.GetOptions{})
		return apierrors.IsNotFound(err), err
	})
}

// syncObjects is argoSync.sync of the given targets: gitops-engine's sync
// with prune on, returning its result per resource.
func (s *argoSync) syncObjects(t *testing.T, targets []*unstructured.Unstructured) map[string]common.ResourceSyncResult {
	t.Helper()
	isManaged := func(r *cache.Resource) bool {
		name, _ := r.Info.(string)
		return name == s.app.name
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	results, err := s.engine.Sync(ctx, targets, isManaged, revision, s.app.namespace, sync.WithPrune(true), sync.WithLogr(testr.New(t)))
	require.NoError(t, err)
	out := map[string]common.ResourceSyncResult{}
	for _, r := range results {
		out[r.ResourceKey.Kind+"/"+r.ResourceKey.Name] = r
	}
	return out
}
