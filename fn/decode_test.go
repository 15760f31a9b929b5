package fn

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

const flappHead = "apiVersion: fedlearner.k8s.io/v1alpha1\nkind: FLApp\n"

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
		"a wrong type in a list: the path has the indices": {
			input: "spec: {flReplicaSpecs: {Worker: {template: {spec: {containers: [{name: a, ports: [{containerPort: 1}]}, " +
				"{name: tensorflow, ports: [{containerPort: 1}, {containerPort: x}]}]}}}}}",
			path: "spec.flReplicaSpecs[Worker].template.spec.containers[1].ports[1].containerPort", msg: "wrong type: got string, want integer",
		},
		"a wrong type in a map: the key in brackets": {
			input: "metadata: {name: a, labels: {ok: v, app.kubernetes.io/name: [x]}}",
			path:  "metadata.labels[app.kubernetes.io/name]", msg: "wrong type: got array, want string",
		},
		"a wrong type in a list of lists": {
			input: "spec: {flReplicaSpecs: {Worker: {template: {spec: {containers: [{name: a, command: [ok, 5]}]}}}}}",
			path:  "spec.flReplicaSpecs[Worker].template.spec.containers[0].command[1]", msg: "wrong type: got number, want string",
		},
		"quoted yes is a string, as kubectl reads it": {
			input: `spec: {flReplicaSpecs: {Worker: {pair: "yes"}}}`,
			path:  "spec.flReplicaSpecs[Worker].pair", msg: "wrong type: got string, want boolean (true or false, unquoted)",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			for range 5 {
				_, err := decodeFLApp(yaml.MustParse(flappHead + tt.input + "\n"))
				var de *decodeError
				require.True(t, errors.As(err, &de), "%T %v", err, err)
				assert.Equal(t, tt.path, de.path)
				assert.Equal(t, tt.msg, de.msg)
				assert.Equal(t, tt.path+": "+tt.msg, err.Error())
			}
		})
	}
}

// Keys are matched case-sensitively, as the API server and the operator
// read them: a key that differs from a field only by case is an error naming
// its path and the right spelling, anywhere in the typed FLApp, whatever the
// key order; other unknown keys are ignored.
func TestDecodeFLAppCaseVariants(t *testing.T) {
	const worker = "spec:\n  role: Leader\n  flReplicaSpecs:\n    Worker:\n"
	tests := map[string]struct{ input, path, want string }{
		"replicas": {
			input: worker + "      Replicas: 3\n",
			path:  "spec.flReplicaSpecs[Worker].Replicas", want: "replicas",
		},
		"flReplicaSpecs": {
			input: "spec:\n  role: Leader\n  flreplicaspecs: {Worker: {replicas: 1}}\n",
			path:  "spec.flreplicaspecs", want: "flReplicaSpecs",
		},
		"spec": {input: "Spec: {role: Leader}\n", path: "Spec", want: "spec"},
		"metadata name": {
			input: "metadata: {Name: x}\n", path: "metadata.Name", want: "name",
		},
		"a port's containerPort": {
			input: worker + "      template:\n        spec:\n          containers:\n          - name: sidecar\n          - name: tensorflow\n" +
				"            ports:\n            - {name: flapp-port, containerPort: 50051}\n            - {name: tf-port, ContainerPort: 50052}\n",
			path: "spec.flReplicaSpecs[Worker].template.spec.containers[1].ports[1].ContainerPort", want: "containerPort",
		},
		"the pod template's containers": {
			input: worker + "      template: {spec: {Containers: []}}\n",
			path:  "spec.flReplicaSpecs[Worker].template.spec.Containers", want: "containers",
		},
		"beside the right spelling": {
			input: worker + "      replicas: 1\n      REPLICAS: 3\n",
			path:  "spec.flReplicaSpecs[Worker].REPLICAS", want: "replicas",
		},
		"the first in path order": {
			input: "spec:\n  flReplicaSpecs:\n    Worker: {Pair: true}\n    Master: {Replicas: 1}\n  Role: Leader\n",
			path:  "spec.Role", want: "role",
		},
		"folded as encoding/json folds (a long s)": {
			input: worker + "      pair: true\n      replicaſ: 3\n",
			path:  "spec.flReplicaSpecs[Worker].replicaſ", want: "replicas",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := decodeFLApp(yaml.MustParse(flappHead + tt.input))
			var de *decodeError
			require.True(t, errors.As(err, &de), "%T %v", err, err)
			assert.Equal(t, tt.path, de.path)
			key := tt.path[strings.LastIndexAny(tt.path, ".")+1:]
			assert.Contains(t, de.msg, `unknown field "`+key+`"`)
			assert.Contains(t, de.msg, `write "`+tt.want+`"`)
		})
	}

	app, err := decodeFLApp(yaml.MustParse(flappHead +
		"metadata: {name: a, Labels: {}, managedFields: []}\n" + // managedFields is a field; Labels is not labels
		"spec: {role: Leader}\n"))
	require.Error(t, err)
	assert.Nil(t, app)

	// Unknown keys that are not case variants, and keys inside maps and
	// objects the FLApp type does not model, are ignored.
	app, err = decodeFLApp(yaml.MustParse(flappHead + `metadata:
  name: a
  labels: {Replicas: "3", replicas: "1"}
spec:
  role: Leader
  peerSpecs: {Follower: {peerURL: x, PeerURL: y}}
  newField: 1
  status: {Replicas: 1}
  flReplicaSpecs:
    Worker:
      replicas: 2
      restartPolicy: Never
      chiefResources: {limits: {CPU: 1}}
      template: {spec: {containers: [{name: tensorflow, resources: {limits: {CPU: "1"}}}]}}
status: {appState: FLStateNew, Spec: 1}
`))
	require.NoError(t, err)
	assert.Equal(t, int32(2), *app.Spec.FLReplicaSpecs["Worker"].Replicas)
	assert.Equal(t, map[string]string{"Replicas": "3", "replicas": "1"}, app.Labels)
}

