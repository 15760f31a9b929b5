package fn

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/fedlearner/flapp-services/render"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

var (
	flappType       = reflect.TypeFor[render.FLApp]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textType        = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// yaml11Bools are the plain scalars that YAML 1.1, and so kubectl
// (sigs.k8s.io/yaml), reads as booleans while YAML 1.2 (kyaml) reads them as
// strings. true and false in any case are booleans in both.
var yaml11Bools = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true, "on": true, "On": true, "ON": true,
	"n": false, "N": false, "no": false, "No": false, "NO": false, "off": false, "Off": false, "OFF": false,
}

// keyCheck walks an FLApp's YAML beside its Go type. It finds the first key
// (in path order) that differs from a field of its object only by case, and
// the plain YAML 1.1 booleans in boolean fields. It never looks into objects
// the type does not know (peerSpecs, status, ...).
type keyCheck struct {
	steps []pathStep
	err   *decodeError
	bools []boolAt
}

// pathStep is a struct field or map key (key) or a list index (index >= 0).
type pathStep struct {
	key   string
	index int
	field bool
}

func (c *keyCheck) walk(n *yaml.Node, t *typeInfo) {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	switch t.kind {
	case kindStruct:
		if n.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, value := n.Content[i].Value, n.Content[i+1]
			if key == "<<" && n.Content[i].ShortTag() == "!!merge" {
				c.walkMerge(value, t)
				continue
			}
			if ft, ok := t.fields[key]; ok {
				if ft.kind == kindOther {
					continue
				}
				c.steps = append(c.steps, pathStep{key: key, index: -1, field: true})
				c.walk(value, ft)
				c.steps = c.steps[:len(c.steps)-1]
				continue
			}
			for _, name := range t.names {
				if strings.EqualFold(key, name) {
					c.caseVariant(key, name)
					break
				}
			}
		}
	case kindMap:
		if n.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			c.steps = append(c.steps, pathStep{key: n.Content[i].Value, index: -1})
			c.walk(n.Content[i+1], t.elem)
			c.steps = c.steps[:len(c.steps)-1]
		}
	case kindList:
		if n.Kind != yaml.SequenceNode {
			return
		}
		for i, item := range n.Content {
			c.steps = append(c.steps, pathStep{index: i})
			c.walk(item, t.elem)
			c.steps = c.steps[:len(c.steps)-1]
		}
	case kindBool:
		if n.Kind != yaml.ScalarNode || n.Style != 0 || n.ShortTag() != "!!str" {
			return
		}
		if b, ok := yaml11Bools[n.Value]; ok {
			c.bools = append(c.bools, boolAt{steps: append([]pathStep(nil), c.steps...), from: n.Value, value: b})
		}
	}
}

// walkMerge walks the mappings a merge key (<<) brings into an object.
func (c *keyCheck) walkMerge(n *yaml.Node, t *typeInfo) {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind == yaml.SequenceNode {
		for _, item := range n.Content {
			c.walk(item, t)
		}
		return
	}
	c.walk(n, t)
}

// caseVariant records key, a case variant of the field name; the error
// kept is the first in path order, so it does not depend on key order.
func (c *keyCheck) caseVariant(key, name string) {
	path := c.path(key)
	if c.err != nil && c.err.path <= path {
		return
	}
	c.err = &decodeError{path: path, msg: fmt.Sprintf(
		"unknown field %q: field names are case-sensitive, write %q (the API server drops %q and the operator never reads it)",
		key, name, key)}
}

// path is the current path, then key, in apimachinery's notation.
func (c *keyCheck) path(key string) string {
	var p *field.Path
	for _, s := range c.steps {
		switch {
		case p == nil:
			p = field.NewPath(s.key)
		case s.field:
			p = p.Child(s.key)
		case s.index >= 0:
			p = p.Index(s.index)
		default:
			p = p.Key(s.key)
		}
	}
	if p == nil {
		return key
	}
	return p.Child(key).String()
}

// boolAt is a plain YAML 1.1 boolean, from, at a path of a boolean field.
type boolAt struct {
	steps []pathStep
	from  string
	value bool
}

// apply sets the boolean in the decoded object, where the value is still
// the string read (a merge key may have brought one that its object overrides).
func (b boolAt) apply(v any) {
	last := len(b.steps) - 1
	for i, s := range b.steps {
		if s.index >= 0 {
			list, ok := v.([]any)
			if !ok || s.index >= len(list) {
				return
			}
			if i == last {
				if list[s.index] == b.from {
					list[s.index] = b.value
				}
				return
			}
			v = list[s.index]
			continue
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return
		}
		if i == last {
			if obj[s.key] == b.from {
				obj[s.key] = b.value
			}
			return
		}
		v = obj[s.key]
	}
}

