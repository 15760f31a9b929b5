package fn

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// decodeFLApp's errors are *decodeError with the path of the field, and the
// first one reported does not depend on map order.
func TestDecodeFLAppErrors(t *testing.T) {
	tests := map[string]struct{ input, path, msg string }{
		"wrong type in a replica spec": {
			input: "spec: {flReplicaSpecs: {Worker: {replicas: 1}, PS: {replicas: two}}}",
			path:  "spec.flReplicaSpecs[PS].replicas", msg: "wrong type: got string, want integer",
		},
		"role not a string":      {input: "spec: {role: [Leader]}", path: "spec.role", msg: "wrong type: got array, want string"},
		"metadata not an object": {input: "metadata: 5", path: "metadata", msg: "wrong type: got number, want object"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			for range 5 {
				_, err := decodeFLApp(yaml.MustParse("apiVersion: fedlearner.k8s.io/v1alpha1\nkind: FLApp\n" + tt.input + "\n"))
				var de *decodeError
				require.True(t, errors.As(err, &de), "%T %v", err, err)
				assert.Equal(t, tt.path, de.path)
				assert.Equal(t, tt.msg, de.msg)
				assert.Equal(t, tt.path+": "+tt.msg, err.Error())
			}
		})
	}
}
