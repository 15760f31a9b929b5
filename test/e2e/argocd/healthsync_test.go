package argocd

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/health"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
)

// setFLAppStatus replaces the FLApp's status through the status
// subresource, as the operator writes it, and returns the new
// resourceVersion.
func setFLAppStatus(t *testing.T, ns, name string, status map[string]any) string {
	t.Helper()
	patch, err := json.Marshal([]map[string]any{{"op": "add", "path": "/status", "value": status}})
	require.NoError(t, err)
	u, err := env.dyn.Resource(flappGVR).Namespace(ns).Patch(ctxFor(t), name, types.JSONPatchType, patch, metav1.PatchOptions{}, "status")
	require.NoError(t, err)
	return u.GetResourceVersion()
}

// flappStatus is a status as the operator writes it: appState and, per
// replica type, the pod-name sets (JSON objects keyed by pod name).
func flappStatus(state string, pods map[string]map[string][]string) map[string]any {
	replicas := map[string]any{}
	for rtype, sets := range pods {
		rs := map[string]any{}
		for field, names := range sets {
			set := map[string]any{}
			for _, n := range names {
				set[n] = map[string]any{}
			}
			rs[field] = set
		}
		replicas[rtype] = rs
	}
	return map[string]any{"appState": state, "flReplicaStatus": replicas}
}

// waitForFLApp waits until Argo CD's cluster cache holds the FLApp at
// resourceVersion rv.
func (s *argoSync) waitForFLApp(t *testing.T, targets []*unstructured.Unstructured, name, rv string) {
	t.Helper()
	s.waitForCache(t, targets, "FLApp/"+name+" at resourceVersion "+rv, func(live map[string]*unstructured.Unstructured) bool {
		o := live["FLApp/"+name]
		return o != nil && o.GetResourceVersion() == rv
	})
}

// The Application's health follows the FLApp's status.appState as the
// operator moves it, with the health check installed through argocd-cm and
// read back by Argo CD's settings code; the status changes never make the
// Application OutOfSync. Without the check Argo CD has no health for the
// FLApp, and the Application is Healthy whatever the job does.
func TestApplicationHealthFollowsFLAppState(t *testing.T) {
	overrides := argoCDResourceOverrides(t)
	require.NotEmpty(t, overrides["fedlearner.k8s.io/FLApp"].HealthLua, "Argo CD's settings read the check from the patched argocd-cm")
	running := map[string]map[string][]string{
		"Master": {"active": {"mnist-leader-master-0-x1"}},
		"Worker": {"active": {"mnist-leader-worker-0-x2", "mnist-leader-worker-1-x3"}},
	}
	type step struct {
		state  string
		pods   map[string]map[string][]string
		health health.HealthStatusCode
	}
	for _, tc := range []struct {
		name, ns string
		steps    []step
	}{
		{"success", "argocd-health-success", []step{
			{"FLStateNew", nil, health.HealthStatusProgressing},
			{"FLStateBootstrapped", running, health.HealthStatusProgressing},
			{"FLStateSyncSent", running, health.HealthStatusProgressing},
			{"FLStateRunning", running, health.HealthStatusProgressing},
			{"FLStateComplete", map[string]map[string][]string{
				"Master": {"succeeded": {"mnist-leader-master-0-x1"}},
				"Worker": {"succeeded": {"mnist-leader-worker-0-x2", "mnist-leader-worker-1-x3"}},
			}, health.HealthStatusHealthy},
		}},
		{"failure", "argocd-health-failure", []step{
			{"FLStateNew", nil, health.HealthStatusProgressing},
			{"FLStateRunning", running, health.HealthStatusProgressing},
			{"FLStateFailing", map[string]map[string][]string{
				"PS":     {"failed": {"mnist-leader-ps-0-x4"}},
				"Worker": {"active": {"mnist-leader-worker-0-x2", "mnist-leader-worker-1-x3"}},
			}, health.HealthStatusDegraded},
			{"FLStateShutDown", nil, health.HealthStatusDegraded},
			{"FLStateFailed", nil, health.HealthStatusDegraded},
		}},
		{"a state this check does not know", "argocd-health-unknown", []step{
			{"FLStateRunning", running, health.HealthStatusProgressing},
			{"FLStateSuspended", running, health.HealthStatusUnknown},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := newNamespace(t, tc.ns)
			root := t.TempDir()
			writeApp(t, root, toYAML(t, flapp("mnist", "", 2)))
			s := newArgoSync(t, application{name: "mnist-health", namespace: ns, path: "apps/leader",
				plugin: namedPlugin(nil, nil)})
			s.sync(t, root)
			targets := s.targets(t, root, nil)
			s.waitForCache(t, targets, "the synced objects", func(live map[string]*unstructured.Unstructured) bool {
				return len(live) == 4
			})

			// No status yet: the operator has not seen the FLApp.
			st := s.status(t, targets, overrides)
			assert.Equal(t, v1alpha1.SyncStatusCodeSynced, st.Sync)
			assert.Equal(t, health.HealthStatusProgressing, st.Health)
			assert.Contains(t, st.Resources["FLApp/mnist"].Health.Message, "no status.appState yet")
			// Without the check: no health for the FLApp, the Application looks Healthy.
			bare := s.status(t, targets, nil)
			assert.Nil(t, bare.Resources["FLApp/mnist"].Health)
			assert.Equal(t, health.HealthStatusHealthy, bare.Health)

			for _, step := range tc.steps {
				rv := setFLAppStatus(t, ns, "mnist", flappStatus(step.state, step.pods))
				s.waitForFLApp(t, targets, "mnist", rv)
				st := s.status(t, targets, overrides)
				t.Logf("%s: Application %s/%s; FLApp: %s", step.state, st.Sync, st.Health, st.Resources["FLApp/mnist"].Health.Message)
				assert.Equal(t, step.health, st.Health, step.state)
				assert.Equal(t, v1alpha1.SyncStatusCodeSynced, st.Sync, step.state)
				assert.Equal(t, step.health, st.Resources["FLApp/mnist"].Health.Status, step.state)
				assert.Contains(t, st.Resources["FLApp/mnist"].Health.Message, step.state, step.state)
				assert.Equal(t, health.HealthStatusHealthy, st.Resources["Service/mnist-leader-worker-1"].Health.Status)
				bare := s.status(t, targets, nil)
				assert.Equal(t, health.HealthStatusHealthy, bare.Health, "without the check, %s looks Healthy", step.state)
				if step.state == "FLStateRunning" {
					// A sync (with the check, as the controller syncs) is not
					// held up by the running job: it returns once applied.
					for k, r := range s.syncTargets(t, s.targets(t, root, nil), overrides) {
						assert.True(t, strings.HasPrefix(r, "Synced ("), "%s: %s", k, r)
						assert.NotContains(t, r, "(Failed)", k)
					}
				}
			}
		})
	}
}
