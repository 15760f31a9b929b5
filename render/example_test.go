package render_test

import (
	"fmt"

	"github.com/fedlearner/flapp-services/render"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// An FLApp whose Worker type has two replicas gets two Services, named as the
// operator names them and selecting the operator's four pod labels. The
// tensorflow container has no port named flapp-port, so the operator's
// default port is added; without a known UID there is no owner reference.
func Example() {
	replicas := int32(2)
	app := &render.FLApp{
		ObjectMeta: metav1.ObjectMeta{Name: "normal", Namespace: "leader"},
		Spec: render.FLAppSpec{
			Role: "Leader",
			FLReplicaSpecs: map[string]render.ReplicaSpec{
				"Worker": {Replicas: &replicas, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					Containers: []corev1.Container{{
						Name:  render.ContainerName,
						Ports: []corev1.ContainerPort{{Name: "metrics", ContainerPort: 9125, Protocol: corev1.ProtocolUDP}},
					}},
				}}},
			},
		},
	}
	services, errs := render.Services(app, render.Options{})
	if len(errs) > 0 {
		fmt.Println(errs.ToAggregate())
		return
	}
	for _, svc := range services {
		fmt.Println(svc.Namespace+"/"+svc.Name, svc.Spec.Selector, len(svc.OwnerReferences))
		for _, p := range svc.Spec.Ports {
			fmt.Printf("  %s %d %q -> %s\n", p.Name, p.Port, p.Protocol, p.TargetPort.String())
		}
	}
	// Output:
	// leader/normal-leader-worker-0 map[app-name:normal fl-replica-index:0 fl-replica-type:worker role:leader] 0
	//   metrics 9125 "UDP" -> metrics
	//   flapp-port 8888 "" -> flapp-port
	// leader/normal-leader-worker-1 map[app-name:normal fl-replica-index:1 fl-replica-type:worker role:leader] 0
	//   metrics 9125 "UDP" -> metrics
	//   flapp-port 8888 "" -> flapp-port
}

// A Follower FLApp read from the cluster (its UID known) gets one Service per
// replica, each owned by the FLApp, so Kubernetes deletes them with it. The
// Master's container names its port flapp-port; the PS's names none, so it
// gets the operator's default.
func ExampleServices() {
	one := int32(1)
	container := func(ports ...corev1.ContainerPort) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: render.ContainerName, Ports: ports}}}}
	}
	app := &render.FLApp{
		ObjectMeta: metav1.ObjectMeta{Name: "mnist", Namespace: "team-a", UID: "0c8a5f2e-7b1d-4c3a-9e8f-1a2b3c4d5e6f"},
		Spec: render.FLAppSpec{
			Role: "Follower",
			FLReplicaSpecs: map[string]render.ReplicaSpec{
				"PS":     {Replicas: &one, Template: container()},
				"Master": {Replicas: &one, Template: container(corev1.ContainerPort{Name: "flapp-port", ContainerPort: 50051})},
			},
		},
	}
	services, errs := render.Services(app, render.Options{OwnerReferences: render.OwnerReferencesRequired})
	if len(errs) > 0 {
		fmt.Println(errs.ToAggregate())
		return
	}
	for _, svc := range services {
		fmt.Printf("%s/%s role=%s type=%s index=%s\n", svc.Namespace, svc.Name,
			svc.Spec.Selector["role"], svc.Spec.Selector["fl-replica-type"], svc.Spec.Selector["fl-replica-index"])
		for _, o := range svc.OwnerReferences {
			fmt.Printf("  owner: %s %s %s %s controller=%t\n", o.APIVersion, o.Kind, o.Name, o.UID, *o.Controller)
		}
		for _, p := range svc.Spec.Ports {
			fmt.Printf("  port: %s %d -> %s\n", p.Name, p.Port, p.TargetPort.String())
		}
	}
	// Output:
	// team-a/mnist-follower-master-0 role=follower type=master index=0
	//   owner: fedlearner.k8s.io/v1alpha1 FLApp mnist 0c8a5f2e-7b1d-4c3a-9e8f-1a2b3c4d5e6f controller=true
	//   port: flapp-port 50051 -> flapp-port
	// team-a/mnist-follower-ps-0 role=follower type=ps index=0
	//   owner: fedlearner.k8s.io/v1alpha1 FLApp mnist 0c8a5f2e-7b1d-4c3a-9e8f-1a2b3c4d5e6f controller=true
	//   port: flapp-port 8888 -> flapp-port
}

// Validate reports every problem at once, each with the path of its field.
func ExampleValidate() {
	app := &render.FLApp{
		ObjectMeta: metav1.ObjectMeta{Name: "Bad.Name"},
		Spec:       render.FLAppSpec{Role: "Boss", FLReplicaSpecs: map[string]render.ReplicaSpec{}},
	}
	for _, err := range render.Validate(app, render.Options{OwnerReferences: render.OwnerReferencesRequired}) {
		fmt.Println(err.Field, "-", err.Type)
	}
	// Output:
	// metadata.name - Invalid value
	// spec.role - Invalid value
	// metadata.uid - Required value
}
