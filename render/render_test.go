package render

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func tfTemplate(ports ...corev1.ContainerPort) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
		{Name: "sidecar", Ports: []corev1.ContainerPort{{Name: "side", ContainerPort: 1}}},
		{Name: ContainerName, Ports: ports},
	}}}
}

func port(name string, n int32) corev1.ContainerPort {
	return corev1.ContainerPort{Name: name, ContainerPort: n}
}

func app(name, role string, specs map[string]ReplicaSpec) *FLApp {
	return &FLApp{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       FLAppSpec{Role: role, FLReplicaSpecs: specs},
	}
}

func replicas(n int32, ports ...corev1.ContainerPort) ReplicaSpec {
	return ReplicaSpec{Replicas: &n, Template: tfTemplate(ports...)}
}

func TestServicesShape(t *testing.T) {
	a := app("normal", "Leader", map[string]ReplicaSpec{
		"Worker": replicas(2, port("flapp-port", 50051), port("tf-port", 50052)),
	})
	a.UID = "0c8a4d4e-3f0d-4a59-9b8a-1f6c2d1e7a10"

	got, errs := Services(a, Options{})
	require.Empty(t, errs)
	require.Len(t, got, 2)

	selector := map[string]string{"app-name": "normal", "role": "leader", "fl-replica-type": "worker", "fl-replica-index": "1"}
	labels := map[string]string{"app.kubernetes.io/managed-by": "flapp-services"}
	for k, v := range selector {
		labels[k] = v
	}
	assert.Equal(t, corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        "normal-leader-worker-1",
			Namespace:   "default",
			Labels:      labels,
			Annotations: map[string]string{AnnotationFLAppName: "normal"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "fedlearner.k8s.io/v1alpha1", Kind: "FLApp", Name: "normal",
				UID: a.UID, Controller: ptr(true), BlockOwnerDeletion: ptr(true),
			}},
		},
		Spec: corev1.ServiceSpec{
			Ports: []corev1.ServicePort{
				{Name: "flapp-port", Port: 50051, TargetPort: intstr.FromString("flapp-port")},
				{Name: "tf-port", Port: 50052, TargetPort: intstr.FromString("tf-port")},
			},
			Selector: selector,
		},
	}, got[1])
	assert.Equal(t, "normal-leader-worker-0", got[0].Name)
	assert.Empty(t, got[0].Spec.Type, "a plain ClusterIP Service, as the operator makes")
	assert.Empty(t, got[0].Spec.ClusterIP)
}

func TestServicesNamesAndOrder(t *testing.T) {
	a := app("job", "Follower2", map[string]ReplicaSpec{
		"Worker": replicas(2, port("flapp-port", 1)),
		"Master": replicas(1, port("flapp-port", 1)),
		"PS":     replicas(1, port("flapp-port", 1)),
	})
	got, errs := Services(a, Options{})
	require.Empty(t, errs)
	var names []string
	for _, s := range got {
		names = append(names, s.Name)
		assert.Equal(t, "follower2", s.Labels[LabelRole])
	}
	assert.Equal(t, []string{"job-follower2-master-0", "job-follower2-ps-0", "job-follower2-worker-0", "job-follower2-worker-1"}, names)
}

func TestServicesNamespaceFollowsFLApp(t *testing.T) {
	a := app("x", "Leader", map[string]ReplicaSpec{"Master": replicas(1, port("flapp-port", 1))})
	a.Namespace = ""
	got, errs := Services(a, Options{})
	require.Empty(t, errs)
	assert.Empty(t, got[0].Namespace)
}