// opaque types decode themselves (Quantity, IntOrString, Time): their keys
// are not fields.
func opaque(t reflect.Type) bool {
	if t.Kind() == reflect.Interface {
		return true
	}
	pt := reflect.PointerTo(t)
	return t.Implements(unmarshalerType) || pt.Implements(unmarshalerType) ||
		t.Implements(textType) || pt.Implements(textType)
}

// typeInfo is what the walk needs of a Go type, worked out once per type.
type typeInfo struct {
	kind   typeKind
	fields map[string]*typeInfo // kindStruct: by JSON name
	names  []string             // kindStruct: the JSON names
	elem   *typeInfo            // kindMap, kindList
}

type typeKind int

const (
	kindOther  typeKind = iota // scalars, and opaque types: nothing to check inside
	kindStruct                 // JSON object with fields
	kindMap                    // JSON object with string keys
	kindList
	kindBool
)

var (
	typeInfoMu    sync.Mutex
	typeInfos     = map[reflect.Type]*typeInfo{}
	flappTypeInfo = infoOf(flappType)
)

// infoOf is the typeInfo of t. Recursive types are fine: a type's entry is
// stored before its fields are worked out.
func infoOf(t reflect.Type) *typeInfo {
	typeInfoMu.Lock()
	defer typeInfoMu.Unlock()
	return infoLocked(t)
}

func infoLocked(t reflect.Type) *typeInfo {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if ti, ok := typeInfos[t]; ok {
		return ti
	}
	ti := &typeInfo{}
	typeInfos[t] = ti
	switch {
	case opaque(t):
	case t.Kind() == reflect.Bool:
		ti.kind = kindBool
	case t.Kind() == reflect.Struct:
		ti.kind = kindStruct
		ti.fields = map[string]*typeInfo{}
		collectFields(t, ti)
	case t.Kind() == reflect.Map && t.Key().Kind() == reflect.String:
		ti.kind = kindMap
		ti.elem = infoLocked(t.Elem())
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Array:
		ti.kind = kindList
		ti.elem = infoLocked(t.Elem())
	}
	return ti
}

// collectFields adds the JSON fields of struct t, embedded structs included
// as encoding/json promotes them.
func collectFields(t reflect.Type, ti *typeInfo) {
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if sf.Anonymous && name == "" {
			ft := sf.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				collectFields(ft, ti)
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		if _, dup := ti.fields[name]; !dup {
			ti.fields[name] = infoLocked(sf.Type)
			ti.names = append(ti.names, name)
		}
	}
}

// withIndices gives a wrong type's error the full path of the field in
// apimachinery's notation, list indices and map keys included
// (spec.flReplicaSpecs[Worker].template.spec.containers[1].ports[0].containerPort):
// encoding/json names only the fields. The field is the first node, in
// document order, on that path whose JSON kind is the one reported.
func withIndices(root *yaml.Node, de *decodeError) *decodeError {
	if de.jsonPath == nil {
		return de
	}
	if p := locate(root, flappTypeInfo, nil, de.jsonPath, de.got); p != nil {
		de.path = p.String()
	}
	return de
}

func locate(n *yaml.Node, t *typeInfo, p *field.Path, segs []string, got string) *field.Path {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind == yaml.SequenceNode && t.kind == kindList {
		for i, item := range n.Content {
			if found := locate(item, t.elem, p.Index(i), segs, got); found != nil {
				return found
			}
		}
		return nil
	}
	if len(segs) == 0 {
		if kind := jsonKind(n); kind != "" && strings.HasPrefix(got, kind) {
			return p
		}
		if n.Kind == yaml.MappingNode && t.kind == kindMap { // encoding/json leaves out map keys too
			for i := 0; i+1 < len(n.Content); i += 2 {
				if found := locate(n.Content[i+1], t.elem, p.Key(n.Content[i].Value), nil, got); found != nil {
					return found
				}
			}
		}
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key := n.Content[i].Value
		if key != segs[0] {
			continue
		}
		var next *field.Path
		var nt *typeInfo
		switch {
		case t.kind == kindStruct && t.fields[key] != nil:
			nt = t.fields[key]
			next = child(p, key)
		case t.kind == kindMap:
			nt = t.elem
			next = p.Key(key)
		default:
			return nil
		}
		if found := locate(n.Content[i+1], nt, next, segs[1:], got); found != nil {
			return found
		}
	}
	return nil
}

func child(p *field.Path, name string) *field.Path {
	if p == nil {
		return field.NewPath(name)
	}
	return p.Child(name)
}

// jsonKind is how encoding/json names the kind of JSON value n becomes.
func jsonKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "object"
	case yaml.SequenceNode:
		return "array"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!int", "!!float":
			return "number"
		case "!!bool":
			return "bool"
		case "!!null":
			return "null"
		}
		return "string"
	}
	return ""
}
