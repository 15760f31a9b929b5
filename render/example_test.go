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
