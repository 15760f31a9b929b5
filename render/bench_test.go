package render

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// benchFLApp is the FLApp of `make bench`: Master 1, PS 2, Worker 17 (20
// Services), a tensorflow container with two named ports, UID known.
func benchFLApp(i int) *FLApp {
	spec := func(n int32) ReplicaSpec {
		return ReplicaSpec{Replicas: &n, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:  ContainerName,
				Image: "fedlearner/fedlearner:v2.3",
				Ports: []corev1.ContainerPort{
					{Name: "flapp-port", ContainerPort: 50051},
					{Name: "tf-port", ContainerPort: 50052},
				},
			}},
		}}}
	}
	return &FLApp{
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("job-%04d", i), Namespace: fmt.Sprintf("team-%d", i%5),
			UID: types.UID(fmt.Sprintf("1a2b%04x-0000-4000-8000-5e0000000000", i)),
		},
		Spec: FLAppSpec{Role: "Leader", FLReplicaSpecs: map[string]ReplicaSpec{
			"Master": spec(1), "PS": spec(2), "Worker": spec(17),
		}},
	}
}

// BenchmarkServices renders the 20 Services of one FLApp.
func BenchmarkServices(b *testing.B) {
	app := benchFLApp(1)
	b.ReportAllocs()
	for b.Loop() {
		if _, errs := Services(app, Options{}); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/20, "ns/Service")
}

// BenchmarkServices10k renders 500 FLApps, 10,000 Services.
func BenchmarkServices10k(b *testing.B) {
	apps := make([]*FLApp, 500)
	for i := range apps {
		apps[i] = benchFLApp(i)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, app := range apps {
			if _, errs := Services(app, Options{}); len(errs) > 0 {
				b.Fatal(errs)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10000, "ns/Service")
}

// BenchmarkValidate checks one FLApp without rendering it.
func BenchmarkValidate(b *testing.B) {
	app := benchFLApp(1)
	b.ReportAllocs()
	for b.Loop() {
		if errs := Validate(app, Options{}); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}

// BenchmarkValidateHugeReplicas: a replica count far over the ceiling fails
// before anything proportional to it is allocated.
func BenchmarkValidateHugeReplicas(b *testing.B) {
	app := benchFLApp(1)
	n := int32(2147483647)
	w := app.Spec.FLReplicaSpecs["Worker"]
	w.Replicas = &n
	app.Spec.FLReplicaSpecs["Worker"] = w
	b.ReportAllocs()
	for b.Loop() {
		if errs := Validate(app, Options{}); len(errs) == 0 {
			b.Fatal("expected an error")
		}
	}
}
