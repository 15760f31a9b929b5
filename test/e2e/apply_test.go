package e2e

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestApplyAndReapply (scenario 2): the first server-side apply of a render
// creates the FLApp's Services as the operator would name and shape them;
// a second apply of a fresh render of the same input changes nothing, so
// no resourceVersion moves.
func TestApplyAndReapply(t *testing.T) {
	ns := newNamespace(t, "s2-apply")
	dir := t.TempDir()
	types := []replicaType{
		{name: "Master", replicas: 1, ports: []port{{name: "flapp-port", number: 50051}}},
		{name: "PS", replicas: 2, ports: defaultPorts},
		{name: "Worker", replicas: 3, pair: true, ports: append([]port{}, defaultPorts[0], port{name: "tf-port", number: 50052, protocol: "UDP"})},
	}
	writeFile(t, filepath.Join(dir, "flapp.yaml"), flappYAML("normal", ns, "Leader", types...))

	first := renderRaw(t, dir)
	require.Zero(t, first.exitCode, "render failed:\n%s", first.stderr)
	second := renderRaw(t, dir)
	require.Zero(t, second.exitCode, "render failed:\n%s", second.stderr)
	require.True(t, bytes.Equal(first.stdout, second.stdout), "two renders of the same input differ")

	objs := decodeObjects(t, first.stdout)
	svcs := filter(objs, isService)
	require.Equal(t, expectedNames("normal", "Leader", types...), names(svcs))
	require.Len(t, filter(objs, isFLApp), 1, "the render passes the FLApp through")

	applied := applySSA(t, objs, applyOpts{manager: "gitops"})
	live := liveServices(t, ns)
	require.Equal(t, expectedNames("normal", "Leader", types...), keys(live))

	// The shape the operator gives them (the four pod labels as selector, a
	// plain ClusterIP Service), as stored.
	w1 := live["normal-leader-worker-1"]
	require.Equal(t, map[string]string{"app-name": "normal", "role": "leader", "fl-replica-type": "worker", "fl-replica-index": "1"}, w1.Spec.Selector)
	require.Equal(t, corev1.ServiceTypeClusterIP, w1.Spec.Type)
	require.NotEmpty(t, w1.Spec.ClusterIP)
	require.Equal(t, []corev1.ServicePort{
		{Name: "flapp-port", Port: 50051, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromString("flapp-port")},
		{Name: "tf-port", Port: 50052, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromString("tf-port")},
	}, w1.Spec.Ports)
	for k, v := range w1.Spec.Selector {
		require.Equal(t, v, w1.Labels[k], "label %s", k)
	}
	require.Empty(t, w1.OwnerReferences, "no owner reference without a known FLApp UID")

	before := map[string]string{}
	for _, u := range applied {
		before[u.GetKind()+"/"+u.GetName()] = u.GetResourceVersion()
	}

	// Re-render and re-apply: nothing may change.
	again := applySSA(t, decodeObjects(t, renderRaw(t, dir).stdout), applyOpts{manager: "gitops"})
	for _, u := range again {
		require.Equal(t, before[u.GetKind()+"/"+u.GetName()], u.GetResourceVersion(), "%s %s changed on re-apply", u.GetKind(), u.GetName())
	}
	for n, s := range liveServices(t, ns) {
		require.Equal(t, live[n].ResourceVersion, s.ResourceVersion, "Service %s changed on re-apply", n)
		require.Equal(t, live[n].UID, s.UID)
	}
}
