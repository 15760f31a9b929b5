package argocd

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/health"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
)

// freeResource does to the Services what the fedlearner operator's
// freeResource does when a job completes or fails: unless the live FLApp
// says spec.cleanPodPolicy: None, it deletes the Service
// <app>-<role>-<type>-<index> of every replica, by name, whoever created it.
// (The operator walks the job's pods to find the indexes; with every pod
// there, that is every index below replicas.) It returns the names deleted.
func freeResource(t *testing.T, ns, name string) []string {
	t.Helper()
	app, err := env.dyn.Resource(flappGVR).Namespace(ns).Get(ctxFor(t), name, metav1.GetOptions{})
	require.NoError(t, err)
	if policy, _, _ := unstructured.NestedString(app.Object, "spec", "cleanPodPolicy"); policy == "None" {
		return nil
	}
	role, _, _ := unstructured.NestedString(app.Object, "spec", "role")
	specs, _, err := unstructured.NestedMap(app.Object, "spec", "flReplicaSpecs")
	require.NoError(t, err)
	var deleted []string
	for rtype := range specs {
		replicas, _, err := unstructured.NestedInt64(specs, rtype, "replicas")
		require.NoError(t, err)
		for i := int64(0); i < replicas; i++ {
			svc := fmt.Sprintf("%s-%s-%s-%d", name, strings.ToLower(role), strings.ToLower(rtype), i)
			err := env.kube.CoreV1().Services(ns).Delete(ctxFor(t), svc, metav1.DeleteOptions{})
			if !apierrors.IsNotFound(err) {
				require.NoError(t, err)
				deleted = append(deleted, svc)
			}
		}
	}
	sort.Strings(deleted)
	return deleted
}

// endOfJob moves the FLApp to its final state the way the operator does:
// Running, then for a success freeResource and FLStateComplete; for a
// failure FLStateFailing, FLStateShutDown, freeResource and FLStateFailed.
// It returns the Services freeResource deleted once Argo CD's cluster cache
// shows the final state.
func endOfJob(t *testing.T, s *argoSync, targets []*unstructured.Unstructured, ns, name, final string) []string {
	t.Helper()
	workers := []string{name + "-leader-worker-0-x2", name + "-leader-worker-1-x3"}
	setFLAppStatus(t, ns, name, flappStatus("FLStateRunning", map[string]map[string][]string{
		"Master": {"active": {name + "-leader-master-0-x1"}}, "Worker": {"active": workers}}))
	var deleted []string
	var rv string
	switch final {
	case "FLStateComplete":
		deleted = freeResource(t, ns, name)
		rv = setFLAppStatus(t, ns, name, flappStatus(final, map[string]map[string][]string{
			"Master": {"succeeded": {name + "-leader-master-0-x1"}}, "Worker": {"succeeded": workers}}))
	case "FLStateFailed":
		failed := map[string]map[string][]string{
			"Master": {"active": {name + "-leader-master-0-x1"}},
			"Worker": {"active": workers[:1], "failed": workers[1:]},
		}
		setFLAppStatus(t, ns, name, flappStatus("FLStateFailing", failed))
		setFLAppStatus(t, ns, name, flappStatus("FLStateShutDown", failed))
		deleted = freeResource(t, ns, name)
		rv = setFLAppStatus(t, ns, name, flappStatus(final, failed))
	default:
		t.Fatalf("not a final state: %s", final)
	}
	s.waitForCache(t, targets, "the end of the job", func(live map[string]*unstructured.Unstructured) bool {
		for _, svc := range deleted {
			if live["Service/"+svc] != nil {
				return false
			}
		}
		return live["FLApp/"+name] != nil && live["FLApp/"+name].GetResourceVersion() == rv
	})
	return deleted
}

