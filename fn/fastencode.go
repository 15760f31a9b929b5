package fn

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The fast encoder: generated Services written straight to bytes, without
// building and encoding yaml nodes, which is most of a kyaml function's cost.
// Its output is byte for byte what kyaml's encoder (go.yaml.in/yaml/v3,
// indent 2, compact sequences) writes for ServiceNode(svc): fastencode_test.go
// proves it for the golden cases and for randomized Services. It decides
// common strings itself (scalarForm) and asks kyaml's encoder, once per
// string, for the others (otherScalar); a string kyaml writes on more than
// one line makes it report false, and the caller encodes that Service with
// kyaml.

// annotation is one entry of a Service's metadata.annotations in output
// order. single marks a value kyaml's SetAnnotation wrote ('quoted').
type annotation struct {
	key, value string
	single     bool
}

// sortedAnnotations is the annotations of svc as ServiceNode orders them.
func sortedAnnotations(m map[string]string) []annotation {
	out := make([]annotation, 0, len(m))
	for _, k := range sortedKeys(m) {
		out = append(out, annotation{key: k, value: m[k]})
	}
	return out
}

// How a string scalar is written.
const (
	formUnknown = iota // not known for certain: encode the Service with kyaml
	formPlain          // as it is
	formQuoted         // in double quotes, no escapes needed
)

// scalarForm says how kyaml's encoder writes a !!str scalar node with value
// s. yaml.v3 writes a string plainly unless a plain scalar would resolve to
// another type (then it double-quotes it) or the emitter cannot write it
// plainly. Only strings made of ASCII letters, digits and '-', '.', '_', '/'
// that start with a letter, all-digit strings, and UUIDs are decided here:
//   - letter first: resolves to a string unless it is one of yaml.v3's
//     true/false/null words (then quoted); none of these characters is an
//     indicator inside a scalar, so the emitter may write it plainly;
//   - all digits (at most 18, so it parses as an int64): an int (or, with a
//     leading 0, a float): quoted;
//   - a UUID (8-4-4-4-12 hex digits) that starts with a digit: not a
//     timestamp (no '-' after 4 digits), not an int, float, 0b/0o number:
//     a string, written plainly.
//
// Keys must also be at most 128 bytes long, the emitter's limit for a simple
// key; callers pass key=true for them.
func scalarForm(s string, key bool) int {
	n := len(s)
	if n == 0 || (key && n > 128) {
		return formUnknown
	}
	c := s[0]
	if isDigit(c) {
		if n <= 18 && allDigits(s) {
			return formQuoted
		}
		if isUUID(s) {
			return formPlain
		}
		return formUnknown
	}
	if !isLetter(c) {
		return formUnknown
	}
	for i := 1; i < n; i++ {
		if b := s[i]; !isLetter(b) && !isDigit(b) && b != '-' && b != '.' && b != '_' && b != '/' {
			return formUnknown
		}
	}
	switch s {
	case "true", "True", "TRUE", "false", "False", "FALSE", "null", "Null", "NULL":
		return formQuoted
	}
	return formPlain
}

func isDigit(b byte) bool  { return b >= '0' && b <= '9' }
func isLetter(b byte) bool { return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') }
func isHex(b byte) bool    { return isDigit(b) || (b >= 'a' && b <= 'f') || (b >= 'A' && b <= 'F') }

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		switch i {
		case 8, 13, 18, 23:
			if s[i] != '-' {
				return false
			}
		default:
			if !isHex(s[i]) {
				return false
			}
		}
	}
	return true
}

// serviceWriter appends the YAML of generated Services to buf. Every line
// but the first of a Service starts with indent (the Service's column); the
// first line starts with first ("- " for a ResourceList item, "" for a
// document of a stream).
type serviceWriter struct {
	buf    []byte
	ok     bool // false once a string was not known for certain
	indent string
}

func (w *serviceWriter) str(s string, key bool) {
	switch scalarForm(s, key) {
	case formPlain:
		w.buf = append(w.buf, s...)
	case formQuoted:
		w.buf = append(w.buf, '"')
		w.buf = append(w.buf, s...)
		w.buf = append(w.buf, '"')
	default:
		w.other(s, key, false)
	}
}

// other writes a string scalarForm does not decide, as kyaml's encoder
// writes it on its own (memoized); strings that take more than one line
// (block scalars, complex keys) make the whole Service go through kyaml.
func (w *serviceWriter) other(s string, key, single bool) {
	if text, ok := otherScalar(s, key, single); ok {
		w.buf = append(w.buf, text...)
	} else {
		w.ok = false
	}
}

