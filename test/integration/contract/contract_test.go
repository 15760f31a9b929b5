package contract

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	h "github.com/fedlearner/flapp-services/test/integration/internal/harness"
)

const uid = "0d9a5c3e-1111-4222-8333-444455556666"

// succeeded checks a successful run and returns the objects it wrote.
func succeeded(t *testing.T, o outcome) []h.Object {
	t.Helper()
	require.Equal(t, 0, o.exitCode, "stderr:\n%s\nstdout:\n%s", o.stderr, o.stdout)
	return o.objects
}

// failed checks a failed run: exit code 1; in render mode nothing on
// stdout, in KRM mode the input items returned exactly as they came, with an
// error result; and every one of want among the errors reported.
func failed(t *testing.T, m mode, o outcome, docs []string, want ...*regexp.Regexp) {
	t.Helper()
	assert.Equal(t, 1, o.exitCode, "stderr:\n%s", o.stderr)
	if m.krm {
		assert.Equal(t, objects(t, docs), o.objects, "a failed KRM run returns its input items unchanged")
		assert.Contains(t, o.stdout, "severity: error")
	} else {
		assert.Empty(t, o.stdout, "a failed render prints nothing")
	}
	for _, w := range want {
		assert.Regexp(t, w, o.errorText())
	}
}

func TestPortProtocolsAreKept(t *testing.T) {
	app := `apiVersion: fedlearner.k8s.io/v1alpha1
kind: FLApp
metadata: {name: proto, namespace: fl}
spec:
  role: Follower
  flReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: tensorflow
            ports:
            - {name: flapp-port, containerPort: 50051}
            - {name: metrics, containerPort: 9125, protocol: UDP}
            - {name: assoc, containerPort: 3868, protocol: SCTP}
            - {name: grpc, containerPort: 50052, protocol: TCP}
`
	ports := []h.Port{{Name: "flapp-port", Port: 50051}, {Name: "metrics", Port: 9125, Protocol: "UDP"},
		{Name: "assoc", Port: 3868, Protocol: "SCTP"}, {Name: "grpc", Port: 50052, Protocol: "TCP"}}
	eachMode(t, []string{app}, "", func(t *testing.T, _ mode, o outcome) {
		h.CheckServices(t, succeeded(t, o), h.Replicas("proto", "fl", "Follower", "Worker", 2, ports...), nil)
	})
}

func TestOwnerReferenceMakesTheFLAppTheController(t *testing.T) {
	app := `apiVersion: fedlearner.k8s.io/v1alpha1
kind: FLApp
metadata: {name: owned, namespace: fl, uid: ` + uid + `}
spec:
  role: Leader
  flReplicaSpecs:
    Master: {replicas: 1, template: {spec: {containers: [{name: tensorflow, ports: [{name: flapp-port, containerPort: 50051}]}]}}}
    Worker: {replicas: 2, template: {spec: {containers: [{name: tensorflow, ports: [{name: flapp-port, containerPort: 50051}]}]}}}
`
	want := []any{map[string]any{
		"apiVersion":         "fedlearner.k8s.io/v1alpha1",
		"kind":               "FLApp",
		"name":               "owned",
		"uid":                uid,
		"controller":         true,
		"blockOwnerDeletion": true,
	}}
	for _, config := range []string{"", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {ownerReferences: Required}\n"} {
		name := "IfKnown (default)"
		if config != "" {
			name = "Required"
		}
		t.Run(name, func(t *testing.T) {
			eachMode(t, []string{app}, config, func(t *testing.T, _ mode, o outcome) {
				services := h.OfKind(succeeded(t, o), "Service")
				require.Equal(t, []string{"fl/owned-leader-master-0", "fl/owned-leader-worker-0", "fl/owned-leader-worker-1"}, h.Keys(services))
				for key, svc := range services {
					meta, _ := svc["metadata"].(map[string]any)
					assert.Equal(t, want, meta["ownerReferences"], "%s: the FLApp is the controlling owner, and deleting it waits for the Service", key)
				}
			})
		})
	}
}

