package flux

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// healthTimeout replaces the shipped timeout (2m2s) in TestFLAppHealthCheck's
// Kustomization: a state that is not ready is reported when the health check
// times out, and the test walks through five of them. 30s is the least the
// controller takes (a shorter timeout counts as 30s); the 2s off a multiple
// of its 5s poll are the shipped file's reason.
const healthTimeout = "32s"

// requireTimedOut checks the verdict of a health check that ran into its
// timeout because the FLApp was neither ready nor failed (a failed one ends
// the check at once, a ready one passes it): the message names the FLApp and
// kstatus' verdict on it. When a health poll falls due at the deadline (a
// timeout that is a multiple of the 5s poll, or a late poll on a loaded
// machine) the controller may report instead that request's error ("client
// rate limiter Wait returned an error: rate: Wait(n=1) would exceed context
// deadline"), which still means the check ran into its timeout.
func requireTimedOut(t *testing.T, what string, ready metav1.Condition, flapp, verdict string) {
	t.Helper()
	assert.Equal(t, metav1.ConditionFalse, ready.Status, "%s: not ready", what)
	assert.Equal(t, "HealthCheckFailed", ready.Reason, what)
	if strings.Contains(ready.Message, "would exceed context deadline") {
		t.Logf("%s: the controller reported the deadline of its last request, not the FLApp's verdict", what)
		return
	}
	assert.Contains(t, ready.Message, ": timeout waiting for: ["+flapp+" status: '"+verdict+"'", what)
}

// TestFLAppHealthCheck proves the example's healthCheckExprs for FLApp with
// the real kustomize-controller (`wait: true`): the test moves the leader's
// FLApp through the operator's states (status subresource), asks for a
// reconcile each time and reads the Kustomization's verdict. Bootstrapping
// (no status yet, FLStateNew, FLStateBootstrapped, FLStateSyncSent) and an
// unknown state are not ready (the check times out on them); FLStateRunning
// and FLStateComplete are ready; FLStateFailing, FLStateShutDown and
// FLStateFailed fail the check at once.
func TestFLAppHealthCheck(t *testing.T) {
	t.Parallel()
	j := newJob(t, "health", jobOptions{
		files: []string{"mnist-leader.yaml"},
		ksEdit: func(ks *unstructured.Unstructured) {
			exprs, _, _ := unstructured.NestedSlice(ks.Object, "spec", "healthCheckExprs")
			require.Len(t, exprs, 1, "the shipped Kustomization has one health check (FLApp)")
			require.NoError(t, unstructured.SetNestedField(ks.Object, healthTimeout, "spec", "timeout"))
		},
	})
	flapp := "FLApp/" + j.ns("leader") + "/mnist"

	// Flux creates the FLApp without a status (the operator has not seen it
	// yet): the expressions cannot be evaluated, kstatus says Unknown, and
	// the check times out.
	st := waitKustomization(t, j.name, "first health verdict", func(s ksStatus) bool {
		return s.attempted == j.rev.name() && s.conds["Ready"].Reason == "HealthCheckFailed"
	})
	t.Logf("no status: Ready=%s %s: %s", st.conds["Ready"].Status, st.conds["Ready"].Reason, st.conds["Ready"].Message)
	requireTimedOut(t, "no status", st.conds["Ready"], flapp, "Unknown")
	if strings.Contains(st.conds["Ready"].Message, "timeout waiting for") {
		assert.Contains(t, st.conds["Ready"].Message, "no such attribute(s): status.appState")
	}
	assert.Empty(t, st.applied, "no revision counts as applied before the health checks pass")
	requireAsRendered(t, j.name, j.services(t, j.ns("leader")), liveServices(t, j.ns("leader")))

	for _, c := range []struct {
		state   string
		kstatus string // kstatus' verdict on the FLApp: Current, InProgress or Failed
	}{
		{"FLStateNew", "InProgress"},
		{"FLStateBootstrapped", "InProgress"},
		{"FLStateSyncSent", "InProgress"},
		{"FLStateRunning", "Current"},
		{"FLStateComplete", "Current"},
		{"FLStateFailing", "Failed"},
		{"FLStateShutDown", "Failed"},
		{"FLStateFailed", "Failed"},
		{"FLStateSuspended", "InProgress"}, // not a state of the operator
	} {
		setAppState(t, j.ns("leader"), "mnist", c.state)
		st := reconcileNow(t, j.name)
		ready, healthy := st.conds["Ready"], st.conds["Healthy"]
		t.Logf("%s: Ready=%s %s: %s", c.state, ready.Status, ready.Reason, ready.Message)
		switch c.kstatus {
		case "Current":
			assert.Equal(t, metav1.ConditionTrue, ready.Status, "%s: ready", c.state)
			assert.Equal(t, metav1.ConditionTrue, healthy.Status, "%s: healthy", c.state)
			assert.Equal(t, j.rev.name(), st.applied, "%s: the revision counts as applied", c.state)
		case "InProgress":
			requireTimedOut(t, c.state, ready, flapp, "InProgress")
			assert.Equal(t, metav1.ConditionFalse, healthy.Status, "%s: not healthy", c.state)
		case "Failed":
			assert.Equal(t, metav1.ConditionFalse, ready.Status, "%s: not ready", c.state)
			assert.Equal(t, "HealthCheckFailed", ready.Reason, c.state)
			assert.Equal(t, metav1.ConditionFalse, healthy.Status, "%s: not healthy", c.state)
			// Failed is final: the controller stops waiting at once
			// instead of running into the timeout.
			assert.True(t, strings.HasSuffix(ready.Message, ": failed early due to stalled resources: ["+flapp+" status: 'Failed']"), "%s: %s", c.state, ready.Message)
		default:
			t.Fatalf("bad case %q", c.kstatus)
		}
		assert.NotContains(t, ready.Message, "Service/", "%s: the Services are healthy", c.state)
	}
}