func TestDefaults(t *testing.T) {
	tr := true
	fl := false
	tests := []struct {
		name      string
		spec      ReplicaSpec
		wantCount int
		wantPorts []corev1.ServicePort
	}{
		{"replicas absent, no pair: 0", ReplicaSpec{Template: tfTemplate(port("flapp-port", 1))}, 0, nil},
		{"replicas absent, pair false: 0", ReplicaSpec{Pair: &fl, Template: tfTemplate(port("flapp-port", 1))}, 0, nil},
		{"replicas absent, pair true: 1", ReplicaSpec{Pair: &tr, Template: tfTemplate(port("flapp-port", 1))}, 1,
			[]corev1.ServicePort{{Name: "flapp-port", Port: 1, TargetPort: intstr.FromString("flapp-port")}}},
		{"explicit replicas win over pair", ReplicaSpec{Pair: &tr, Replicas: ptr(int32(3)), Template: tfTemplate(port("flapp-port", 1))}, 3, nil},
		{"default flapp-port appended when absent", replicas(1, port("tf-port", 50052)), 1,
			[]corev1.ServicePort{
				{Name: "tf-port", Port: 50052, TargetPort: intstr.FromString("tf-port")},
				{Name: "flapp-port", Port: 8888, TargetPort: intstr.FromString("flapp-port")},
			}},
		{"no ports at all: only the default", replicas(1), 1,
			[]corev1.ServicePort{{Name: "flapp-port", Port: 8888, TargetPort: intstr.FromString("flapp-port")}}},
		{"replicas 0 needs no tensorflow container", ReplicaSpec{Replicas: ptr(int32(0))}, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := app("a", "Leader", map[string]ReplicaSpec{"Worker": tt.spec})
			got, errs := Services(a, Options{})
			require.Empty(t, errs)
			require.Len(t, got, tt.wantCount)
			if tt.wantPorts != nil {
				assert.Equal(t, tt.wantPorts, got[0].Spec.Ports)
			}
		})
	}
}

func TestProtocolKeptWhenNotTCP(t *testing.T) {
	a := app("a", "Leader", map[string]ReplicaSpec{"Worker": replicas(1,
		port("flapp-port", 1),
		corev1.ContainerPort{Name: "stats", ContainerPort: 9125, Protocol: corev1.ProtocolUDP},
		corev1.ContainerPort{Name: "sig", ContainerPort: 9000, Protocol: corev1.ProtocolSCTP},
		corev1.ContainerPort{Name: "grpc", ContainerPort: 9125, Protocol: corev1.ProtocolTCP},
	)})
	got, errs := Services(a, Options{})
	require.Empty(t, errs)
	ports := got[0].Spec.Ports
	require.Len(t, ports, 4)
	assert.Equal(t, corev1.Protocol(""), ports[0].Protocol)
	assert.Equal(t, corev1.ProtocolUDP, ports[1].Protocol)
	assert.Equal(t, corev1.ProtocolSCTP, ports[2].Protocol)
	assert.Equal(t, corev1.Protocol(""), ports[3].Protocol, "TCP is the default and is left out, like the operator")
}

func TestOwnerReferencePolicies(t *testing.T) {
	newApp := func(uid string) *FLApp {
		a := app("a", "Leader", map[string]ReplicaSpec{"Worker": replicas(1, port("flapp-port", 1))})
		a.UID = types.UID(uid)
		return a
	}
	tests := []struct {
		policy    OwnerReferencePolicy
		uid       string
		wantOwner bool
		wantErr   string
	}{
		{"", "u-1", true, ""},
		{OwnerReferencesIfKnown, "u-1", true, ""},
		{OwnerReferencesIfKnown, "", false, ""},
		{OwnerReferencesRequired, "u-1", true, ""},
		{OwnerReferencesRequired, "", false, "metadata.uid: Required value"},
		{OwnerReferencesNever, "u-1", false, ""},
		{"Sometimes", "u-1", false, `ownerReferences: Unsupported value: "Sometimes"`},
	}
	for _, tt := range tests {
		t.Run(string(tt.policy)+"/"+tt.uid, func(t *testing.T) {
			got, errs := Services(newApp(tt.uid), Options{OwnerReferences: tt.policy})
			if tt.wantErr != "" {
				require.Len(t, errs, 1)
				assert.Contains(t, errs[0].Error(), tt.wantErr)
				assert.Nil(t, got)
				return
			}
			require.Empty(t, errs)
			if tt.wantOwner {
				require.Len(t, got[0].OwnerReferences, 1)
				assert.Equal(t, tt.uid, string(got[0].OwnerReferences[0].UID))
			} else {
				assert.Empty(t, got[0].OwnerReferences, "never an empty or invented UID")
			}
		})
	}
}

