package fn

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/fedlearner/flapp-services/render"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
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
			path:  "spec.flReplicaSpecs[Worker].template.spec.containers[0].command[1]",
			msg:   "wrong type: got number, want string: quote the value; kubectl would send a number",
		},
		"a YAML 1.1 word in a string field": {
			input: "metadata: {name: on}", path: "metadata.name",
			msg: "wrong type: got bool, want string: quote the value; kubectl reads an unquoted true, false, yes, no, on, off, y or n as a boolean (YAML 1.1) and would send one",
		},
		"a YAML 1.1 word in a port name, deep in the pod template": {
			input: "spec: {flReplicaSpecs: {Worker: {template: {spec: {containers: [{name: a}, " +
				"{name: tensorflow, ports: [{name: flapp-port, containerPort: 1}, {name: off, containerPort: 2}]}]}}}}}",
			path: "spec.flReplicaSpecs[Worker].template.spec.containers[1].ports[1].name",
			msg:  "wrong type: got bool, want string: quote the value; kubectl reads an unquoted true, false, yes, no, on, off, y or n as a boolean (YAML 1.1) and would send one",
		},
		"a replica type kubectl reads as another string, before a wrong type below it": {
			input: "spec: {flReplicaSpecs: {Worker: {replicas: 1}, N: {replicas: two}}}", path: "spec.flReplicaSpecs[N]",
			msg: `kubectl reads the replica type N as "false" (YAML 1.1 reads an unquoted yes, no, on, off, y or n as a boolean, and sends a key as its string): quote it, "N"`,
		},
		"a key written twice": {
			input: "spec: {flReplicaSpecs: {Worker: {replicas: 1, replicas: 2}}}", path: "spec.flReplicaSpecs[Worker].replicas",
			msg: `key "replicas" written twice in one mapping (lines 3 and 3): YAML forbids it, and kubectl would keep only the last`,
		},
		// IntOrString decodes itself: the library's error then names the
		// struct fields only, without the replica type and the list index.
		"a wrong type in a type that decodes itself: the library's field path": {
			input: "spec: {flReplicaSpecs: {Worker: {template: {spec: {containers: [{name: tensorflow, livenessProbe: {tcpSocket: {port: [1]}}}]}}}}}",
			path:  "spec.flReplicaSpecs.template.spec.containers.livenessProbe.tcpSocket.port", msg: "wrong type: got array, want integer",
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
		"in a replica type with dots and brackets": {
			input: "spec:\n  flReplicaSpecs:\n    a.b[0]: {Replicas: 1}\n    a: {replicas: 1}\n",
			path:  "spec.flReplicaSpecs[a.b[0]].Replicas", want: "replicas",
		},
		"brought in by a merge key": {
			input: "x-defaults: &defaults {Replicas: 3}\n" + worker + "      <<: *defaults\n      pair: true\n",
			path:  "spec.flReplicaSpecs[Worker].Replicas", want: "replicas",
		},
		"brought in by a list of merge keys, into a port": {
			input: "x-port: &port {ContainerPort: 1}\n" + worker + "      template: {spec: {containers: [{name: tensorflow, " +
				"ports: [{<<: [{name: a}, *port]}]}]}}\n",
			path: "spec.flReplicaSpecs[Worker].template.spec.containers[0].ports[0].ContainerPort", want: "containerPort",
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

	// sigs.k8s.io/json reports at most 100 unknown fields: with that many, a
	// case variant could go unreported, so the FLApp is refused.
	var many strings.Builder
	for i := range 100 {
		fmt.Fprintf(&many, "  a%03d: 1\n", i) // before flReplicaSpecs, in the JSON's sorted keys
	}
	_, err = decodeFLApp(yaml.MustParse(flappHead + "spec:\n" + many.String() + "  flReplicaSpecs: {Worker: {Replicas: 1}}\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "100 or more unknown fields")
	_, err = decodeFLApp(yaml.MustParse(flappHead + "spec:\n" + many.String()[len("  a000: 1\n"):] + "  flReplicaSpecs: {Worker: {Replicas: 1}}\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown field "Replicas"`, "with 99 unknown fields, the case variant is found")

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

// yaml11Spellings are plain, quoted and tagged scalars that YAML 1.1 and
// YAML 1.2 may read differently.
var yaml11Spellings = []string{"y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON",
	"off", "Off", "OFF", "true", "True", "TRUE", "false", "False", "FALSE", `"yes"`, "'on'", "!!str yes", "yess",
	"1", "010", "0x1F", "1.50", "worker"}

// A string field is read as kubectl reads it: a plain YAML 1.1 boolean or a
// number there is a wrong type, at the field's path, with advice to quote
// it; anything kubectl reads as a string is that string.
func TestDecodeFLAppYAML11Strings(t *testing.T) {
	container := func(app *render.FLApp) corev1.Container {
		return app.Spec.FLReplicaSpecs["Worker"].Template.Spec.Containers[0]
	}
	fields := []struct {
		path, yaml string
		get        func(*render.FLApp) string
	}{
		{"metadata.name", "metadata: {name: %s}", func(app *render.FLApp) string { return app.Name }},
		{"metadata.namespace", "metadata: {namespace: %s}", func(app *render.FLApp) string { return app.Namespace }},
		{"spec.role", "spec: {role: %s}", func(app *render.FLApp) string { return app.Spec.Role }},
		{"spec.flReplicaSpecs[Worker].template.spec.containers[0].ports[0].name",
			"spec: {flReplicaSpecs: {Worker: {template: {spec: {containers: [{name: tensorflow, ports: [{name: %s}]}]}}}}}",
			func(app *render.FLApp) string { return container(app).Ports[0].Name }},
		{"spec.flReplicaSpecs[Worker].template.spec.containers[0].ports[0].protocol",
			"spec: {flReplicaSpecs: {Worker: {template: {spec: {containers: [{name: tensorflow, ports: [{protocol: %s}]}]}}}}}",
			func(app *render.FLApp) string { return string(container(app).Ports[0].Protocol) }},
		{"spec.flReplicaSpecs[Worker].template.spec.containers[0].env[0].value",
			"spec: {flReplicaSpecs: {Worker: {template: {spec: {containers: [{name: tensorflow, env: [{name: A, value: %s}]}]}}}}}",
			func(app *render.FLApp) string { return container(app).Env[0].Value }},
	}
	for _, f := range fields {
		for _, s := range yaml11Spellings {
			input := flappHead + fmt.Sprintf(f.yaml, s) + "\n"
			var kubectl any
			require.NoError(t, utilyaml.Unmarshal([]byte(input), &kubectl), input)
			want := valueAt(kubectl, f.path)

			app, err := decodeFLApp(yaml.MustParse(input))
			if _, isString := want.(string); !isString {
				var de *decodeError
				require.True(t, errors.As(err, &de), "%s: kubectl reads %#v, want an error, got %v", input, want, err)
				assert.Equal(t, f.path, de.path, input)
				assert.Contains(t, de.msg, "want string: quote the value; kubectl", input)
				continue
			}
			require.NoError(t, err, input)
			assert.Equal(t, want, f.get(app), input)
		}
	}
}

// valueAt is the value at path (apimachinery's notation, as the tests above
// write it) in a JSON-like value.
func valueAt(v any, path string) any {
	for part := range strings.SplitSeq(strings.NewReplacer("[", ".", "]", "").Replace(path), ".") {
		switch c := v.(type) {
		case map[string]any:
			v = c[part]
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i >= len(c) {
				return nil
			}
			v = c[i]
		default:
			return nil
		}
	}
	return v
}

// A replica type kubectl reads as another string than the one written (an
// unquoted N is "false", 010 is "8") is an error naming it as written; every
// other is read as written.
func TestDecodeFLAppReplicaTypes(t *testing.T) {
	for _, s := range yaml11Spellings {
		input := flappHead + "spec: {flReplicaSpecs: {" + s + ": {replicas: 1}}}\n"
		var kubectl struct {
			Spec struct {
				FLReplicaSpecs map[string]any `json:"flReplicaSpecs"`
			} `json:"spec"`
		}
		require.NoError(t, utilyaml.Unmarshal([]byte(input), &kubectl), input)
		node := yaml.MustParse(input)
		written := node.Field("spec").Value.Field("flReplicaSpecs").Value.Content()[0].Value
		_, same := kubectl.Spec.FLReplicaSpecs[written]

		app, err := decodeFLApp(node)
		if !same {
			var de *decodeError
			require.True(t, errors.As(err, &de), "%s: kubectl reads %v, want an error, got %v", input, kubectl.Spec.FLReplicaSpecs, err)
			assert.Equal(t, "spec.flReplicaSpecs["+written+"]", de.path, input)
			assert.Contains(t, de.msg, "quote it", input)
			continue
		}
		require.NoError(t, err, input)
		assert.Contains(t, app.Spec.FLReplicaSpecs, written, input)
	}
}

// What a merge key (<<) brings in is read as kubectl reads it: its values
// count, in its YAML 1.1 reading, and its keys are checked as any other.
// Where go-yaml v3 and sigs.k8s.io/yaml differ (a merge key after the key it
// also sets), kubectl's reading wins.
func TestDecodeFLAppMergeKeys(t *testing.T) {
	const defaults = "x-defaults: &d {replicas: 3, pair: yes}\nx-one: &one {replicas: 1}\n"
	const worker = "spec:\n  flReplicaSpecs:\n    Worker:\n"
	for name, input := range map[string]string{
		"merged":                       defaults + worker + "      <<: *d\n",
		"overridden after the merge":   defaults + worker + "      <<: *d\n      replicas: 2\n",
		"overridden before the merge":  defaults + worker + "      replicas: 2\n      <<: *d\n",
		"a list of merges: first wins": defaults + worker + "      <<: [*one, *d]\n",
		"an inline mapping":            worker + "      <<: {replicas: 4, pair: n}\n",
		"nested in a merged object":    "x-t: &t {template: {spec: {containers: [{name: tensorflow, ports: [{name: p, containerPort: 7}]}]}}}\n" + worker + "      <<: *t\n      replicas: 1\n",
	} {
		t.Run(name, func(t *testing.T) {
			input = flappHead + input
			var kubectl struct {
				Spec struct {
					FLReplicaSpecs map[string]struct {
						Replicas *int32 `json:"replicas"`
						Pair     *bool  `json:"pair"`
						Template struct {
							Spec struct {
								Containers []struct {
									Ports []struct {
										ContainerPort int32 `json:"containerPort"`
									} `json:"ports"`
								} `json:"containers"`
							} `json:"spec"`
						} `json:"template"`
					} `json:"flReplicaSpecs"`
				} `json:"spec"`
			}
			require.NoError(t, utilyaml.Unmarshal([]byte(input), &kubectl))
			want := kubectl.Spec.FLReplicaSpecs["Worker"]
			require.NotNil(t, want.Replicas, "kubectl reads a replica count")

			app, err := decodeFLApp(yaml.MustParse(input))
			require.NoError(t, err)
			got := app.Spec.FLReplicaSpecs["Worker"]
			assert.Equal(t, want.Replicas, got.Replicas)
			assert.Equal(t, want.Pair, got.Pair)
			if c := want.Template.Spec.Containers; len(c) > 0 {
				require.NotEmpty(t, got.Template.Spec.Containers)
				require.NotEmpty(t, got.Template.Spec.Containers[0].Ports)
				assert.Equal(t, c[0].Ports[0].ContainerPort, got.Template.Spec.Containers[0].Ports[0].ContainerPort)
			}
		})
	}

	// A YAML 1.1 word in a string field is a wrong type there too.
	_, err := decodeFLApp(yaml.MustParse(flappHead + "x-port: &p {name: off}\n" + worker +
		"      template: {spec: {containers: [{name: tensorflow, ports: [{<<: *p, containerPort: 1}]}]}}\n"))
	var de *decodeError
	require.True(t, errors.As(err, &de), "%v", err)
	assert.Equal(t, "spec.flReplicaSpecs[Worker].template.spec.containers[0].ports[0].name", de.path)
}
