package fn

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/fedlearner/flapp-services/render"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// This file holds what the libraries decodeFLApp runs on do not do:
//   - name a field in apimachinery's notation, telling fields (.name) from
//     map keys ([key]) by the FLApp's Go type, whose JSON fields
//     structured-merge-diff resolves: sigs.k8s.io/json's strict errors write
//     map keys as fields (spec.flReplicaSpecs.Worker.Replicas), and its type
//     errors name the struct fields only (spec.flReplicaSpecs.replicas), so
//     wrongTypePath finds the map keys and list indices from the error's
//     offset in the JSON;
//   - tell a case variant (Replicas) from other unknown fields: caseVariant;
//   - refuse a key written twice: duplicateKey. sigs.k8s.io/yaml keeps the
//     last one, and its strict mode also refuses a key that overrides one a
//     merge key brought in.

var flappType = reflect.TypeFor[render.FLApp]()

// step is one step of a path from an FLApp's root: an object key, or a list
// index when index >= 0.
type step struct {
	key   string
	index int
}

func keyStep(key string) step { return step{key: key, index: -1} }

// apiPath renders steps in apimachinery's notation: a key is a field
// (.name) where the FLApp's type has that field, a map key ([key]) where it
// has a map. It also returns the Go type the steps reach, nil once they
// leave the typed FLApp (an unknown field, status, peerSpecs, ...).
func apiPath(steps []step) (*field.Path, reflect.Type) {
	var p *field.Path
	t := flappType
	for _, s := range steps {
		t = deref(t)
		switch {
		case s.index >= 0:
			p = p.Index(s.index)
			if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
				t = t.Elem()
			} else {
				t = nil
			}
		case t != nil && t.Kind() == reflect.Map:
			p, t = p.Key(s.key), t.Elem()
		default:
			p, t = p.Child(s.key), fieldType(t, s.key)
		}
	}
	return p, t
}

// fieldType is the type of struct t's JSON field name (inline structs'
// fields promoted), or nil.
func fieldType(t reflect.Type, name string) reflect.Type {
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	f := value.TypeReflectEntryOf(t).Fields()[name]
	if f == nil {
		return nil
	}
	return f.GetFrom(reflect.Zero(t)).Type()
}

