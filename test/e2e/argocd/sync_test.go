package argocd

import (
	"context"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/cache"
	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/engine"
	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/sync"
	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/sync/common"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/util/argo"
)

var flappGVR = schema.GroupVersionResource{Group: "fedlearner.k8s.io", Version: "v1alpha1", Resource: "flapps"}

// argoSync is one Argo CD Application's sync loop: Argo CD's cluster cache
// (which resources belong to which Application, read from Argo CD's tracking
// annotation with Argo CD's own resource-tracking code, as the application
// controller does) and gitops-engine's sync.
type argoSync struct {
	app    application
	engine engine.GitOpsEngine
	cache  cache.ClusterCache
}

func newArgoSync(t *testing.T, app application) *argoSync {
	t.Helper()
	needCluster(t)
	log := testr.NewWithOptions(t, testr.Options{Verbosity: 0})
	tracking := argo.NewResourceTracking()
	// Cluster-wide, as Argo CD's application controller watches a cluster.
	clusterCache := cache.NewClusterCache(env.cfg,
		cache.SetLogr(log),
		cache.SetPopulateResourceInfoHandler(func(un *unstructured.Unstructured, _ bool) (any, bool) {
			name := tracking.GetAppName(un, appLabelKey, v1alpha1.TrackingMethodAnnotation, "")
			return name, name != ""
		}),
	)
	e := engine.NewEngine(env.cfg, clusterCache, engine.WithLogr(log))
	cleanup, err := e.Run()
	require.NoError(t, err)
	t.Cleanup(cleanup)
	app.tracking = true
	return &argoSync{app: app, engine: e, cache: clusterCache}
}