func TestDefaultFLAppPortIsAdded(t *testing.T) {
	app := `apiVersion: fedlearner.k8s.io/v1alpha1
kind: FLApp
metadata: {name: defaults, namespace: fl}
spec:
  role: Leader
  flReplicaSpecs:
    Master: {replicas: 1, template: {spec: {containers: [{name: tensorflow}]}}}
    PS: {replicas: 1, template: {spec: {containers: [{name: sidecar, ports: [{name: flapp-port, containerPort: 1}]}, {name: tensorflow, ports: [{name: tf-port, containerPort: 50052}]}]}}}
    Worker: {replicas: 1, template: {spec: {containers: [{name: tensorflow, ports: [{name: flapp-port, containerPort: 50051}, {name: tf-port, containerPort: 50052}]}]}}}
`
	var want []h.ServiceSpec
	want = append(want, h.Replicas("defaults", "fl", "Leader", "Master", 1, h.Port{Name: "flapp-port", Port: 8888})...)
	// The default joins the container's own ports, as the operator appends it;
	// another container's flapp-port does not count.
	want = append(want, h.Replicas("defaults", "fl", "Leader", "PS", 1, h.Port{Name: "tf-port", Port: 50052}, h.Port{Name: "flapp-port", Port: 8888})...)
	// A flapp-port of its own is kept, and no second one is added.
	want = append(want, h.Replicas("defaults", "fl", "Leader", "Worker", 1, h.Port{Name: "flapp-port", Port: 50051}, h.Port{Name: "tf-port", Port: 50052})...)
	eachMode(t, []string{app}, "", func(t *testing.T, _ mode, o outcome) {
		h.CheckServices(t, succeeded(t, o), want, nil)
	})
}

func TestForeignServiceHoldingAGeneratedNameIsAnError(t *testing.T) {
	app := `apiVersion: fedlearner.k8s.io/v1alpha1
kind: FLApp
metadata: {name: mnist, namespace: fl}
spec:
  role: Leader
  flReplicaSpecs:
    Worker: {replicas: 2, template: {spec: {containers: [{name: tensorflow}]}}}
`
	// Hand-written by another team: no marker label or annotation.
	foreign := `apiVersion: v1
kind: Service
metadata:
  name: mnist-leader-worker-1
  namespace: fl
  labels: {team: vision}
spec:
  type: NodePort
  selector: {app: vision-demo}
  ports:
  - {name: http, port: 80, targetPort: 8080}
`
	docs := []string{app, foreign}
	eachMode(t, docs, "", func(t *testing.T, m mode, o outcome) {
		failed(t, m, o, docs,
			regexp.MustCompile(`Service fl/mnist-leader-worker-1\b`),
			regexp.MustCompile(`FLApp (fl/)?mnist\b`))
	})

	t.Run("in another namespace it is no collision", func(t *testing.T) {
		elsewhere := regexp.MustCompile(`namespace: fl\b`).ReplaceAllString(foreign, "namespace: other")
		eachMode(t, []string{app, elsewhere}, "", func(t *testing.T, _ mode, o outcome) {
			services := h.OfKind(succeeded(t, o), "Service")
			assert.Equal(t, []string{"fl/mnist-leader-worker-0", "fl/mnist-leader-worker-1", "other/mnist-leader-worker-1"}, h.Keys(services))
			assert.Equal(t, objects(t, []string{elsewhere})[0], services["other/mnist-leader-worker-1"], "the other Service passes through untouched")
		})
	})
}

func TestRequiredOwnerReferencesWithoutUIDIsAnError(t *testing.T) {
	known := `apiVersion: fedlearner.k8s.io/v1alpha1
kind: FLApp
metadata: {name: exported, namespace: fl, uid: ` + uid + `}
spec:
  role: Leader
  flReplicaSpecs:
    Worker: {replicas: 1, template: {spec: {containers: [{name: tensorflow}]}}}
`
	fromGit := `apiVersion: fedlearner.k8s.io/v1alpha1
kind: FLApp
metadata: {name: from-git, namespace: fl}
spec:
  role: Leader
  flReplicaSpecs:
    Worker: {replicas: 1, template: {spec: {containers: [{name: tensorflow}]}}}
`
	required := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {ownerReferences: Required}\n"
	docs := []string{known, fromGit}
	eachMode(t, docs, required, func(t *testing.T, m mode, o outcome) {
		failed(t, m, o, docs, regexp.MustCompile(`metadata\.uid`), regexp.MustCompile(`\bfrom-git\b`))
		assert.NotRegexp(t, regexp.MustCompile(`\bexported\b`), o.errorText(), "only the FLApp without a uid is named")
	})

	t.Run("the typed config and the flag", func(t *testing.T) {
		typed := "apiVersion: fn.fedlearner.k8s.io/v1alpha1\nkind: FLAppServices\nmetadata: {name: cfg}\nspec: {ownerReferences: Required}\n"
		eachMode(t, docs, typed, func(t *testing.T, m mode, o outcome) {
			failed(t, m, o, docs, regexp.MustCompile(`metadata\.uid`), regexp.MustCompile(`\bfrom-git\b`))
		})
		o := renderOutcome(t, run(t, t.TempDir(), fromGit, "render", "--owner-references", "Required", "-"))
		failed(t, modes[1], o, []string{fromGit}, regexp.MustCompile(`metadata\.uid`))
	})

	t.Run("with the uid it renders", func(t *testing.T) {
		eachMode(t, []string{known}, required, func(t *testing.T, _ mode, o outcome) {
			assert.Len(t, h.OfKind(succeeded(t, o), "Service"), 1)
		})
	})
}
