package fn

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/fedlearner/flapp-services/render"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"
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

// decodeFLApp turns an FLApp item into the typed FLApp, read as kubectl and
// apimachinery read a manifest. The node is written back as YAML text
// (go-yaml v3 keeps each scalar plain or quoted as it was, and anchors and
// merge keys as written); sigs.k8s.io/yaml converts the text to JSON as
// YAML 1.1 reads it (a plain yes, no, on, off, y or n is a boolean; merge
// keys are applied; a boolean or number key becomes its string), and
// sigs.k8s.io/json decodes that strictly (keys match fields
// case-sensitively, integers stay integers). So pair: yes is true, and
// name: on is a wrong type whose error says to quote the value: kubectl
// would send a boolean.
//
// Beyond what the libraries decide, it refuses:
//   - a key written twice in one mapping, which YAML forbids (kubectl would
//     keep the last one);
//   - a replica type that kubectl reads as another string (an unquoted N is
//     "false"): the FLApp applied would have a replica type nobody wrote;
//   - an unknown field that differs from a field of its object only by case
//     (Replicas): Kubernetes drops it, so the Services would be rendered
//     from a spec that is not the one that runs. Other unknown fields are
//     ignored, so newer FLApps still decode.
//
// Its errors are *decodeError with the field's path in apimachinery's
// notation (spec.flReplicaSpecs[Worker].replicas). sigs.k8s.io/json names
// the field of a wrong type by its struct fields only, and writes map keys
// as fields in its strict errors: decode_keys.go completes the path.
func decodeFLApp(node *yaml.RNode) (*render.FLApp, error) {
	if de := duplicateKey(node.YNode(), nil); de != nil {
		return nil, de
	}
	var text bytes.Buffer
	enc := yaml.NewEncoder(&text)
	if err := errors.Join(enc.Encode(node.YNode()), enc.Close()); err != nil {
		return nil, &decodeError{msg: "not representable as YAML: " + err.Error()}
	}
	data, err := sigsyaml.YAMLToJSON(text.Bytes())
	if err != nil {
		return nil, &decodeError{msg: "not representable as JSON: " + err.Error()}
	}
	var app render.FLApp
	// Only unknown fields are strict errors: JSON converted from YAML has no
	// duplicate keys left.
	strictErrs, err := sigsjson.UnmarshalStrict(data, &app, sigsjson.DisallowUnknownFields)
	var wrongType *decodeError
	complete := err == nil
	if err != nil {
		wrongType, complete = typeError(err, data)
	}
	// The decoder notes a wrong type it finds and decodes the rest, replica
	// types included, so a misread replica type can be reported first: the
	// path of a wrong type below it holds the replica type kubectl reads.
	if complete {
		if de := misreadReplicaType(node.YNode(), app.Spec.FLReplicaSpecs); de != nil {
			return nil, de
		}
	}
	if wrongType != nil {
		return nil, wrongType
	}
	if de := caseVariant(strictErrs); de != nil {
		return nil, de
	}
	return &app, nil
}

// typeError is the decodeError for a failed decode, and whether the decoder
// went on past it: it does past the wrong types it finds itself, not past
// an error of a type that decodes itself (a Quantity, an IntOrString).
func typeError(err error, data []byte) (de *decodeError, complete bool) {
	var typeErr *json.UnmarshalTypeError
	if !errors.As(err, &typeErr) {
		return &decodeError{msg: strings.TrimPrefix(err.Error(), "json: ")}, false
	}
	msg := fmt.Sprintf("wrong type: got %s, want %s", typeErr.Value, typeName(typeErr.Type))
	if typeErr.Type.Kind() == reflect.String {
		switch {
		case typeErr.Value == "bool":
			msg += ": quote the value; kubectl reads an unquoted true, false, yes, no, on, off, y or n as a boolean (YAML 1.1) and would send one"
		case strings.HasPrefix(typeErr.Value, "number"):
			msg += ": quote the value; kubectl would send a number"
		}
	}
	path, exact := wrongTypePath(typeErr, data)
	return &decodeError{path: path, msg: msg}, exact
}

// replicaTypesWritten is what kyaml (YAML 1.2) reads as the replica types,
// merge keys applied: what the author wrote.
type replicaTypesWritten struct {
	Spec struct {
		FLReplicaSpecs map[string]yaml.Node `yaml:"flReplicaSpecs"`
	} `yaml:"spec"`
}

// misreadReplicaType is the error for the first replica type (in sorted
// order) that the author wrote but kubectl reads as another string: YAML 1.1
// reads an unquoted N as a boolean, which sigs.k8s.io/yaml turns into the key
// "false". decoded are the replica types of that reading.
func misreadReplicaType(node *yaml.Node, decoded map[string]render.ReplicaSpec) *decodeError {
	var written replicaTypesWritten
	if err := node.Decode(&written); err != nil {
		return nil // not a mapping of replica types: the decode said so
	}
	var misread, extra []string
	for name := range written.Spec.FLReplicaSpecs {
		if _, ok := decoded[name]; !ok {
			misread = append(misread, name)
		}
	}
	if len(misread) == 0 {
		return nil
	}
	for name := range decoded {
		if _, ok := written.Spec.FLReplicaSpecs[name]; !ok {
			extra = append(extra, name)
		}
	}
	name, as := slices.Min(misread), ""
	if len(misread) == 1 && len(extra) == 1 {
		as = fmt.Sprintf(" as %q", extra[0])
	}
	return &decodeError{path: field.NewPath("spec", "flReplicaSpecs").Key(name).String(), msg: fmt.Sprintf(
		"kubectl reads the replica type %s%s (YAML 1.1 reads an unquoted yes, no, on, off, y or n as a boolean, "+
			"and sends a key as its string): quote it, %q",
		name, as, name)}
}

// typeName says a Go type the way a manifest author thinks of it.
func typeName(t reflect.Type) string {
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