func deref(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// wrongTypePath is the path of the value a type error is about. Its Offset
// is just past that value in data, unless the error comes from a type that
// decodes itself (IntOrString, Time: the offset is then within what that
// type was given); the value found must have the error's type, and exact
// says it was found. Failing that, the path is the error's Field: the
// struct fields, without map keys or list indices.
func wrongTypePath(typeErr *json.UnmarshalTypeError, data []byte) (path string, exact bool) {
	if steps := stepsEndingAt(data, typeErr.Offset); steps != nil {
		if p, t := apiPath(steps); deref(t) == deref(typeErr.Type) {
			return p.String(), true
		}
	}
	var p *field.Path
	t := flappType
	for name := range strings.SplitSeq(typeErr.Field, ".") {
		// Maps and lists have no name in Field; an embedded struct has its Go
		// name (TypeMeta), and its fields are the parent's.
		for t = deref(t); t != nil && (t.Kind() == reflect.Map || t.Kind() == reflect.Slice || t.Kind() == reflect.Array); {
			t = deref(t.Elem())
		}
		if ft := fieldType(t, name); ft != nil {
			p, t = p.Child(name), ft
		}
	}
	return p.String(), false
}

// stepsEndingAt reads data's tokens up to the value that ends at offset
// (a scalar's end, or just past an object's or list's opening bracket,
// where sigs.k8s.io/json reports a wrong type) and returns the steps to it,
// or nil.
func stepsEndingAt(data []byte, offset int64) []step {
	type frame struct {
		object, wantKey bool
		key             string
		next            int // list index of the next value
	}
	var frames []frame
	valueDone := func() {
		if len(frames) > 0 {
			top := &frames[len(frames)-1]
			top.wantKey = top.object
			top.next++
		}
	}
	dec := sigsjson.NewDecoderCaseSensitivePreserveInts(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		delim, isDelim := tok.(json.Delim)
		if isDelim && (delim == '}' || delim == ']') {
			frames = frames[:len(frames)-1]
			valueDone()
			continue
		}
		if n := len(frames); n > 0 && frames[n-1].wantKey {
			frames[n-1].key, frames[n-1].wantKey = tok.(string), false
			continue
		}
		if dec.InputOffset() == offset {
			steps := make([]step, len(frames))
			for i, f := range frames {
				steps[i] = step{key: f.key, index: -1}
				if !f.object {
					steps[i].index = f.next
				}
			}
			return steps
		}
		if dec.InputOffset() > offset {
			return nil
		}
		if isDelim {
			frames = append(frames, frame{object: delim == '{', wantKey: delim == '{'})
			continue
		}
		valueDone()
	}
}

// maxStrictErrors is how many strict errors sigs.k8s.io/json keeps
// (saveStrictError): past it, unknown fields go unreported.
const maxStrictErrors = 100

// caseVariant is the error for the first unknown field, in path order, that
// differs from a field of its object only by case, or nil.
func caseVariant(strictErrs []error) *decodeError {
	var first *decodeError
	for _, err := range strictErrs {
		var fe sigsjson.FieldError // all of them unknown fields: see decodeFLApp
		if !errors.As(err, &fe) {
			continue
		}
		if de := variantAt(flappType, nil, fe.FieldPath()); de != nil && (first == nil || de.path < first.path) {
			first = de
		}
	}
	if first == nil && len(strictErrs) >= maxStrictErrors {
		return &decodeError{msg: fmt.Sprintf("%d or more unknown fields: too many to check each for a case variant of a field (such as Replicas for replicas)", maxStrictErrors)}
	}
	return first
}

// variantAt reads rest, what is left of an unknown field's path as
// sigs.k8s.io/json writes it, from type t at path p. The path holds the
// fields, map keys and list indices on the way, then the unknown field;
// map keys may hold dots and brackets, so each way to cut one is tried.
func variantAt(t reflect.Type, p *field.Path, rest string) *decodeError {
	t = deref(t)
	if t == nil {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		rest = strings.TrimPrefix(rest, ".")
		end := strings.IndexAny(rest, ".[")
		if end < 0 { // the unknown field
			return caseVariantOf(t, p, rest)
		}
		if ft := fieldType(t, rest[:end]); ft != nil {
			return variantAt(ft, p.Child(rest[:end]), rest[end:])
		}
	case reflect.Map:
		rest = strings.TrimPrefix(rest, ".")
		for end := 0; end < len(rest); end++ {
			if rest[end] == '.' || rest[end] == '[' {
				if de := variantAt(t.Elem(), p.Key(rest[:end]), rest[end:]); de != nil {
					return de
				}
			}
		}
	case reflect.Slice, reflect.Array:
		index, after, ok := strings.Cut(strings.TrimPrefix(rest, "["), "]")
		if i, err := strconv.Atoi(index); ok && err == nil {
			return variantAt(t.Elem(), p.Index(i), after)
		}
	}
	return nil
}

// caseVariantOf is the error for key, an unknown field of struct t at p, if
// it is a field's name but for case.
func caseVariantOf(t reflect.Type, p *field.Path, key string) *decodeError {
	var names []string
	for name := range value.TypeReflectEntryOf(t).Fields() {
		if strings.EqualFold(key, name) {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	name := slices.Min(names)
	return &decodeError{path: p.Child(key).String(), msg: fmt.Sprintf(
		"unknown field %q: field names are case-sensitive, write %q (the API server drops %q and the operator never reads it)",
		key, name, key)}
}

// duplicateKey is the error for the first key written twice in one mapping
// of n (below steps), in document order, as go-yaml v3 (kyaml) refuses to
// decode one. Aliases are not followed: each node is checked where it is
// written.
func duplicateKey(n *yaml.Node, steps []step) *decodeError {
	switch n.Kind {
	case yaml.SequenceNode:
		for i, item := range n.Content {
			if de := duplicateKey(item, append(steps, step{index: i})); de != nil {
				return de
			}
		}
	case yaml.MappingNode:
		seen := make(map[string]*yaml.Node, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i]
			if key.Kind == yaml.ScalarNode {
				if first := seen[key.Value]; first != nil {
					p, _ := apiPath(append(steps, keyStep(key.Value)))
					return &decodeError{path: p.String(), msg: fmt.Sprintf(
						"key %q written twice in one mapping (lines %d and %d): YAML forbids it, and kubectl would keep only the last",
						key.Value, first.Line, key.Line)}
				}
				seen[key.Value] = key
			}
			if de := duplicateKey(n.Content[i+1], append(steps, keyStep(key.Value))); de != nil {
				return de
			}
		}
	}
	return nil
}