func resourcesWith(st appStatus, sync v1alpha1.SyncStatusCode) []string {
	var out []string
	for k, r := range st.Resources {
		if r.Sync == sync {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func serviceKeys(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "Service/" + n
	}
	return out
}

// The end of a job under Argo CD, measured. After the operator's
// freeResource, with the default cleanPodPolicy (All) the Application turns
// OutOfSync (the Services are Missing) while its health follows the FLApp
// (Healthy for a completed job, Degraded for a failed one: Argo CD v3.6.1
// leaves missing resources out of the health). Without self-heal it stays
// so. A sync — what self-heal starts at once, or the next manual or
// automated sync — recreates the Services, after which the Application is
// Synced and quiet: the operator ignores a finished FLApp, so nothing
// deletes them again. With spec.cleanPodPolicy: None the operator deletes
// nothing and the Application stays Synced throughout.
func TestEndOfJob(t *testing.T) {
	overrides := argoCDResourceOverrides(t)
	allServices := []string{"mnist-leader-master-0", "mnist-leader-worker-0", "mnist-leader-worker-1"}
	for _, tc := range []struct {
		ns, final, cleanPodPolicy string
		health                    health.HealthStatusCode
	}{
		{"argocd-end-complete", "FLStateComplete", "", health.HealthStatusHealthy},
		{"argocd-end-failed", "FLStateFailed", "", health.HealthStatusDegraded},
		{"argocd-end-complete-none", "FLStateComplete", "None", health.HealthStatusHealthy},
		{"argocd-end-failed-none", "FLStateFailed", "None", health.HealthStatusDegraded},
	} {
		t.Run(tc.final+"/cleanPodPolicy="+tc.cleanPodPolicy, func(t *testing.T) {
			ns := newNamespace(t, tc.ns)
			app := flapp("mnist", "", 2)
			if tc.cleanPodPolicy != "" {
				app["spec"].(map[string]any)["cleanPodPolicy"] = tc.cleanPodPolicy
			}
			root := t.TempDir()
			writeApp(t, root, toYAML(t, app))
			s := newArgoSync(t, application{name: "mnist-end", namespace: ns, path: "apps/leader",
				plugin: namedPlugin(nil, nil)})
			s.sync(t, root)
			targets := s.targets(t, root, nil)
			before := liveServices(t, ns)
			require.Len(t, before, 3)

			deleted := endOfJob(t, s, targets, ns, "mnist", tc.final)
			st := s.status(t, targets, overrides)
			t.Logf("after freeResource: deleted %v; Application %s/%s", deleted, st.Sync, st.Health)
			assert.Equal(t, tc.health, st.Health, "the Application's health is the job's")
			assert.Equal(t, tc.health, st.Resources["FLApp/mnist"].Health.Status)
			assert.Contains(t, st.Resources["FLApp/mnist"].Health.Message, tc.final)

			if tc.cleanPodPolicy == "None" {
				assert.Empty(t, deleted)
				assert.Equal(t, v1alpha1.SyncStatusCodeSynced, st.Sync, "nothing is missing")
				assert.Equal(t, uidsOf(before), uidsOf(liveServices(t, ns)))
			} else {
				assert.Equal(t, allServices, deleted)
				assert.Equal(t, v1alpha1.SyncStatusCodeOutOfSync, st.Sync, "the deleted Services are missing")
				assert.Equal(t, serviceKeys(allServices), resourcesWith(st, v1alpha1.SyncStatusCodeOutOfSync))
				for _, svc := range allServices {
					assert.Equal(t, health.HealthStatusMissing, st.Resources["Service/"+svc].Health.Status, svc)
				}
				// Without self-heal nothing changes until a sync: a later look
				// shows the same.
				again := s.status(t, targets, overrides)
				assert.Equal(t, st.Sync, again.Sync)
				assert.Empty(t, liveServices(t, ns))
			}

			// Self-heal: the controller syncs because the Application is
			// OutOfSync (the same sync as a manual one).
			results := s.syncTargets(t, s.targets(t, root, nil), overrides)
			t.Logf("sync after the end of the job: %v", results)
			for k, r := range results {
				// A single-wave sync succeeds once applied, even when a
				// resource is Degraded: a failed job does not fail the sync.
				assert.True(t, strings.HasPrefix(r, "Synced ("), "%s: %s", k, r)
				assert.NotContains(t, r, "(Failed)", k)
				assert.NotContains(t, r, "(Error)", k)
			}
			after := liveServices(t, ns)
			require.Len(t, after, 3, "the sync leaves all Services in place")
			if tc.cleanPodPolicy == "None" {
				assert.Equal(t, uidsOf(before), uidsOf(after), "the Services were never touched")
			} else {
				for _, svc := range allServices {
					assert.Contains(t, results["Service/"+svc], "created", svc)
					assert.NotEqual(t, before[svc].UID, after[svc].UID, "%s is a new Service", svc)
				}
			}
			s.waitForCache(t, targets, "the Services", func(live map[string]*unstructured.Unstructured) bool {
				return len(live) == 4
			})
			final := s.status(t, targets, overrides)
			t.Logf("after the sync: Application %s/%s", final.Sync, final.Health)
			assert.Equal(t, v1alpha1.SyncStatusCodeSynced, final.Sync)
			assert.Equal(t, tc.health, final.Health)
			// The operator ignores a finished FLApp: nothing deletes the
			// Services again, the FLApp keeps its final state.
			state, _, _ := unstructured.NestedString(liveFLApp(t, ns, "mnist").Object, "status", "appState")
			assert.Equal(t, tc.final, state)
		})
	}
}

// No annotation on the generated Services makes Argo CD accept their
// deletion: Argo CD compares a missing resource as OutOfSync whatever it
// carries. compare-options IgnoreExtraneous only covers live objects that are
// not in the manifests; sync-options Prune=false and Delete=false only stop
// Argo CD from deleting; ignore-healthcheck only concerns health (and Argo CD
// v3.6.1 already leaves missing resources out of the health). The test
// annotates the manifests the plugin returned, as a render that wrote these
// annotations would.
func TestEndOfJobServiceAnnotationsDoNotHelp(t *testing.T) {
	overrides := argoCDResourceOverrides(t)
	annotations := map[string]string{
		"argocd.argoproj.io/compare-options":    "IgnoreExtraneous",
		"argocd.argoproj.io/sync-options":       "Prune=false,Delete=false",
		"argocd.argoproj.io/ignore-healthcheck": "true",
	}
	annotate := func(o *unstructured.Unstructured) {
		if isService(o) {
			a := o.GetAnnotations()
			if a == nil {
				a = map[string]string{}
			}
			for k, v := range annotations {
				a[k] = v
			}
			o.SetAnnotations(a)
		}
	}
	ns := newNamespace(t, "argocd-end-annotated")
	root := t.TempDir()
	writeApp(t, root, toYAML(t, flapp("mnist", "", 2)))
	s := newArgoSync(t, application{name: "mnist-annotated", namespace: ns, path: "apps/leader",
		plugin: namedPlugin(nil, nil)})
	targets := s.targets(t, root, annotate)
	s.syncTargets(t, targets, overrides)
	for name, svc := range liveServices(t, ns) {
		for k, v := range annotations {
			assert.Equal(t, v, svc.Annotations[k], name)
		}
	}
	s.waitForCache(t, targets, "the synced objects", func(live map[string]*unstructured.Unstructured) bool {
		return len(live) == 4
	})
	assert.Equal(t, v1alpha1.SyncStatusCodeSynced, s.status(t, targets, overrides).Sync)

	deleted := endOfJob(t, s, targets, ns, "mnist", "FLStateComplete")
	require.Len(t, deleted, 3)
	st := s.status(t, targets, overrides)
	assert.Equal(t, v1alpha1.SyncStatusCodeOutOfSync, st.Sync)
	assert.Equal(t, serviceKeys(deleted), resourcesWith(st, v1alpha1.SyncStatusCodeOutOfSync))
	assert.Equal(t, health.HealthStatusHealthy, st.Health)
}

func liveFLApp(t *testing.T, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := env.dyn.Resource(flappGVR).Namespace(ns).Get(ctxFor(t), name, metav1.GetOptions{})
	require.NoError(t, err)
	return u
}

// Retiring a finished job: its FLApp deleted from Git, the next sync prunes
// the FLApp, and the Application is Synced with the other job's objects.
func TestEndOfJobRetireTheFLApp(t *testing.T) {
	overrides := argoCDResourceOverrides(t)
	ns := newNamespace(t, "argocd-end-retire")
	root := t.TempDir()
	writeApp(t, root, toYAML(t, flapp("mnist", "", 2)))
	other := filepath.Join(root, "apps", "leader", "mnist-eval.yaml")
	require.NoError(t, writeFile(other, toYAML(t, flapp("mnist-eval", "", 1))))
	s := newArgoSync(t, application{name: "mnist-retire", namespace: ns, path: "apps/leader",
		plugin: namedPlugin(nil, nil)})
	s.sync(t, root)
	targets := s.targets(t, root, nil)
	s.waitForCache(t, targets, "the synced objects", func(live map[string]*unstructured.Unstructured) bool {
		return len(live) == 7
	})
	require.Len(t, endOfJob(t, s, targets, ns, "mnist", "FLStateComplete"), 3)
	assert.Equal(t, v1alpha1.SyncStatusCodeOutOfSync, s.status(t, targets, overrides).Sync)

	require.NoError(t, os.Remove(filepath.Join(root, "apps", "leader", "flapp.yaml")))
	results := s.syncTargets(t, s.targets(t, root, nil), overrides)
	assert.Contains(t, results["FLApp/mnist"], "Pruned")
	targets = s.targets(t, root, nil)
	s.waitForCache(t, targets, "the pruned FLApp gone", func(live map[string]*unstructured.Unstructured) bool {
		return live["FLApp/mnist"] == nil && len(live) == 3
	})
	st := s.status(t, targets, overrides)
	assert.Equal(t, v1alpha1.SyncStatusCodeSynced, st.Sync)
	assert.Equal(t, []string{"FLApp/mnist-eval", "Service/mnist-eval-leader-master-0", "Service/mnist-eval-leader-worker-0"},
		resourcesWith(st, v1alpha1.SyncStatusCodeSynced))
	assert.Equal(t, health.HealthStatusProgressing, st.Health, "the other job has no status yet")
}
