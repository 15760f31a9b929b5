package flux

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The end of a job under Flux. When an FLApp completes, or fails, the
// operator's freeResource deletes its Services by name (unless
// spec.cleanPodPolicy is None); Flux applied them and still lists them in
// its inventory. These tests play the operator's part on the leader's FLApp
// (status subresource, then freeResource), then let the real controller
// reconcile, as its interval would, and record what it does.

// endJob takes the leader's FLApp of a running job to its final state along
// the operator's path, freeing its resources where the operator does, and
// returns what freeResource deleted.
func endJob(t *testing.T, j *job, final string) []string {
	t.Helper()
	ns := j.ns("leader")
	var deleted []string
	switch final {
	case "FLStateComplete":
		deleted = freeResource(t, ns, "mnist")
		setAppState(t, ns, "mnist", final)
	case "FLStateFailed":
		setAppState(t, ns, "mnist", "FLStateFailing")
		setAppState(t, ns, "mnist", "FLStateShutDown")
		deleted = freeResource(t, ns, "mnist")
		setAppState(t, ns, "mnist", final)
	default:
		t.Fatalf("not a final state: %s", final)
	}
	return deleted
}

// requireHealthVerdict checks the Kustomization's verdict on the leader's
// FLApp in its final state: ready on Complete, failed on Failed.
func requireHealthVerdict(t *testing.T, j *job, final string, st ksStatus) {
	t.Helper()
	ready := st.conds["Ready"]
	if final == "FLStateComplete" {
		require.Equal(t, metav1.ConditionTrue, ready.Status, "Ready: %s", ready.Message)
		return
	}
	require.Equal(t, metav1.ConditionFalse, ready.Status)
	assert.Equal(t, "HealthCheckFailed", ready.Reason)
	assert.True(t, strings.HasSuffix(ready.Message, "failed early due to stalled resources: [FLApp/"+j.ns("leader")+"/mnist status: 'Failed']"), ready.Message)
}

var finalStates = []string{"FLStateComplete", "FLStateFailed"}

// TestEndOfJob measures the example as shipped (cleanPodPolicy: All): after
// freeResource, the next reconcile re-creates every deleted Service (new UID
// and ClusterIP, as rendered, still in the inventory), and a further
// reconcile changes nothing. The Kustomization is Ready on Complete and
// fails its health check on Failed, on every reconcile.
func TestEndOfJob(t *testing.T) {
	t.Parallel()
	for _, final := range finalStates {
		t.Run(final, func(t *testing.T) {
			t.Parallel()
			j := newJob(t, "eoj-"+strings.ToLower(strings.TrimPrefix(final, "FLState")), jobOptions{})
			running := j.run(t)
			leader, follower := j.ns("leader"), j.ns("follower")
			before := liveServices(t, leader)
			followerBefore := identities(liveServices(t, follower))

			deleted := endJob(t, j, final)
			require.Equal(t, keys(j.services(t, leader)), deleted, "freeResource deletes every Service of the leader's FLApp")
			require.Empty(t, liveServices(t, leader))

			st := reconcileNow(t, j.name)
			after := liveServices(t, leader)
			t.Logf("%s, Services deleted, next reconcile: Ready=%s %s: %q; %d of %d Services back; inventory %d entries (before %d)",
				final, st.conds["Ready"].Status, st.conds["Ready"].Reason, st.conds["Ready"].Message, len(after), len(deleted), len(st.inventory), len(running.inventory))
			requireAsRendered(t, j.name, j.services(t, leader), after)
			for k, s := range after {
				assert.NotEqual(t, before[k].UID, s.UID, "%s is a new object", k)
			}
			assert.Equal(t, running.inventory, st.inventory, "the inventory is unchanged")
			assert.Equal(t, followerBefore, identities(liveServices(t, follower)), "the follower's Services are untouched")
			requireHealthVerdict(t, j, final, st)

			// Then quiet: the next reconcile changes nothing.
			again := identities(after)
			st = reconcileNow(t, j.name)
			assert.Equal(t, again, identities(liveServices(t, leader)), "a further reconcile changes no Service")
			requireHealthVerdict(t, j, final, st)
		})
	}
}

// TestEndOfJobCleanPodPolicyNone: with spec.cleanPodPolicy: None the
// operator deletes nothing, so Flux has nothing to restore: every Service
// keeps its UID and resourceVersion through the next reconcile.
func TestEndOfJobCleanPodPolicyNone(t *testing.T) {
	t.Parallel()
	for _, final := range finalStates {
		t.Run(final, func(t *testing.T) {
			t.Parallel()
			j := newJob(t, "keep-"+strings.ToLower(strings.TrimPrefix(final, "FLState")), jobOptions{
				edit: func(file string, b []byte) []byte {
					require.Equal(t, 1, strings.Count(string(b), "\n  cleanPodPolicy: All\n"), file)
					return []byte(strings.Replace(string(b), "\n  cleanPodPolicy: All\n", "\n  cleanPodPolicy: None\n", 1))
				},
			})
			running := j.run(t)
			leader := j.ns("leader")
			before := identities(liveServices(t, leader))
			require.Len(t, before, len(j.services(t, leader)))

			require.Empty(t, endJob(t, j, final), "freeResource deletes nothing")
			st := reconcileNow(t, j.name)
			t.Logf("%s with cleanPodPolicy None, next reconcile: Ready=%s %s: %q", final, st.conds["Ready"].Status, st.conds["Ready"].Reason, st.conds["Ready"].Message)
			assert.Equal(t, before, identities(liveServices(t, leader)), "no Service changed")
			assert.Equal(t, running.inventory, st.inventory)
			requireHealthVerdict(t, j, final, st)
		})
	}
}

