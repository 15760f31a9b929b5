package e2e

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// gcTimeout bounds how long the real garbage collector may take.
const gcTimeout = 60 * time.Second

// TestGarbageCollection (scenario 5): an FLApp is created from Git, exported
// live (UID included) and rendered from that export: every Service carries a
// controller owner reference with the live UID. After the FLApp is deleted,
// the real garbage collector deletes all of them within gcTimeout.
//
// A second FLApp rendered from Git alone (no UID) gets Services without any
// owner reference; deleting that FLApp leaves its Services alone, and they
// are still there after the collector has finished with the first FLApp's
// Services (and for a further 5 s, longer than a Service with a wrong UID
// lasted before the collector deleted it when this test was written).
func TestGarbageCollection(t *testing.T) {
	ns := newNamespace(t, "s5-gc")
	git := t.TempDir()
	worker := replicaType{name: "Worker", replicas: 3, pair: true, ports: defaultPorts}
	master := replicaType{name: "Master", replicas: 1, ports: defaultPorts[:1]}
	writeFile(t, filepath.Join(git, "owned.yaml"), flappYAML("owned", ns, "Leader", master, worker))
	writeFile(t, filepath.Join(git, "gitonly.yaml"), flappYAML("gitonly", ns, "Follower", worker))

	// Create both FLApps, as a user or a GitOps engine would.
	created := createFromFile(t, filepath.Join(git, "owned.yaml"))
	uid := created[0].GetUID()
	require.NotEmpty(t, uid)
	createFromFile(t, filepath.Join(git, "gitonly.yaml"))

	// Render "owned" from its live export: owner references with the live UID.
	live := t.TempDir()
	exportFLApp(t, ns, "owned", live)
	ownedSvcs := filter(render(t, live), isService)
	require.Equal(t, expectedNames("owned", "Leader", master, worker), names(ownedSvcs))
	for _, s := range ownedSvcs {
		refs := s.GetOwnerReferences()
		require.Len(t, refs, 1, "Service %s", s.GetName())
		r := refs[0]
		require.Equal(t, "fedlearner.k8s.io/v1alpha1", r.APIVersion)
		require.Equal(t, "FLApp", r.Kind)
		require.Equal(t, "owned", r.Name)
		require.Equal(t, uid, r.UID)
		require.NotNil(t, r.Controller)
		require.True(t, *r.Controller)
		require.NotNil(t, r.BlockOwnerDeletion)
		require.True(t, *r.BlockOwnerDeletion)
	}

	// Render "gitonly" from Git alone: no UID, so no owner reference.
	gitOnly := t.TempDir()
	data, err := os.ReadFile(filepath.Join(git, "gitonly.yaml"))
	require.NoError(t, err)
	writeFile(t, filepath.Join(gitOnly, "gitonly.yaml"), string(data))
	gitSvcs := filter(render(t, gitOnly), isService)
	require.Equal(t, expectedNames("gitonly", "Follower", worker), names(gitSvcs))
	for _, s := range gitSvcs {
		require.Empty(t, s.GetOwnerReferences(), "Service %s rendered without a UID", s.GetName())
	}

	applySSA(t, ownedSvcs, applyOpts{manager: "gitops"})
	applySSA(t, gitSvcs, applyOpts{manager: "gitops"})
	require.Len(t, liveServices(t, ns), len(ownedSvcs)+len(gitSvcs))

	// Delete both FLApps (background propagation, the kubectl default).
	for _, n := range []string{"owned", "gitonly"} {
		mustKubectl(t, nil, "delete", "flapp", n, "-n", ns, "--wait=false")
	}
	start := time.Now()
	waitUntil(t, gcTimeout, "the garbage collector to delete the owned Services", func() (bool, error) {
		for _, s := range ownedSvcs {
			_, err := env.kube.CoreV1().Services(ns).Get(ctxFor(t), s.GetName(), metav1.GetOptions{})
			if err == nil {
				return false, nil
			}
			if !isNotFound(err) {
				return false, err
			}
		}
		return true, nil
	})
	t.Logf("garbage collector deleted %d owned Services %s after the FLApp", len(ownedSvcs), time.Since(start).Round(10*time.Millisecond))
	_, err = env.dyn.Resource(flappGVR).Namespace(ns).Get(ctxFor(t), "owned", metav1.GetOptions{})
	require.True(t, isNotFound(err), "FLApp owned is gone: %v", err)

	// The Services without owner references stay.
	stays := func() {
		live := liveServices(t, ns)
		for _, s := range gitSvcs {
			_, ok := live[s.GetName()]
			require.True(t, ok, "Service %s without owner reference must not be collected", s.GetName())
		}
	}
	stays()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(500 * time.Millisecond)
		stays()
	}
}
