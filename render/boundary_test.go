package render

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

// The rules at their boundaries, expectations written from the operator's
// rules (README.md, Where it differs from the fedlearner operator).

// maxServicesPerFLApp: the limit itself renders, one more is the error; the
// zero Options mean the default of 10000.
func TestMaxServicesPerFLAppBoundary(t *testing.T) {
	a := app("a", "Leader", map[string]ReplicaSpec{"Worker": replicas(2, port("p", 1)), "PS": replicas(1, port("p", 1))})
	p, errs := NewPlan(a, Options{MaxServicesPerFLApp: 3})
	require.Empty(t, errs)
	assert.Equal(t, 3, p.Count())
	_, errs = NewPlan(a, Options{MaxServicesPerFLApp: 2})
	require.Len(t, errs, 1)
	assert.Equal(t, "spec.flReplicaSpecs: Invalid value: 3: the FLApp would produce 3 Services, more than maxServicesPerFLApp (2)", errs[0].Error())

	big := app("a", "Leader", map[string]ReplicaSpec{"Worker": replicas(DefaultMaxServicesPerFLApp, port("p", 1))})
	assert.Empty(t, Validate(big, Options{}), "the default ceiling itself")
	big.Spec.FLReplicaSpecs["Worker"] = replicas(DefaultMaxServicesPerFLApp+1, port("p", 1))
	errs = Validate(big, Options{})
	require.Len(t, errs, 1)
	assert.Equal(t, "spec.flReplicaSpecs: Invalid value: 10001: the FLApp would produce 10001 Services, more than maxServicesPerFLApp (10000)", errs[0].Error())
}

// Only the container named exactly tensorflow gives the ports.
func TestTensorflowContainerNameIsExact(t *testing.T) {
	for _, name := range []string{"TensorFlow", "Tensorflow", "tensorflow ", "tensorflow-0"} {
		a := app("a", "Leader", map[string]ReplicaSpec{"Worker": {Replicas: ptr(int32(1)), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: name, Ports: []corev1.ContainerPort{port("p", 1)}}}}}}})
		errs := Validate(a, Options{})
		require.Len(t, errs, 1, name)
		assert.Equal(t, `spec.flReplicaSpecs[Worker].template.spec.containers: Required value: no container named "tensorflow": its ports define the Services of 1 replica(s)`, errs[0].Error(), name)
	}
	// With 0 replicas no container is needed.
	a := app("a", "Leader", map[string]ReplicaSpec{"Worker": {Replicas: ptr(int32(0))}})
	assert.Empty(t, Validate(a, Options{}))
}

// Types that differ only in case share their Services: an error when both
// have replicas, none when either has 0.
func TestReplicaTypesDifferingOnlyInCase(t *testing.T) {
	for _, c := range []struct {
		upper, lower int32
		err          bool
	}{{0, 2, false}, {2, 0, false}, {0, 0, false}, {1, 1, true}, {1, 2, true}} {
		a := app("a", "Leader", map[string]ReplicaSpec{"Worker": replicas(c.upper, port("p", 1)), "worker": replicas(c.lower, port("p", 1))})
		services, errs := Services(a, Options{})
		if c.err {
			require.Len(t, errs, 1, "%+v", c)
			assert.Equal(t, `spec.flReplicaSpecs[worker]: Duplicate value: "worker": replica types Worker and worker differ only in case, so both would generate the Services a-leader-worker-0, ...: rename or merge one of them`, errs[0].Error())
			continue
		}
		require.Empty(t, errs, "%+v", c)
		var names []string
		for _, s := range services {
			names = append(names, s.Name+"/"+s.Labels[LabelReplicaType])
		}
		want := []string{}
		for i := range max(c.upper, c.lower) {
			want = append(want, ServiceName("a", "Leader", "worker", int(i))+"/worker")
		}
		assert.ElementsMatch(t, want, names, "%+v", c)
	}
	// Three spellings, the middle one with replicas: the first two clash.
	a := app("a", "Leader", map[string]ReplicaSpec{"WORKER": replicas(1, port("p", 1)), "Worker": replicas(0), "worker": replicas(1, port("p", 1))})
	errs := Validate(a, Options{})
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Error(), "replica types WORKER and worker differ only in case")
}

// Plan.Service counts across types, and is nil from one past the last.
func TestPlanServiceIndexes(t *testing.T) {
	a := app("a", "Leader", map[string]ReplicaSpec{"PS": replicas(1, port("p", 1)), "Worker": replicas(2, port("p", 1))})
	p, errs := NewPlan(a, Options{})
	require.Empty(t, errs)
	var names []string
	for n := 0; n < 3; n++ {
		s := p.Service(n)
		require.NotNil(t, s, n)
		names = append(names, s.Name)
	}
	assert.Equal(t, []string{"a-leader-ps-0", "a-leader-worker-0", "a-leader-worker-1"}, names)
	assert.Nil(t, p.Service(3))
	var yielded []string
	for s := range p.Services() {
		yielded = append(yielded, s.Name)
		if len(yielded) == 2 {
			break
		}
	}
	assert.Equal(t, names[:2], yielded, "Services stops when asked")
}

// The name is a DNS-1035 label of at most 63 characters: the longest name,
// that of the last index, decides.
func TestLongestServiceNameBoundary(t *testing.T) {
	// "-leader-w-" is 10 characters, the index 1 or 2 more.
	name52 := repeat("a", 52)
	a := app(name52, "Leader", map[string]ReplicaSpec{"w": replicas(10, port("p", 1))})
	assert.Empty(t, Validate(a, Options{}), "a-...-leader-w-9 is 63 characters")
	a = app(name52, "Leader", map[string]ReplicaSpec{"w": replicas(11, port("p", 1))})
	errs := Validate(a, Options{})
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Error(), "-leader-w-10\" (64 characters) is not a valid DNS-1035 label")
}

// The role is required and must be the CRD's pattern; the UID a plan's
// Services carry is the FLApp's, unless the policy is Never.
func TestRoleAndUID(t *testing.T) {
	a := app("a", "", map[string]ReplicaSpec{"Worker": replicas(1, port("p", 1))})
	errs := Validate(a, Options{})
	require.Len(t, errs, 1)
	assert.Equal(t, "spec.role: Required value: must be Leader or Follower[N]", errs[0].Error())
	a.Spec.Role = "leader"
	errs = Validate(a, Options{})
	require.Len(t, errs, 1)
	assert.Equal(t, `spec.role: Invalid value: "leader": must match ^Leader$|^Follower\d*$`, errs[0].Error())

	a.Spec.Role = "Follower2"
	p, errs := NewPlan(a, Options{})
	require.Empty(t, errs)
	assert.Equal(t, "", p.UID(), "no UID in the FLApp")
	a.UID = "u1"
	p, errs = NewPlan(a, Options{})
	require.Empty(t, errs)
	assert.Equal(t, "u1", p.UID())
	p, errs = NewPlan(a, Options{OwnerReferences: OwnerReferencesNever})
	require.Empty(t, errs)
	assert.Equal(t, "", p.UID(), "Never")
}
