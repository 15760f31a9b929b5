package render

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// fitApp is a leader with 2 Workers (ports flapp-port 50051 and a UDP
// port) whose pod template carries a label of its own, and 1 Master.
func fitApp() *FLApp {
	return &FLApp{
		ObjectMeta: metav1.ObjectMeta{Name: "mnist", Namespace: "fl"},
		Spec: FLAppSpec{Role: "Leader", FLReplicaSpecs: map[string]ReplicaSpec{
			"Master": {Replicas: ptr(int32(1)), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
				{Name: "tensorflow", Ports: []corev1.ContainerPort{{Name: "flapp-port", ContainerPort: 50051}}}}}}},
			"Worker": {Replicas: ptr(int32(2)), Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"team": "ml", "app-name": "template-says"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "tensorflow", Ports: []corev1.ContainerPort{
					{Name: "flapp-port", ContainerPort: 50051}, {Name: "stats", ContainerPort: 9125, Protocol: corev1.ProtocolUDP}}}}}}},
		}},
	}
}

// workerOne is, written out by hand from README.md, Where it differs from the fedlearner operator, the Service
// the operator makes for Worker 1 of fitApp (plus the documented UDP
// protocol it would drop): the Service that fits.
func workerOne() *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "mnist-leader-worker-1", Namespace: "fl",
			Labels: map[string]string{"app-name": "mnist", "role": "leader", "fl-replica-type": "worker", "fl-replica-index": "1", "extra": "fine"}},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app-name": "mnist", "role": "leader", "fl-replica-type": "worker", "fl-replica-index": "1"},
			Ports: []corev1.ServicePort{
				{Name: "flapp-port", Port: 50051, TargetPort: intstr.FromString("flapp-port"), Protocol: corev1.ProtocolTCP},
				{Name: "stats", Port: 9125, TargetPort: intstr.FromString("stats"), Protocol: corev1.ProtocolUDP},
				{Name: "flapp-port-default", Port: 8888, TargetPort: intstr.FromString("flapp-port-default")},
			},
		},
	}
}

// The operator's pod labels: the template's, then the four, which win.
func TestPodLabels(t *testing.T) {
	assert.Equal(t, map[string]string{"team": "ml", "app-name": "mnist", "role": "leader", "fl-replica-type": "worker", "fl-replica-index": "1"},
		PodLabels(fitApp(), "Worker", 1))
	assert.Equal(t, map[string]string{"app-name": "mnist", "role": "leader", "fl-replica-type": "master", "fl-replica-index": "0"},
		PodLabels(fitApp(), "Master", 0))
	app := fitApp()
	app.Name = "a/b"
	assert.Equal(t, "a-b", PodLabels(app, "Master", 0)["app-name"], "GenLabels replaces / with -")
}