// A plain YAML 1.1 boolean in a boolean field is read as kubectl reads it:
// apimachinery's YAML decoder (sigs.k8s.io/yaml, YAML 1.1), which kubectl
// apply uses, decides which spellings are booleans, and decodeFLApp agrees
// on every one of them, in pair and in the pod template's booleans.
func TestDecodeFLAppYAML11Booleans(t *testing.T) {
	spellings := []string{"y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON",
		"off", "Off", "OFF", "true", "True", "TRUE", "false", "False", "FALSE", `"yes"`, "'on'", "!!str yes", "yess", "1"}
	for _, s := range spellings {
		input := flappHead + "spec:\n  flReplicaSpecs:\n    Worker:\n      pair: " + s +
			"\n      template: {spec: {containers: [{name: tensorflow, stdin: " + s + "}]}}\n"
		var kubectl struct {
			Spec struct {
				FLReplicaSpecs map[string]map[string]any `json:"flReplicaSpecs"`
			} `json:"spec"`
		}
		require.NoError(t, utilyaml.Unmarshal([]byte(input), &kubectl), s)
		want, isBool := kubectl.Spec.FLReplicaSpecs["Worker"]["pair"].(bool)

		app, err := decodeFLApp(yaml.MustParse(input))
		if !isBool {
			require.Error(t, err, "%s: kubectl reads %#v", s, kubectl.Spec.FLReplicaSpecs["Worker"]["pair"])
			continue
		}
		require.NoError(t, err, s)
		spec := app.Spec.FLReplicaSpecs["Worker"]
		assert.Equal(t, want, *spec.Pair, s)
		assert.Equal(t, want, spec.Template.Spec.Containers[0].Stdin, s)
	}
	// The FLApp itself is not changed: it passes through as written.
	node := yaml.MustParse(flappHead + "spec: {flReplicaSpecs: {Worker: {pair: yes}}}\n")
	_, err := decodeFLApp(node)
	require.NoError(t, err)
	assert.Equal(t, flappHead+"spec: {flReplicaSpecs: {Worker: {pair: yes}}}\n", node.MustString())
}