// TestEndOfJobRemoveFromGit: the job has ended and freeResource has deleted
// its Services; the user removes the FLApp from Git (and re-renders). The
// new revision prunes the FLApp and drops its Services from the inventory
// (deleting what is already gone is no error); the other party's objects are
// untouched and the Kustomization is Ready, also after a failed job.
func TestEndOfJobRemoveFromGit(t *testing.T) {
	t.Parallel()
	for _, final := range finalStates {
		t.Run(final, func(t *testing.T) {
			t.Parallel()
			j := newJob(t, "gone-"+strings.ToLower(strings.TrimPrefix(final, "FLState")), jobOptions{})
			j.run(t)
			leader, follower := j.ns("leader"), j.ns("follower")
			followerBefore := identities(liveServices(t, follower))
			require.NotEmpty(t, endJob(t, j, final))

			require.NoError(t, os.Remove(filepath.Join(j.src, "mnist-leader.yaml")))
			rev := j.publish(t)
			st := waitKustomization(t, j.name, "revision without the leader", readyFor(rev.name()))
			t.Logf("%s, removed from Git: Ready=%s %s: %q; inventory %v", final, st.conds["Ready"].Status, st.conds["Ready"].Reason, st.conds["Ready"].Message, st.inventory)
			_, err := env.cluster.Dyn.Resource(flappGVR).Namespace(leader).Get(ctxFor(t), "mnist", metav1.GetOptions{})
			assert.True(t, apierrors.IsNotFound(err), "the FLApp is pruned: %v", err)
			assert.Empty(t, liveServices(t, leader), "no Service of the job is left")
			assert.Empty(t, inventoryIn(st, leader), "nothing of the leader in the inventory")
			assert.Len(t, st.inventory, len(decode(t, rev.rendered)), "the inventory is the follower's render")
			assert.Equal(t, followerBefore, identities(liveServices(t, follower)), "the follower's Services are untouched")
			assert.Equal(t, metav1.ConditionTrue, st.conds["Healthy"].Status)
		})
	}
}

// TestEndOfJobServiceAnnotations measures two Flux annotations on the
// Services (put there by the test, not by the render) that might look like
// a way to keep the operator's deletions: neither is one.
//   - kustomize.toolkit.fluxcd.io/ssa: IfNotPresent skips objects that
//     exist, and creates missing ones: the next reconcile re-creates the
//     deleted Services just the same (and no change to a Service in Git
//     would ever reach the cluster).
//   - kustomize.toolkit.fluxcd.io/reconcile: disabled skips the object
//     whether or not it exists: Flux never creates the Services at all,
//     though it lists them in its inventory and reports Ready.
func TestEndOfJobServiceAnnotations(t *testing.T) {
	t.Parallel()
	t.Run("IfNotPresent", func(t *testing.T) {
		t.Parallel()
		j := newJob(t, "ifnotpresent", jobOptions{postEdit: annotateServices("kustomize.toolkit.fluxcd.io/ssa", "IfNotPresent")})
		j.run(t)
		leader := j.ns("leader")
		before := liveServices(t, leader)
		requireAsRendered(t, j.name, j.services(t, leader), before)
		require.NotEmpty(t, endJob(t, j, "FLStateComplete"))
		st := reconcileNow(t, j.name)
		after := liveServices(t, leader)
		t.Logf("ssa: IfNotPresent, Complete, next reconcile: Ready=%s; %d Services back", st.conds["Ready"].Status, len(after))
		requireAsRendered(t, j.name, j.services(t, leader), after)
		for k, s := range after {
			assert.NotEqual(t, before[k].UID, s.UID, "%s re-created", k)
		}
	})
	t.Run("ReconcileDisabled", func(t *testing.T) {
		t.Parallel()
		j := newJob(t, "disabled", jobOptions{postEdit: annotateServices("kustomize.toolkit.fluxcd.io/reconcile", "disabled")})
		st := j.run(t)
		for _, party := range []string{"leader", "follower"} {
			ns := j.ns(party)
			assert.Empty(t, liveServices(t, ns), "Flux created no Service in %s", ns)
			assert.Len(t, inventoryIn(st, ns), 1+len(j.services(t, ns)), "yet the inventory lists the FLApp and every Service in %s", ns)
		}
		t.Logf("reconcile: disabled: Ready=%s, no Service created, inventory %v", st.conds["Ready"].Status, st.inventory)
	})
}