func TestMisfits(t *testing.T) {
	plan, errs := NewPlan(fitApp(), Options{})
	require.Empty(t, errs)
	// Master-0 is Service 0, Worker-0 is 1, Worker-1 is 2 (replica type, then index).
	const n = 2
	// Worker 1's own ports: the first two (a container port is named
	// flapp-port, so the operator adds no default; the third is one more).
	ownPorts := func(s *corev1.Service) { s.Spec.Ports = s.Spec.Ports[:2] }

	for name, tc := range map[string]struct {
		change func(*corev1.Service)
		want   []string // field paths, in order
	}{
		"the operator's Service":         {change: ownPorts},
		"TCP written or left out":        {change: func(s *corev1.Service) { ownPorts(s); s.Spec.Ports[0].Protocol = "" }},
		"a selector on a template label": {change: func(s *corev1.Service) { ownPorts(s); s.Spec.Selector["team"] = "ml" }},
		"another name":                   {change: func(s *corev1.Service) { ownPorts(s); s.Name = "team-mnist-leader-worker-1" }, want: []string{"metadata.name"}},
		"the index one past":             {change: func(s *corev1.Service) { ownPorts(s); s.Name = "mnist-leader-worker-2" }, want: []string{"metadata.name"}},
		"another namespace":              {change: func(s *corev1.Service) { ownPorts(s); s.Namespace = "other" }, want: []string{"metadata.namespace"}},
		"no namespace":                   {change: func(s *corev1.Service) { ownPorts(s); s.Namespace = "" }, want: []string{"metadata.namespace"}},
		"app-name label renamed":         {change: func(s *corev1.Service) { ownPorts(s); s.Labels["app-name"] = "team-mnist" }, want: []string{"metadata.labels[app-name]"}},
		"app-name label missing":         {change: func(s *corev1.Service) { ownPorts(s); delete(s.Labels, "app-name") }, want: []string{"metadata.labels[app-name]"}},
		"role label wrong":               {change: func(s *corev1.Service) { ownPorts(s); s.Labels["role"] = "Leader" }, want: []string{"metadata.labels[role]"}},
		"role label missing":             {change: func(s *corev1.Service) { ownPorts(s); delete(s.Labels, "role") }, want: []string{"metadata.labels[role]"}},
		"type and index labels may go": {change: func(s *corev1.Service) {
			ownPorts(s)
			delete(s.Labels, "fl-replica-type")
			delete(s.Labels, "fl-replica-index")
		}},
		"selector without app-name": {change: func(s *corev1.Service) { ownPorts(s); delete(s.Spec.Selector, "app-name") }, want: []string{"spec.selector[app-name]"}},
		"selector without role":     {change: func(s *corev1.Service) { ownPorts(s); delete(s.Spec.Selector, "role") }, want: []string{"spec.selector[role]"}},
		"selector without type":     {change: func(s *corev1.Service) { ownPorts(s); delete(s.Spec.Selector, "fl-replica-type") }, want: []string{"spec.selector[fl-replica-type]"}},
		"selector without index":    {change: func(s *corev1.Service) { ownPorts(s); delete(s.Spec.Selector, "fl-replica-index") }, want: []string{"spec.selector[fl-replica-index]"}},
		"selector of another index": {change: func(s *corev1.Service) { ownPorts(s); s.Spec.Selector["fl-replica-index"] = "0" }, want: []string{"spec.selector[fl-replica-index]"}},
		"selector of the template's app-name": {change: func(s *corev1.Service) { ownPorts(s); s.Spec.Selector["app-name"] = "template-says" },
			want: []string{"spec.selector[app-name]"}},
		"selector with a label no pod has":                {change: func(s *corev1.Service) { ownPorts(s); s.Spec.Selector["env"] = "prod" }, want: []string{"spec.selector[env]"}},
		"selector with a template label of another value": {change: func(s *corev1.Service) { ownPorts(s); s.Spec.Selector["team"] = "web" }, want: []string{"spec.selector[team]"}},
		"a port more":          {change: func(*corev1.Service) {}, want: []string{"spec.ports"}},
		"a port fewer":         {change: func(s *corev1.Service) { s.Spec.Ports = s.Spec.Ports[:1] }, want: []string{"spec.ports"}},
		"another port number":  {change: func(s *corev1.Service) { ownPorts(s); s.Spec.Ports[0].Port = 50052 }, want: []string{"spec.ports"}},
		"another port name":    {change: func(s *corev1.Service) { ownPorts(s); s.Spec.Ports[0].Name = "grpc" }, want: []string{"spec.ports"}},
		"a numeric targetPort": {change: func(s *corev1.Service) { ownPorts(s); s.Spec.Ports[0].TargetPort = intstr.FromInt32(50051) }, want: []string{"spec.ports"}},
		"the UDP port as TCP":  {change: func(s *corev1.Service) { ownPorts(s); s.Spec.Ports[1].Protocol = "" }, want: []string{"spec.ports"}},
		"ports in another order": {change: func(s *corev1.Service) {
			ownPorts(s)
			s.Spec.Ports[0], s.Spec.Ports[1] = s.Spec.Ports[1], s.Spec.Ports[0]
		}, want: []string{"spec.ports"}},
		"renamed: name, labels and selector": {change: func(s *corev1.Service) {
			ownPorts(s)
			s.Name, s.Labels["app-name"], s.Spec.Selector["app-name"] = "x-leader-worker-1", "x", "x"
		}, want: []string{"metadata.name", "metadata.labels[app-name]", "spec.selector[app-name]"}},
	} {
		t.Run(name, func(t *testing.T) {
			svc := workerOne()
			tc.change(svc)
			var got []string
			for _, e := range plan.Misfits(n, svc) {
				got = append(got, e.Field)
			}
			assert.Equal(t, tc.want, got)
		})
	}

	// Indexes outside the plan: nothing belongs there.
	for _, bad := range []int{-1, 3} {
		errs := plan.Misfits(bad, workerOne())
		require.Len(t, errs, 1, "n=%d", bad)
		assert.Equal(t, "metadata.name", errs[0].Field)
	}
	// The last planned Service, Worker 1, is index 2; Master 0 is index 0.
	master := workerOne()
	master.Name, master.Labels["fl-replica-type"] = "mnist-leader-master-0", "master"
	master.Spec.Selector = map[string]string{"app-name": "mnist", "role": "leader", "fl-replica-type": "master", "fl-replica-index": "0"}
	master.Spec.Ports = master.Spec.Ports[:1]
	assert.Empty(t, plan.Misfits(0, master))
}

// Every Service a plan makes fits: the render and the operator's rules
// agree on every golden case's shape (here, fitApp's).
func TestPlannedServicesFit(t *testing.T) {
	plan, errs := NewPlan(fitApp(), Options{})
	require.Empty(t, errs)
	n := 0
	for svc := range plan.Services() {
		assert.Empty(t, plan.Misfits(n, svc), svc.Name)
		n++
	}
	assert.Equal(t, 3, n)
}

// A type's first and last Service, in Services' order; a type of one
// replica has one; a type of none, none.
func TestEdges(t *testing.T) {
	app := fitApp()
	app.Spec.FLReplicaSpecs["PS"] = ReplicaSpec{Replicas: ptr(int32(0))}
	app.Spec.FLReplicaSpecs["Worker"] = ReplicaSpec{Replicas: ptr(int32(4)), Template: app.Spec.FLReplicaSpecs["Worker"].Template}
	plan, errs := NewPlan(app, Options{})
	require.Empty(t, errs)
	// Master 0 is 0; PS has none; Worker 0..3 are 1..4.
	assert.Equal(t, []int{0, 1, 4}, plan.Edges())
}
