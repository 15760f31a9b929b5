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
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// decodeError is why an FLApp item does not decode: a problem at a field
// path ("" for the whole object).
type decodeError struct {
	path, msg string
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

// decodeFLApp turns an FLApp item into the typed FLApp. Its errors are
// *decodeError: wrong field types are reported with the path of the field,
// as precisely as encoding/json allows.
func decodeFLApp(node *yaml.RNode) (*render.FLApp, error) {
	// The node itself is decoded: RNode.MarshalJSON would print it as YAML
	// and parse it again.
	var m map[string]any
	if err := node.YNode().Decode(&m); err != nil {
		return nil, &decodeError{"", "not representable as JSON: " + err.Error()}
	}
	data, err := json.Marshal(m)
	if err != nil {
		return nil, &decodeError{"", "not representable as JSON: " + err.Error()}
	}
	var shell flappShell
	if err := json.Unmarshal(data, &shell); err != nil {
		return nil, jsonError(err, "")
	}
	app := shell.FLApp
	if len(shell.Spec.Role) > 0 {
		if err := json.Unmarshal(shell.Spec.Role, &app.Spec.Role); err != nil {
			return nil, jsonError(err, "spec.role")
		}
	}
	if shell.Spec.FLReplicaSpecs != nil {
		app.Spec.FLReplicaSpecs = make(map[string]render.ReplicaSpec, len(shell.Spec.FLReplicaSpecs))
		// The first error reported must not depend on map order.
		for _, name := range slices.Sorted(maps.Keys(shell.Spec.FLReplicaSpecs)) {
			var spec render.ReplicaSpec
			if err := json.Unmarshal(shell.Spec.FLReplicaSpecs[name], &spec); err != nil {
				return nil, jsonError(err, "spec.flReplicaSpecs["+name+"]")
			}
			app.Spec.FLReplicaSpecs[name] = spec
		}
	}
	return &app, nil
}

func jsonError(err error, prefix string) *decodeError {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		path := prefix
		// Fields of the embedded FLApp are reported as "FLApp.metadata...".
		typeErr.Field = strings.TrimPrefix(typeErr.Field, "FLApp.")
		if typeErr.Field != "" {
			if path != "" {
				path += "."
			}
			path += typeErr.Field
		}
		return &decodeError{path, fmt.Sprintf("wrong type: got %s, want %s", typeErr.Value, kindName(typeErr.Type))}
	}
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "json: ")
	return &decodeError{prefix, msg}
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
	}
	return t.Kind().String()
}
