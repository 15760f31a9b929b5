package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// operatorServices builds the Services exactly as the original fedlearner
// operator does: four labels, the same four as
// selector, one port per port of the tensorflow container with the port
// name as targetPort and no protocol, and a controller owner reference.
func operatorServices(flapp *unstructured.Unstructured, types ...replicaType) []*corev1.Service {
	r, _, _ := unstructured.NestedString(flapp.Object, "spec", "role")
	role := strings.ToLower(r)
	var out []*corev1.Service
	for _, rt := range types {
		rtype := strings.ToLower(rt.name)
		for i := range rt.replicas {
			labels := map[string]string{
				"app-name":         flapp.GetName(),
				"role":             role,
				"fl-replica-type":  rtype,
				"fl-replica-index": fmt.Sprint(i),
			}
			var ports []corev1.ServicePort
			for _, p := range rt.ports {
				ports = append(ports, corev1.ServicePort{Name: p.name, Port: int32(p.number), TargetPort: intstr.FromString(p.name)})
			}
			out = append(out, &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{
					Name:      fmt.Sprintf("%s-%s-%s-%d", flapp.GetName(), role, rtype, i),
					Namespace: flapp.GetNamespace(),
					Labels:    labels,
					OwnerReferences: []metav1.OwnerReference{{
						APIVersion:         "fedlearner.k8s.io/v1alpha1",
						Kind:               "FLApp",
						Name:               flapp.GetName(),
						UID:                flapp.GetUID(),
						Controller:         ptr.To(true),
						BlockOwnerDeletion: ptr.To(true),
					}},
				},
				Spec: corev1.ServiceSpec{Selector: labels, Ports: ports},
			})
		}
	}
	return out
}

// TestOperatorCoexistence (scenario 6): Services created by the operator
// (plain Create, controller owner reference with the live UID, no
// managed-by label) are taken over by a server-side apply of the render of
// the same FLApp, rendered from its live export. The apply needs no force
// (no field conflicts), deletes and recreates nothing, and leaves UIDs,
// ClusterIPs and the specs exactly as they were.
func TestOperatorCoexistence(t *testing.T) {
	ns := newNamespace(t, "s6-coexist")
	git := t.TempDir()
	types := []replicaType{
		{name: "Master", replicas: 1, ports: defaultPorts[:1]},
		{name: "PS", replicas: 1, ports: defaultPorts},
		{name: "Worker", replicas: 3, pair: true, ports: defaultPorts},
	}
	writeFile(t, filepath.Join(git, "flapp.yaml"), flappYAML("legacy", ns, "Follower", types...))
	flapp := createFromFile(t, filepath.Join(git, "flapp.yaml"))[0]
	require.NotEmpty(t, flapp.GetUID())

	// The operator, as a controller: its own user agent, plain creates.
	opCfg := rest.CopyConfig(env.cfg)
	opCfg.UserAgent = "fedlearner-operator/v0.1"
	op, err := kubernetes.NewForConfig(opCfg)
	require.NoError(t, err)
	for _, s := range operatorServices(flapp, types...) {
		_, err := op.CoreV1().Services(ns).Create(ctxFor(t), s, metav1.CreateOptions{})
		require.NoError(t, err, "operator create %s", s.Name)
	}
	before := liveServices(t, ns)
	require.Equal(t, expectedNames("legacy", "Follower", types...), keys(before))

	// Watch from here on: a delete or a recreate would show up as an event.
	list, err := env.kube.CoreV1().Services(ns).List(ctxFor(t), metav1.ListOptions{})
	require.NoError(t, err)
	w, err := env.kube.CoreV1().Services(ns).Watch(ctxFor(t), metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	require.NoError(t, err)
	defer w.Stop()

	// Render from the live export (UID known) and apply without force.
	live := t.TempDir()
	exportFLApp(t, ns, "legacy", live)
	rendered := filter(render(t, live), isService)
	require.Equal(t, keys(before), names(rendered))
	for _, s := range rendered {
		_, err := trySSA(t, s, applyOpts{manager: "flapp-gitops", force: false})
		require.NoError(t, err, "apply of %s must not conflict with the operator's fields", s.GetName())
	}

	// A sentinel marks the end of the apply in the event stream.
	sentinel := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "zz-sentinel", Namespace: ns},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "x", Port: 1}}},
	}
	_, err = env.kube.CoreV1().Services(ns).Create(ctxFor(t), sentinel, metav1.CreateOptions{})
	require.NoError(t, err)
	var events []string
	timeout := time.After(30 * time.Second)
collect:
	for {
		select {
		case ev, ok := <-w.ResultChan():
			require.True(t, ok, "watch closed early")
			s, isSvc := ev.Object.(*corev1.Service)
			require.True(t, isSvc, "unexpected watch object %T: %v", ev.Object, ev.Object)
			if s.Name == sentinel.Name {
				break collect
			}
			events = append(events, fmt.Sprintf("%s %s", ev.Type, s.Name))
			require.Equal(t, watch.Modified, ev.Type, "Service %s: only in-place updates are allowed", s.Name)
		case <-timeout:
			t.Fatalf("no watch event for the sentinel within 30 s; events so far: %v", events)
		}
	}
	t.Logf("watch events during the takeover: %v", events)

	after := liveServices(t, ns)
	delete(after, sentinel.Name)
	require.Equal(t, keys(before), keys(after))
	for n, b := range before {
		a := after[n]
		require.Equal(t, b.UID, a.UID, "Service %s kept its UID", n)
		require.Equal(t, b.CreationTimestamp, a.CreationTimestamp, "Service %s", n)
		require.Equal(t, b.Spec, a.Spec, "Service %s spec unchanged", n)
		require.Equal(t, b.OwnerReferences, a.OwnerReferences, "Service %s owner references unchanged", n)
		for k, v := range b.Labels {
			require.Equal(t, v, a.Labels[k], "Service %s label %s", n, k)
		}
		require.Equal(t, managedByValue, a.Labels[managedByLabel], "Service %s now carries the managed-by label", n)
		var managers []string
		for _, mf := range a.ManagedFields {
			managers = append(managers, fmt.Sprintf("%s/%s", mf.Manager, mf.Operation))
		}
		require.Contains(t, managers, "flapp-gitops/Apply", "Service %s", n)
	}

	// Steady state: a second apply of the same render changes nothing.
	for _, s := range rendered {
		_, err := trySSA(t, s, applyOpts{manager: "flapp-gitops"})
		require.NoError(t, err)
	}
	for n, s := range liveServices(t, ns) {
		if n != sentinel.Name {
			require.Equal(t, after[n].ResourceVersion, s.ResourceVersion, "Service %s", n)
		}
	}
}
