package render

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// FuzzServices renders one-type FLApps built from arbitrary fields. Whatever
// they are: no panic, and either errors and no Service at all, or exactly
// ServiceCount Services whose names, labels and ports Kubernetes accepts,
// each selecting its own replica with the operator's four labels.
func FuzzServices(f *testing.F) {
	f.Add("normal", "Leader", "Worker", int32(2), true, "flapp-port", int32(50051), "TCP", int64(0))
	f.Add("a.b", "Follower2", "PS", int32(1), false, "", int32(0), "UDP", int64(1))
	f.Add("x", "Follower", "w_1", int32(-1), true, "tf-port", int32(70000), "HTTP", int64(5))
	f.Add("n", "Leader", "Master", int32(2147483647), false, "flapp-port", int32(8888), "", int64(0))
	f.Add("abcdefghijabcdefghijabcdefghijabcdefghijabcdefghij", "Leader", "Worker", int32(100), true, "p", int32(1), "SCTP", int64(99))
	f.Fuzz(func(t *testing.T, name, role, replicaType string, n int32, pair bool, portName string, portNumber int32, protocol string, limit int64) {
		spec := ReplicaSpec{Pair: &pair, Template: tfTemplate(corev1.ContainerPort{
			Name: portName, ContainerPort: portNumber, Protocol: corev1.Protocol(protocol)})}
		if n != 0 {
			spec.Replicas = &n
		}
		a := app(name, role, map[string]ReplicaSpec{replicaType: spec})
		opts := Options{MaxServicesPerFLApp: limit % 1000}
		if opts.MaxServicesPerFLApp < 0 {
			opts.MaxServicesPerFLApp = -opts.MaxServicesPerFLApp
		}
		services, errs := Services(a, opts)
		if len(errs) > 0 {
			if services != nil {
				t.Fatalf("errors and %d Services: a partial render", len(services))
			}
			return
		}
		if int64(len(services)) != ServiceCount(a) {
			t.Fatalf("%d Services, ServiceCount says %d", len(services), ServiceCount(a))
		}
		for i := range services {
			svc := &services[i]
			if msgs := validation.IsDNS1035Label(svc.Name); len(msgs) > 0 {
				t.Fatalf("Service name %q: %v", svc.Name, msgs)
			}
			for k, v := range svc.Labels {
				if msgs := append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...); len(msgs) > 0 {
					t.Fatalf("label %s=%q: %v", k, v, msgs)
				}
			}
			if len(svc.Spec.Selector) != 4 || svc.Spec.Selector[LabelReplicaIndex] == "" {
				t.Fatalf("selector %v", svc.Spec.Selector)
			}
			if len(svc.Spec.Ports) == 0 {
				t.Fatal("a Service without ports")
			}
			for _, p := range svc.Spec.Ports {
				if msgs := append(validation.IsValidPortName(p.Name), validation.IsValidPortNum(int(p.Port))...); len(msgs) > 0 {
					t.Fatalf("port %+v: %v", p, msgs)
				}
			}
		}
	})
}
