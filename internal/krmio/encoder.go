package krmio

import (
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The fast encoder, the only encoder of a generated Service: written straight
// to bytes, without building a yaml node for each and encoding it as kyaml
// would (BENCHMARKS.md, Where the time goes, measures what that saves). Its
// output is byte for byte what kyaml's encoder (go.yaml.in/yaml/v3, indent
// 2, compact sequences) writes for the node a kyaml function would build
// (the tests' reference, fntest.ServiceNode). It decides common strings
// itself (scalarForm) and asks kyaml's encoder, once per string, for the
// others (kyamlScalar); a string kyaml writes on more than one line makes
// appendService report false, and the caller hands that Service to kyaml as
// the node serviceNode parses from this encoder's bytes.

// annotation is one entry of a Service's metadata.annotations in output
// order. single marks a value kyaml's SetAnnotation wrote ('quoted').
type annotation struct {
	key, value string
	single     bool
}

// sortedAnnotations is the annotations of svc in the order kyaml writes a
// map of them (yaml.SortedMapKeys).
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
	depth  int // of the current line
	// parse writes every string of the Service's data double-quoted, a key
	// in the explicit form ("? key" then ": value"), for serviceNode to
	// parse: its value exactly, whatever kyaml's style for it.
	parse bool
}

func (w *serviceWriter) str(s string, key bool) {
	if w.parse {
		w.quoted(s, key)
		return
	}
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

// quoted writes s double-quoted (parse mode), a key in the explicit form,
// which holds a key of any length.
func (w *serviceWriter) quoted(s string, key bool) {
	text, err := doubleQuoted(s)
	if err != nil {
		w.ok = false
		return
	}
	if key {
		w.buf = append(w.buf, "? "...)
		w.buf = append(w.buf, text...)
		w.line(w.depth)
		return
	}
	w.buf = append(w.buf, text...)
}

// line starts a new line at the Service's column plus depth levels.
func (w *serviceWriter) line(depth int) {
	w.depth = depth
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

// appendService appends svc as kyaml encodes the node a kyaml function
// builds for it (fntest.ServiceNode), but with the
// given annotations (in this order) in place of svc.Annotations. It returns
// false, and buf unchanged, when a string is not known for certain.
func appendService(buf []byte, svc *corev1.Service, annotations []annotation, first, indent string) ([]byte, bool) {
	start := len(buf)
	w := serviceWriter{buf: buf, ok: true, indent: indent}
	w.service(svc, annotations, first)
	if !w.ok {
		return w.buf[:start], false
	}
	return w.buf, true
}

// service writes svc, its first line starting with first.
func (w *serviceWriter) service(svc *corev1.Service, annotations []annotation, first string) {
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
			if a.single && !w.parse {
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
}

// serviceNode is the node of svc, with the given annotations in place of
// svc.Annotations, for kyaml to reconcile or encode where the fast encoder
// does not write the Service itself: this encoder's bytes for it in parse
// mode, parsed, given the styles of the node a kyaml function would build
// (restyle, and a single-quoted value for an annotation SetAnnotation
// wrote).
func serviceNode(svc *corev1.Service, annotations []annotation) (*yaml.RNode, error) {
	w := serviceWriter{ok: true, parse: true}
	w.service(svc, annotations, "")
	if !w.ok {
		return nil, fmt.Errorf("generated Service %s/%s holds a string kyaml does not write on one line in double quotes", svc.Namespace, svc.Name)
	}
	doc, err := yaml.Parse(string(w.buf))
	if err != nil {
		return nil, err
	}
	n := doc.YNode()
	restyle(n)
	if md := yaml.NewRNode(n).Field(yaml.MetadataField); md != nil {
		if annos := md.Value.Field(yaml.AnnotationsField); annos != nil {
			content := annos.Value.YNode().Content
			for i, a := range annotations {
				if a.single && 2*i+1 < len(content) {
					content[2*i+1].Style = yaml.SingleQuotedStyle
				}
			}
		}
	}
	return yaml.NewRNode(n), nil
}

// restyle gives every string of a parsed Service the style kyaml's setters
// give it (stringNode): double-quoted only when a YAML 1.1 reader would read
// it as another type, otherwise none, for kyaml's encoder to choose.
func restyle(n *yaml.Node) {
	if n.Kind == yaml.ScalarNode && n.Tag == yaml.NodeTagString {
		n.Style = 0
		if yaml.IsValueNonString(n.Value) {
			n.Style = yaml.DoubleQuotedStyle
		}
	}
	for _, c := range n.Content {
		restyle(c)
	}
}

// doubleQuoted is s as kyaml's encoder writes it in double quotes: on one
// line, since its line width is unlimited and it escapes line breaks.
func doubleQuoted(s string) (string, error) {
	v := stringNode(s)
	v.Style = yaml.DoubleQuotedStyle
	b, err := yaml.Marshal(&yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{stringNode("k"), v}})
	if err != nil {
		return "", err
	}
	out := string(b)
	if !strings.HasPrefix(out, "k: ") || !oneLine(out) {
		return "", fmt.Errorf("kyaml wrote %q over more than one line", s)
	}
	return strings.TrimSuffix(strings.TrimPrefix(out, "k: "), "\n"), nil
}

// stringNode is the node kyaml's setters make for a string of a Service:
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
	node, err := serviceNode(svc, annotations)
	if err != nil {
		return buf, err
	}
	return appendEncoded(buf, &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{node.YNode()}})
}

// encodeServiceDoc appends svc as one document of a multi-document stream
// (without the separator).
func encodeServiceDoc(buf []byte, svc *corev1.Service, annotations []annotation) ([]byte, error) {
	if b, ok := appendService(buf, svc, annotations, "", ""); ok {
		return b, nil
	}
	node, err := serviceNode(svc, annotations)
	if err != nil {
		return buf, err
	}
	return appendEncoded(buf, node.Document())
}

// withServiceNodes is items followed by the node of each Service (with its
// own annotations), in a new slice: the items a kyaml function hands to
// framework.Execute and kio.ByteWriter, for the paths that hand it all to
// kyaml.
func withServiceNodes(items []*yaml.RNode, services iter.Seq[*corev1.Service]) ([]*yaml.RNode, error) {
	nodes := append([]*yaml.RNode(nil), items...)
	if services == nil {
		return nodes, nil
	}
	for svc := range services {
		node, err := serviceNode(svc, sortedAnnotations(svc.Annotations))
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, node)
	}
	return nodes, nil
}

// AppendService appends svc as one document of a YAML stream (without a
// separator), as the render writes a generated Service: the bytes a kustomize
// build reads back from the function.
func AppendService(buf []byte, svc *corev1.Service) ([]byte, error) {
	return encodeServiceDoc(buf, svc, streamAnnotations(svc.Annotations))
}