type scalarKey struct {
	s           string
	key, single bool
}

// scalarMemo remembers how kyaml writes the strings scalarForm does not
// decide: Services repeat them (a namespace, a UID, a path).
var scalarMemo struct {
	sync.Mutex
	m map[scalarKey]string
}

const scalarMemoMax = 1 << 16

// otherScalar is how kyaml's encoder writes the string s as a mapping key
// or value (single: a value node in single-quoted style, as SetAnnotation
// makes), found by encoding a one-entry mapping. The encoder's line width
// is unlimited, so a scalar written on one line is written the same at any
// indentation; ok is false when it takes more than one line.
func otherScalar(s string, key, single bool) (string, bool) {
	k := scalarKey{s, key, single}
	scalarMemo.Lock()
	text, found := scalarMemo.m[k]
	scalarMemo.Unlock()
	if found {
		return text, text != ""
	}
	m := &yaml.Node{Kind: yaml.MappingNode}
	if key {
		m.Content = []*yaml.Node{str(s), str("v")}
	} else {
		v := str(s)
		if single {
			v.Style = yaml.SingleQuotedStyle
		}
		m.Content = []*yaml.Node{str("k"), v}
	}
	text = ""
	if b, err := yaml.Marshal(m); err == nil {
		out := string(b)
		prefix, suffix := "k: ", "\n"
		if key {
			prefix, suffix = "", ": v\n"
		}
		if strings.HasPrefix(out, prefix) && strings.HasSuffix(out, suffix) && strings.Count(out, "\n") == 1 && !strings.HasPrefix(out, "? ") {
			text = out[len(prefix) : len(out)-len(suffix)]
		}
	}
	scalarMemo.Lock()
	if scalarMemo.m == nil {
		scalarMemo.m = make(map[scalarKey]string)
	}
	if len(scalarMemo.m) < scalarMemoMax {
		scalarMemo.m[k] = text
	}
	scalarMemo.Unlock()
	return text, text != ""
}

// line starts a new line at the Service's column plus depth levels.
func (w *serviceWriter) line(depth int) {
	w.buf = append(w.buf, '\n')
	w.buf = append(w.buf, w.indent...)
	for ; depth > 0; depth-- {
		w.buf = append(w.buf, "  "...)
	}
}

// field writes `key: value` on a new line; key is a fixed ASCII word.
func (w *serviceWriter) field(depth int, key, value string) {
	w.line(depth)
	w.buf = append(w.buf, key...)
	w.buf = append(w.buf, ": "...)
	w.str(value, false)
}

func (w *serviceWriter) stringMap(depth int, name string, m map[string]string) {
	if len(m) == 0 {
		return
	}
	w.line(depth)
	w.buf = append(w.buf, name...)
	w.buf = append(w.buf, ':')
	var keys [8]string
	ks := keys[:0]
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	for _, k := range ks {
		w.line(depth + 1)
		w.str(k, true)
		w.buf = append(w.buf, ": "...)
		w.str(m[k], false)
	}
}