// sync generates the Application's manifests through argocd-cmp-server and
// syncs them with prune on, returning gitops-engine's result per resource.
func (s *argoSync) sync(t *testing.T, root string) map[string]common.ResourceSyncResult {
	t.Helper()
	resp, err := generate(t, root, s.app)
	require.NoError(t, err)
	targets := objectsOf(t, resp)
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

func byStatus(results map[string]common.ResourceSyncResult, status common.ResultCode) []string {
	var keys []string
	for k, r := range results {
		if r.Status == status {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

func uidsOf(svcs map[string]corev1.Service) map[string]types.UID {
	out := map[string]types.UID{}
	for n, s := range svcs {
		out[n] = s.UID
	}
	return out
}

func writeApp(t *testing.T, root, content string) {
	t.Helper()
	repoFile := filepath.Join(root, "apps", "leader", "flapp.yaml")
	require.NoError(t, writeFile(repoFile, content))
}

// With Never (the plugin's default) Argo CD tracks the Services like any
// other resource of the Application: a scale-down with prune deletes exactly
// the stale Services, the others keep their identity, and nothing the
// Application does not own is touched.
func TestSyncScaleDownPrunesExactlyTheStaleServices(t *testing.T) {
	needCluster(t)
	ns := newNamespace(t, "argocd-never")
	foreign := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "someone-elses"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	_, err := env.kube.CoreV1().Services(ns).Create(ctxFor(t), foreign, metav1.CreateOptions{})
	require.NoError(t, err)

	root := t.TempDir()
	writeApp(t, root, toYAML(t, flapp("mnist", "", 3)))
	s := newArgoSync(t, application{name: "mnist-leader", namespace: ns, path: "apps/leader",
		plugin: namedPlugin(map[string]string{"FLAPP_OWNER_REFERENCES": "Never"}, nil)})

	first := s.sync(t, root)
	assert.Empty(t, byStatus(first, common.ResultCodeSyncFailed))
	assert.Equal(t, []string{"FLApp/mnist", "Service/mnist-leader-master-0", "Service/mnist-leader-worker-0",
		"Service/mnist-leader-worker-1", "Service/mnist-leader-worker-2"}, byStatus(first, common.ResultCodeSynced))
	before := liveServices(t, ns)
	require.Len(t, before, 5)
	for name, svc := range before {
		if name != "someone-elses" {
			assert.Empty(t, svc.OwnerReferences, name)
			assert.Contains(t, svc.Annotations, "argocd.argoproj.io/tracking-id", name)
		}
	}

	writeApp(t, root, toYAML(t, flapp("mnist", "", 1)))
	second := s.sync(t, root)
	assert.Equal(t, []string{"Service/mnist-leader-worker-1", "Service/mnist-leader-worker-2"}, byStatus(second, common.ResultCodePruned))
	assert.Empty(t, byStatus(second, common.ResultCodeSyncFailed))
	assert.Empty(t, byStatus(second, common.ResultCodePruneSkipped))

	var after map[string]corev1.Service
	waitUntil(t, 30*time.Second, "the pruned Services to be gone", func() (bool, error) {
		after = liveServices(t, ns)
		return len(after) == 3, nil
	})
	want := uidsOf(before)
	delete(want, "mnist-leader-worker-1")
	delete(want, "mnist-leader-worker-2")
	assert.Equal(t, want, uidsOf(after), "the remaining Services keep their UIDs, the foreign one is untouched")
	for name, svc := range after {
		assert.Equal(t, before[name].Spec.ClusterIP, svc.Spec.ClusterIP, name)
	}
}

// What Argo CD does with owner-referenced Services (IfKnown with the FLApp's
// real UID, from a live export): it creates and updates them, but its prune
// never sees them — gitops-engine's ClusterCache.GetManagedLiveObjs, which
// the application controller uses too, skips every live resource that has
// ownerReferences. After a scale-down the stale Services stay; only the
// garbage collector removes them, when their FLApp is deleted.
func TestSyncOwnerReferencedServicesAreNeverPruned(t *testing.T) {
	needCluster(t)
	ns := newNamespace(t, "argocd-ifknown")
	// The FLApp exists first, so its UID is real (as in a live export).
	live, err := env.dyn.Resource(flappGVR).Namespace(ns).Create(ctxFor(t),
		&unstructured.Unstructured{Object: flapp("mnist", ns, 3)}, metav1.CreateOptions{})
	require.NoError(t, err)
	uid := live.GetUID()
	export := func(workers int) string {
		f := flapp("mnist", ns, workers)
		f["metadata"].(map[string]any)["uid"] = string(uid)
		return toYAML(t, map[string]any{"apiVersion": "v1", "kind": "List", "items": []any{f}})
	}

	root := t.TempDir()
	writeApp(t, root, export(3))
	s := newArgoSync(t, application{name: "mnist-owned", namespace: ns, path: "apps/leader",
		plugin: namedPlugin(nil, map[string]string{"owner-references": "IfKnown"})})

	first := s.sync(t, root)
	assert.Empty(t, byStatus(first, common.ResultCodeSyncFailed))
	before := liveServices(t, ns)
	require.Len(t, before, 4)
	for name, svc := range before {
		require.Len(t, svc.OwnerReferences, 1, name)
		assert.Equal(t, uid, svc.OwnerReferences[0].UID, name)
	}

	writeApp(t, root, export(1))
	second := s.sync(t, root)
	assert.Empty(t, byStatus(second, common.ResultCodePruned), "Argo CD prunes no owner-referenced Service")
	assert.Empty(t, byStatus(second, common.ResultCodePruneSkipped))
	assert.Empty(t, byStatus(second, common.ResultCodeSyncFailed))
	assert.NotContains(t, second, "Service/mnist-leader-worker-1", "the stale Service is not even part of the sync")

	// Still there a while later: the owner exists, so the garbage collector
	// keeps them too.
	time.Sleep(5 * time.Second)
	assert.Equal(t, uidsOf(before), uidsOf(liveServices(t, ns)), "the stale Services stay after the prune")

	// Only deleting the FLApp removes them, through the garbage collector.
	require.NoError(t, env.dyn.Resource(flappGVR).Namespace(ns).Delete(ctxFor(t), "mnist", metav1.DeleteOptions{}))
	waitUntil(t, 90*time.Second, "the garbage collector to delete the Services", func() (bool, error) {
		return len(liveServices(t, ns)) == 0, nil
	})
	_, err = env.dyn.Resource(flappGVR).Namespace(ns).Get(ctxFor(t), "mnist", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err))
}
