package fn

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/fedlearner/flapp-services/render"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// decodeError is why an FLApp item does not decode: a problem at a field
// path ("" for the whole object).
type decodeError struct {
	path, msg string
	// A wrong type's JSON path as encoding/json gives it (no list indices)
	// and the JSON kind found, for withIndices.
	jsonPath []string
	got      string
}

func (e *decodeError) Error() string {
	if e.path == "" {
		return e.msg
	}
	return e.path + ": " + e.msg
}

// flappShell decodes an FLApp with its replica specs kept raw, so each one can
// be decoded on its own and a type error can name the replica type.
type flappShell struct {
	render.FLApp
	Spec struct {
		Role           json.RawMessage            `json:"role"`
		FLReplicaSpecs map[string]json.RawMessage `json:"flReplicaSpecs"`
	} `json:"spec"`
}

// decodeFLApp turns an FLApp item into the typed FLApp, reading it as the
// API server and the operator do: keys match field names case-sensitively
// (sigs.k8s.io/json), and a plain YAML 1.1 boolean (yes, on, ...) in a
// boolean field is that boolean, as kubectl reads it. A key that differs
// from a field only by case is an error: Kubernetes would drop it, and the
// Services would be rendered from a spec that is not the one that runs.
// Other unknown keys are ignored, so newer FLApps still decode.
//
// Its errors are *decodeError with the field's path in apimachinery's
// notation (spec.flReplicaSpecs[Worker].replicas), as precisely as
// encoding/json allows for wrong types.
func decodeFLApp(node *yaml.RNode) (*render.FLApp, error) {
	// The node itself is decoded: RNode.MarshalJSON would print it as YAML
	// and parse it again.
	var m map[string]any
	if err := node.YNode().Decode(&m); err != nil {
		return nil, &decodeError{msg: "not representable as JSON: " + err.Error()}
	}
	check := keyCheck{steps: make([]pathStep, 0, 16)}
	check.walk(node.YNode(), flappTypeInfo)
	if check.err != nil {
		return nil, check.err
	}
	for _, b := range check.bools {
		b.apply(m)
	}
	data, err := json.Marshal(m)
	if err != nil {
		return nil, &decodeError{msg: "not representable as JSON: " + err.Error()}
	}
	var shell flappShell
	if err := unmarshal(data, &shell, nil); err != nil {
		return nil, withIndices(node.YNode(), err)
	}
	app := shell.FLApp
	if len(shell.Spec.Role) > 0 {
		if err := unmarshal(shell.Spec.Role, &app.Spec.Role, []string{"spec", "role"}); err != nil {
			return nil, withIndices(node.YNode(), err)
		}
	}
	if shell.Spec.FLReplicaSpecs != nil {
		app.Spec.FLReplicaSpecs = make(map[string]render.ReplicaSpec, len(shell.Spec.FLReplicaSpecs))
		// The first error reported must not depend on map order.
		for _, name := range slices.Sorted(maps.Keys(shell.Spec.FLReplicaSpecs)) {
			var spec render.ReplicaSpec
			if err := unmarshal(shell.Spec.FLReplicaSpecs[name], &spec, []string{"spec", "flReplicaSpecs", name}); err != nil {
				return nil, withIndices(node.YNode(), err)
			}
			app.Spec.FLReplicaSpecs[name] = spec
		}
	}
	return &app, nil
}

// unmarshal decodes as Kubernetes does. Its errors do not say which field
// failed, so a failure is decoded again by encoding/json for a typed error:
// the two agree on every input, as keyCheck has refused every key that
// encoding/json would match regardless of case.
func unmarshal(data []byte, v any, prefix []string) *decodeError {
	err := sigsjson.UnmarshalCaseSensitivePreserveInts(data, v)
	if err == nil {
		return nil
	}
	if typed := json.Unmarshal(data, v); typed != nil {
		return jsonError(typed, prefix)
	}
	return jsonError(err, prefix)
}

// jsonError is err at the path prefix (JSON names; the last one may be a
// replica type, a map key).
func jsonError(err error, prefix []string) *decodeError {
	path := prefixPath(prefix)
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		jsonPath := slices.Clone(prefix)
		// Fields of the embedded FLApp are reported as "FLApp.metadata...".
		if f := strings.TrimPrefix(typeErr.Field, "FLApp."); f != "" {
			if path != "" {
				path += "."
			}
			path += f
			jsonPath = append(jsonPath, strings.Split(f, ".")...)
		}
		return &decodeError{path: path, msg: fmt.Sprintf("wrong type: got %s, want %s", typeErr.Value, kindName(typeErr.Type)),
			jsonPath: jsonPath, got: typeErr.Value}
	}
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "json: ")
	return &decodeError{path: path, msg: msg}
}

func prefixPath(prefix []string) string {
	if len(prefix) == 3 { // spec.flReplicaSpecs[<type>]
		return field.NewPath(prefix[0], prefix[1]).Key(prefix[2]).String()
	}
	return strings.Join(prefix, ".")
}

// kindName says a Go type the way a manifest author thinks of it.
func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "list"
	case reflect.Map, reflect.Struct:
		return "object"
	case reflect.Bool:
		return "boolean (true or false, unquoted)"
	}
	return t.Kind().String()
}