// appendService appends svc as kyaml encodes ServiceNode(svc), but with the
// given annotations (in this order) in place of svc.Annotations. It returns
// false, and buf unchanged, when a string is not known for certain.
func appendService(buf []byte, svc *corev1.Service, annotations []annotation, first, indent string) ([]byte, bool) {
	start := len(buf)
	w := serviceWriter{buf: buf, ok: true, indent: indent}
	w.buf = append(w.buf, first...)
	w.buf = append(w.buf, "apiVersion: v1"...)
	w.line(0)
	w.buf = append(w.buf, "kind: Service"...)
	w.line(0)
	w.buf = append(w.buf, "metadata:"...)
	w.field(1, "name", svc.Name)
	if svc.Namespace != "" {
		w.field(1, "namespace", svc.Namespace)
	}
	w.stringMap(1, "labels", svc.Labels)
	if len(annotations) > 0 {
		w.line(1)
		w.buf = append(w.buf, "annotations:"...)
		for _, a := range annotations {
			w.line(2)
			w.str(a.key, true)
			w.buf = append(w.buf, ": "...)
			if a.single {
				if scalarForm(a.value, false) == formUnknown {
					w.other(a.value, false, true)
				} else {
					w.buf = append(w.buf, '\'')
					w.buf = append(w.buf, a.value...)
					w.buf = append(w.buf, '\'')
				}
			} else {
				w.str(a.value, false)
			}
		}
	}
	if len(svc.OwnerReferences) > 0 {
		w.line(1)
		w.buf = append(w.buf, "ownerReferences:"...)
		for _, o := range svc.OwnerReferences {
			w.line(1)
			w.buf = append(w.buf, "- apiVersion: "...)
			w.str(o.APIVersion, false)
			w.field(2, "kind", o.Kind)
			w.field(2, "name", o.Name)
			w.field(2, "uid", string(o.UID))
			if o.Controller != nil {
				w.line(2)
				w.buf = strconv.AppendBool(append(w.buf, "controller: "...), *o.Controller)
			}
			if o.BlockOwnerDeletion != nil {
				w.line(2)
				w.buf = strconv.AppendBool(append(w.buf, "blockOwnerDeletion: "...), *o.BlockOwnerDeletion)
			}
		}
	}
	w.line(0)
	w.buf = append(w.buf, "spec:"...)
	w.line(1)
	if len(svc.Spec.Ports) == 0 {
		w.buf = append(w.buf, "ports: []"...)
	} else {
		w.buf = append(w.buf, "ports:"...)
	}
	for _, p := range svc.Spec.Ports {
		w.line(1)
		w.buf = append(w.buf, "- name: "...)
		w.str(p.Name, false)
		if p.Protocol != "" {
			w.field(2, "protocol", string(p.Protocol))
		}
		w.line(2)
		w.buf = strconv.AppendInt(append(w.buf, "port: "...), int64(p.Port), 10)
		w.line(2)
		w.buf = append(w.buf, "targetPort: "...)
		if p.TargetPort.Type == 0 { // intstr.Int
			w.buf = strconv.AppendInt(w.buf, int64(p.TargetPort.IntVal), 10)
		} else {
			w.str(p.TargetPort.StrVal, false)
		}
	}
	w.stringMap(1, "selector", svc.Spec.Selector)
	w.buf = append(w.buf, '\n')
	if !w.ok {
		return w.buf[:start], false
	}
	return w.buf, true
}

// serviceNodeWith is ServiceNode(svc) with the given annotations in place of
// svc.Annotations: the kyaml form of a Service appendService cannot write.
// A single-quoted value is the node kyaml's SetAnnotation makes; the key it
// adds has no tag.
func serviceNodeWith(svc *corev1.Service, annotations []annotation) *yaml.RNode {
	node := ServiceNode(svc)
	meta := node.Field("metadata").Value.YNode()
	for i := 0; i < len(meta.Content); i += 2 {
		if meta.Content[i].Value == "annotations" {
			meta.Content = append(meta.Content[:i], meta.Content[i+2:]...)
			break
		}
	}
	if len(annotations) == 0 {
		return node
	}
	m := &yaml.Node{Kind: yaml.MappingNode}
	for _, a := range annotations {
		k, v := str(a.key), str(a.value)
		if a.single {
			k.Tag = ""
			v.Style = yaml.SingleQuotedStyle
		}
		m.Content = append(m.Content, k, v)
	}
	// annotations come after name, namespace and labels.
	at := 2
	for at < len(meta.Content) && (meta.Content[at].Value == "namespace" || meta.Content[at].Value == "labels") {
		at += 2
	}
	meta.Content = slices.Insert(meta.Content, at, str("annotations"), m)
	return node
}

// encodeServiceItem appends svc as an item of a ResourceList's items.
func encodeServiceItem(buf []byte, svc *corev1.Service, annotations []annotation) ([]byte, error) {
	if b, ok := appendService(buf, svc, annotations, "- ", "  "); ok {
		return b, nil
	}
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	seq := &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{serviceNodeWith(svc, annotations).YNode()}}
	if err := enc.Encode(seq); err != nil {
		return buf, err
	}
	if err := enc.Close(); err != nil {
		return buf, err
	}
	return append(buf, out.Bytes()...), nil
}

// encodeServiceDoc appends svc as one document of a multi-document stream
// (without the separator).
func encodeServiceDoc(buf []byte, svc *corev1.Service, annotations []annotation) ([]byte, error) {
	if b, ok := appendService(buf, svc, annotations, "", ""); ok {
		return b, nil
	}
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	if err := enc.Encode(serviceNodeWith(svc, annotations).Document()); err != nil {
		return buf, err
	}
	if err := enc.Close(); err != nil {
		return buf, err
	}
	return append(buf, out.Bytes()...), nil
}
