package krmio

import (
	"slices"
	"strconv"

	"github.com/fedlearner/flapp-services/fn"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The fast encoder: generated Services written straight to bytes, without
// building a yaml node for each and encoding it as kyaml would
// (BENCHMARKS.md, Where the time goes, measures what that saves). Its
// output is byte for byte what kyaml's encoder (go.yaml.in/yaml/v3, indent
// 2, compact sequences) writes for fn.ServiceNode(svc). It decides common
// strings itself (scalarForm) and asks kyaml's encoder, once per string, for
// the others (kyamlScalar); a string kyaml writes on more than one line makes
// appendService report false, and the caller encodes that Service with kyaml.

// annotation is one entry of a Service's metadata.annotations in output
// order. single marks a value kyaml's SetAnnotation wrote ('quoted').
type annotation struct {
	key, value string
	single     bool
}

// sortedAnnotations is the annotations of svc as fn.ServiceNode orders them.
func sortedAnnotations(m map[string]string) []annotation {
	out := make([]annotation, 0, len(m))
	for _, k := range yaml.SortedMapKeys(m) {
		out = append(out, annotation{key: k, value: m[k]})
	}
	return out
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
		w.viaKyaml(s, key, false)
	}
}

// viaKyaml writes a string scalarForm does not decide, as kyaml's encoder
// writes it on its own (memoized); strings that take more than one line
// (block scalars, complex keys) make the whole Service go through kyaml.
func (w *serviceWriter) viaKyaml(s string, key, single bool) {
	if text, ok := kyamlScalar(s, key, single); ok {
		w.buf = append(w.buf, text...)
	} else {
		w.ok = false
	}
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
	// yaml.SortedMapKeys, without its allocation for the usual few keys.
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

// appendService appends svc as kyaml encodes fn.ServiceNode(svc), but with the
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
					w.viaKyaml(a.value, false, true)
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

// serviceNodeWith is fn.ServiceNode(svc) with the given annotations in place of
// svc.Annotations: the kyaml form of a Service appendService cannot write.
// A single-quoted value is the node kyaml's SetAnnotation makes; the key it
// adds has no tag.
func serviceNodeWith(svc *corev1.Service, annotations []annotation) *yaml.RNode {
	node := fn.ServiceNode(svc)
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
		k, v := stringNode(a.key), stringNode(a.value)
		if a.single {
			// SetAnnotation's key is a plain node: the keys it adds are
			// kioutil's legacy names, never a YAML 1.1 word.
			k.Tag, k.Style = "", 0
			v.Style = yaml.SingleQuotedStyle
		}
		m.Content = append(m.Content, k, v)
	}
	// annotations come after name, namespace and labels.
	at := 2
	for at < len(meta.Content) && (meta.Content[at].Value == "namespace" || meta.Content[at].Value == "labels") {
		at += 2
	}
	meta.Content = slices.Insert(meta.Content, at, stringNode("annotations"), m)
	return node
}

// stringNode is the node fn.ServiceNode makes for a string of a Service:
// double-quoted when a YAML 1.1 reader would read it as another type.
func stringNode(v string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: v}
	if yaml.IsValueNonString(v) {
		n.Style = yaml.DoubleQuotedStyle
	}
	return n
}

// encodeServiceItem appends svc as an item of a ResourceList's items.
func encodeServiceItem(buf []byte, svc *corev1.Service, annotations []annotation) ([]byte, error) {
	if b, ok := appendService(buf, svc, annotations, "- ", "  "); ok {
		return b, nil
	}
	return appendEncoded(buf, &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{serviceNodeWith(svc, annotations).YNode()}})
}

// encodeServiceDoc appends svc as one document of a multi-document stream
// (without the separator).
func encodeServiceDoc(buf []byte, svc *corev1.Service, annotations []annotation) ([]byte, error) {
	if b, ok := appendService(buf, svc, annotations, "", ""); ok {
		return b, nil
	}
	return appendEncoded(buf, serviceNodeWith(svc, annotations).Document())
}

// AppendService appends svc as one document of a YAML stream (without a
// separator), as the render writes a generated Service: the bytes a kustomize
// build reads back from the function.
func AppendService(buf []byte, svc *corev1.Service) ([]byte, error) {
	return encodeServiceDoc(buf, svc, streamAnnotations(svc.Annotations))
}