func TestValidation(t *testing.T) {
	okPorts := []corev1.ContainerPort{port("flapp-port", 50051)}
	tests := []struct {
		name     string
		mutate   func(a *FLApp)
		opts     Options
		wantPath string
		wantType field.ErrorType
		wantMsg  string
	}{
		{"role missing", func(a *FLApp) { a.Spec.Role = "" }, Options{}, "spec.role", field.ErrorTypeRequired, ""},
		{"role lower case", func(a *FLApp) { a.Spec.Role = "leader" }, Options{}, "spec.role", field.ErrorTypeInvalid, "must match"},
		{"role Follower-2", func(a *FLApp) { a.Spec.Role = "Follower-2" }, Options{}, "spec.role", field.ErrorTypeInvalid, ""},
		{"role Boss", func(a *FLApp) { a.Spec.Role = "Boss" }, Options{}, "spec.role", field.ErrorTypeInvalid, ""},
		{"name missing", func(a *FLApp) { a.Name = "" }, Options{}, "metadata.name", field.ErrorTypeRequired, ""},
		{"dot in FLApp name", func(a *FLApp) { a.Name = "job.v2" }, Options{}, "metadata.name", field.ErrorTypeInvalid, "DNS-1035"},
		{"FLApp name starts with digit", func(a *FLApp) { a.Name = "2job" }, Options{}, "metadata.name", field.ErrorTypeInvalid, "DNS-1035"},
		{"name too long for app-name label", func(a *FLApp) { a.Name = repeat("b", 64) },
			Options{}, "metadata.name", field.ErrorTypeInvalid, "must be no more than 63 characters"},
		{"generated name too long", func(a *FLApp) { a.Name = repeat("a", 48) }, Options{}, "metadata.name", field.ErrorTypeInvalid,
			`Service name "` + repeat("a", 48) + `-leader-worker-1" (64 characters)`},
		{"generated name too long only at the highest index", func(a *FLApp) {
			a.Name = repeat("a", 49)
			a.Spec.FLReplicaSpecs["Worker"] = replicas(10, okPorts...)
		}, Options{}, "metadata.name", field.ErrorTypeInvalid, "-leader-worker-9\" (65 characters)"},
		{"replica type with underscore", func(a *FLApp) {
			a.Spec.FLReplicaSpecs = map[string]ReplicaSpec{"Worker_A": replicas(1, okPorts...)}
		}, Options{}, "spec.flReplicaSpecs[Worker_A]", field.ErrorTypeInvalid, "DNS-1035"},
		{"replica type with a dot", func(a *FLApp) {
			a.Spec.FLReplicaSpecs = map[string]ReplicaSpec{"ps.v2": replicas(1, okPorts...)}
		}, Options{}, "spec.flReplicaSpecs[ps.v2]", field.ErrorTypeInvalid, ""},
		{"empty replica type", func(a *FLApp) {
			a.Spec.FLReplicaSpecs = map[string]ReplicaSpec{"": replicas(1, okPorts...)}
		}, Options{}, "spec.flReplicaSpecs[]", field.ErrorTypeInvalid, "must not be empty"},
		{"replica type starting with a hyphen", func(a *FLApp) {
			a.Spec.FLReplicaSpecs = map[string]ReplicaSpec{"-w": replicas(1, okPorts...)}
		}, Options{}, "spec.flReplicaSpecs[-w]", field.ErrorTypeInvalid, "alphanumeric"},
		{"replica type ending with a hyphen", func(a *FLApp) {
			a.Spec.FLReplicaSpecs = map[string]ReplicaSpec{"w-": replicas(1, okPorts...)}
		}, Options{}, "spec.flReplicaSpecs[w-]", field.ErrorTypeInvalid, "alphanumeric"},
		{"no replica specs", func(a *FLApp) { a.Spec.FLReplicaSpecs = nil }, Options{}, "spec.flReplicaSpecs", field.ErrorTypeRequired, ""},
		{"negative replicas", func(a *FLApp) { a.Spec.FLReplicaSpecs["Worker"] = replicas(-1, okPorts...) },
			Options{}, "spec.flReplicaSpecs[Worker].replicas", field.ErrorTypeInvalid, "greater than or equal to 0"},
		{"more Services than the ceiling", func(a *FLApp) { a.Spec.FLReplicaSpecs["Worker"] = replicas(2147483647, okPorts...) },
			Options{}, "spec.flReplicaSpecs", field.ErrorTypeInvalid, "2147483647 Services, more than maxServicesPerFLApp (10000)"},
		{"ceiling counts all types", func(a *FLApp) {
			a.Spec.FLReplicaSpecs["Worker"] = replicas(3, okPorts...)
			a.Spec.FLReplicaSpecs["PS"] = replicas(3, okPorts...)
		}, Options{MaxServicesPerFLApp: 5}, "spec.flReplicaSpecs", field.ErrorTypeInvalid, "6 Services"},
		{"no tensorflow container", func(a *FLApp) {
			a.Spec.FLReplicaSpecs["Worker"] = ReplicaSpec{Replicas: ptr(int32(1)), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "main"}}}}}
		}, Options{}, "spec.flReplicaSpecs[Worker].template.spec.containers", field.ErrorTypeRequired, `no container named "tensorflow"`},
		{"port without a name", func(a *FLApp) {
			a.Spec.FLReplicaSpecs["Worker"] = replicas(1, port("flapp-port", 1), port("", 2))
		}, Options{}, "spec.flReplicaSpecs[Worker].template.spec.containers[1].ports[1].name", field.ErrorTypeRequired, ""},
		{"single port without a name", func(a *FLApp) {
			a.Spec.FLReplicaSpecs["Worker"] = replicas(1, port("", 2))
		}, Options{}, "spec.flReplicaSpecs[Worker].template.spec.containers[1].ports[0].name", field.ErrorTypeRequired, ""},
		{"port name not IANA", func(a *FLApp) {
			a.Spec.FLReplicaSpecs["Worker"] = replicas(1, port("flapp-port", 1), port("TF_Port", 2))
		}, Options{}, "spec.flReplicaSpecs[Worker].template.spec.containers[1].ports[1].name", field.ErrorTypeInvalid, "IANA service name"},
		{"port name too long", func(a *FLApp) {
			a.Spec.FLReplicaSpecs["Worker"] = replicas(1, port("flapp-port", 1), port("a-very-long-port-name", 2))
		}, Options{}, "spec.flReplicaSpecs[Worker].template.spec.containers[1].ports[1].name", field.ErrorTypeInvalid, "15"},
		{"duplicate port name", func(a *FLApp) {
			a.Spec.FLReplicaSpecs["Worker"] = replicas(1, port("flapp-port", 1), port("flapp-port", 2))
		}, Options{}, "spec.flReplicaSpecs[Worker].template.spec.containers[1].ports[1].name", field.ErrorTypeDuplicate, ""},
		{"duplicate port and protocol", func(a *FLApp) {
			a.Spec.FLReplicaSpecs["Worker"] = replicas(1, port("flapp-port", 1),
				corev1.ContainerPort{Name: "other", ContainerPort: 1, Protocol: corev1.ProtocolTCP})
		}, Options{}, "spec.flReplicaSpecs[Worker].template.spec.containers[1].ports[1].containerPort", field.ErrorTypeDuplicate, "1/TCP"},
		{"default port collides with a user port", func(a *FLApp) {
			a.Spec.FLReplicaSpecs["Worker"] = replicas(1, port("grpc", 8888))
		}, Options{}, "spec.flReplicaSpecs[Worker].template.spec.containers[1].ports[1].containerPort", field.ErrorTypeDuplicate, "default flapp-port"},
		{"containerPort 0", func(a *FLApp) {
			a.Spec.FLReplicaSpecs["Worker"] = replicas(1, port("flapp-port", 0))
		}, Options{}, "spec.flReplicaSpecs[Worker].template.spec.containers[1].ports[0].containerPort", field.ErrorTypeInvalid, "between 1 and 65535"},
		{"containerPort 65536", func(a *FLApp) {
			a.Spec.FLReplicaSpecs["Worker"] = replicas(1, port("flapp-port", 65536))
		}, Options{}, "spec.flReplicaSpecs[Worker].template.spec.containers[1].ports[0].containerPort", field.ErrorTypeInvalid, ""},
		{"protocol HTTP", func(a *FLApp) {
			a.Spec.FLReplicaSpecs["Worker"] = replicas(1, corev1.ContainerPort{Name: "flapp-port", ContainerPort: 1, Protocol: "HTTP"})
		}, Options{}, "spec.flReplicaSpecs[Worker].template.spec.containers[1].ports[0].protocol", field.ErrorTypeNotSupported, `"TCP", "UDP", "SCTP"`},
		{"protocol lower-case udp", func(a *FLApp) {
			a.Spec.FLReplicaSpecs["Worker"] = replicas(1, corev1.ContainerPort{Name: "flapp-port", ContainerPort: 1, Protocol: "udp"})
		}, Options{}, "spec.flReplicaSpecs[Worker].template.spec.containers[1].ports[0].protocol", field.ErrorTypeNotSupported, ""},
		{"owner required, UID unknown", func(a *FLApp) { a.UID = "" }, Options{OwnerReferences: OwnerReferencesRequired},
			"metadata.uid", field.ErrorTypeRequired, "live export"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := app("job", "Leader", map[string]ReplicaSpec{"Worker": replicas(2, okPorts...)})
			tt.mutate(a)
			got, errs := Services(a, tt.opts)
			assert.Nil(t, got, "an invalid FLApp renders no Service at all")
			require.NotEmpty(t, errs)
			e := findError(errs, tt.wantPath)
			require.NotNil(t, e, "no error at %s in %v", tt.wantPath, errs)
			assert.Equal(t, tt.wantType, e.Type, e.Error())
			assert.Contains(t, e.Error(), tt.wantMsg)
			assert.Equal(t, errs, Validate(a, tt.opts), "Validate reports what Services refuses")
		})
	}
}

