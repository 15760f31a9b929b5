package e2e

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestCRDValidation checks that examples/crd/flapp-crd.yaml, installed in
// the API server, enforces the FLApp schema facts: the role pattern, the
// required fields, and free-form pod templates.
func TestCRDValidation(t *testing.T) {
	ns := newNamespace(t, "crd")
	valid := flappYAML("ok", ns, "Follower2", replicaType{name: "Worker", replicas: 2, pair: true, ports: defaultPorts})
	cases := []struct {
		name, manifest, wantErr string
	}{
		{"valid Follower2", valid, ""},
		{"role pattern", strings.Replace(valid, "role: Follower2", "role: follower", 1), "spec.role"},
		{"role suffix", strings.Replace(valid, "role: Follower2", "role: Follower-2", 1), "spec.role"},
		{"peerURL required", strings.Replace(valid, "peerURL:", "authority:", 1), "peerURL"},
		{"flReplicaSpecs required", strings.Replace(valid, "flReplicaSpecs:", "flReplicaSpecsX:", 1), "flReplicaSpecs"},
		{"replicas is an integer", strings.Replace(valid, "replicas: 2", "replicas: two", 1), "replicas"},
		{"restartPolicy enum", strings.Replace(valid, "replicas: 2", "replicas: 2\n      restartPolicy: Sometimes", 1), "restartPolicy"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			objs := decodeObjects(t, []byte(tc.manifest))
			require.Len(t, objs, 1)
			_, err := trySSA(t, objs[0], applyOpts{dryRun: true})
			if tc.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err, "the CRD must reject this FLApp")
			require.Contains(t, err.Error(), tc.wantErr)
		})
	}

	// Unknown fields in the pod template are kept, not pruned.
	objs := decodeObjects(t, []byte(strings.Replace(valid, "image: registry.local/fedlearner:e2e", "image: registry.local/fedlearner:e2e\n              futureField: kept", 1)))
	got := applySSA(t, objs, applyOpts{})
	containers, _, err := unstructured.NestedSlice(got[0].Object, "spec", "flReplicaSpecs", "Worker", "template", "spec", "containers")
	require.NoError(t, err)
	require.Equal(t, "kept", containers[0].(map[string]any)["futureField"])
}