func TestValidationReportsEveryProblem(t *testing.T) {
	a := app("job.v2", "boss", map[string]ReplicaSpec{
		"Worker_A": replicas(1, port("flapp-port", 1)),
		"PS":       replicas(-2),
	})
	errs := Validate(a, Options{})
	var paths []string
	for _, e := range errs {
		paths = append(paths, e.Field)
	}
	assert.ElementsMatch(t, []string{"metadata.name", "spec.role", "spec.flReplicaSpecs[Worker_A]", "spec.flReplicaSpecs[PS].replicas"}, paths)
}

func TestCeilingFailsBeforeAllocating(t *testing.T) {
	a := app("job", "Leader", map[string]ReplicaSpec{
		"Worker": replicas(2147483647, port("flapp-port", 1)),
		"PS":     replicas(2147483647, port("flapp-port", 1)),
	})
	allocs := testing.AllocsPerRun(5, func() { _, _ = Services(a, Options{}) })
	assert.Less(t, allocs, 200.0, "validation must not allocate per Service")
	assert.Equal(t, int64(2*2147483647), ServiceCount(a))
}

func TestServiceName(t *testing.T) {
	assert.Equal(t, "normal-leader-worker-1", ServiceName("normal", "Leader", "Worker", 1))
	assert.Equal(t, "app-follower2-ps-10", ServiceName("app", "Follower2", "PS", 10))
}

func TestInputNotMutated(t *testing.T) {
	a := app("a", "Leader", map[string]ReplicaSpec{"Worker": replicas(1, port("tf-port", 2))})
	_, errs := Services(a, Options{})
	require.Empty(t, errs)
	assert.Equal(t, []corev1.ContainerPort{port("tf-port", 2)}, a.Spec.FLReplicaSpecs["Worker"].Template.Spec.Containers[1].Ports,
		"the default port is added to the Service, not to the FLApp")
}

func findError(errs field.ErrorList, path string) *field.Error {
	for _, e := range errs {
		if e.Field == path {
			return e
		}
	}
	return nil
}

func repeat(s string, n int) string { return strings.Repeat(s, n) }
