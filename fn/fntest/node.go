package fntest

import (
	"iter"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// WithServiceNodes is items followed by the node of each Service, in a new
// slice: the item list a kyaml function would hand to framework.Execute and
// kio.ByteWriter.
func WithServiceNodes(items []*yaml.RNode, services iter.Seq[*corev1.Service]) []*yaml.RNode {
	nodes := append([]*yaml.RNode(nil), items...)
	if services != nil {
		for svc := range services {
			nodes = append(nodes, ServiceNode(svc))
		}
	}
	return nodes
}

// ServiceNode is the tests' reference for a generated Service: the yaml node
// a kyaml function would build, with a fixed field order (that of the
// Kubernetes Go types) and sorted maps. Only the fields package render sets
// exist. The fast encoder (internal/krmio), the only one the binary has,
// must write exactly what kyaml's encoder writes for this node.
//
// Every string that a YAML 1.1 reader (sigs.k8s.io/yaml: kubectl, Argo CD,
// Helm) would take for another type, such as a namespace "on" or a port
// named "off", is double-quoted, as kyaml's own setters quote it
// (yaml.IsValueNonString). go-yaml v3 quotes only what YAML 1.2 misreads.
func ServiceNode(svc *corev1.Service) *yaml.RNode {
	meta := mapping(
		word("name"), str(svc.Name),
	)
	if svc.Namespace != "" {
		meta.Content = append(meta.Content, word("namespace"), str(svc.Namespace))
	}
	if len(svc.Labels) > 0 {
		meta.Content = append(meta.Content, word("labels"), stringMap(svc.Labels))
	}
	if len(svc.Annotations) > 0 {
		meta.Content = append(meta.Content, word("annotations"), stringMap(svc.Annotations))
	}
	if len(svc.OwnerReferences) > 0 {
		refs := &yaml.Node{Kind: yaml.SequenceNode}
		for _, o := range svc.OwnerReferences {
			ref := mapping(
				word("apiVersion"), str(o.APIVersion),
				word("kind"), str(o.Kind),
				word("name"), str(o.Name),
				word("uid"), str(string(o.UID)),
			)
			if o.Controller != nil {
				ref.Content = append(ref.Content, word("controller"), boolean(*o.Controller))
			}
			if o.BlockOwnerDeletion != nil {
				ref.Content = append(ref.Content, word("blockOwnerDeletion"), boolean(*o.BlockOwnerDeletion))
			}
			refs.Content = append(refs.Content, ref)
		}
		meta.Content = append(meta.Content, word("ownerReferences"), refs)
	}

	ports := &yaml.Node{Kind: yaml.SequenceNode}
	for _, p := range svc.Spec.Ports {
		port := mapping(word("name"), str(p.Name))
		if p.Protocol != "" {
			port.Content = append(port.Content, word("protocol"), str(string(p.Protocol)))
		}
		port.Content = append(port.Content, word("port"), integer(int64(p.Port)), word("targetPort"), intOrString(p))
		ports.Content = append(ports.Content, port)
	}
	spec := mapping(word("ports"), ports)
	if len(svc.Spec.Selector) > 0 {
		spec.Content = append(spec.Content, word("selector"), stringMap(svc.Spec.Selector))
	}
	return yaml.NewRNode(mapping(
		word("apiVersion"), word("v1"),
		word("kind"), word("Service"),
		word("metadata"), meta,
		word("spec"), spec,
	))
}

func intOrString(p corev1.ServicePort) *yaml.Node {
	if p.TargetPort.Type == 0 { // intstr.Int
		return integer(int64(p.TargetPort.IntVal))
	}
	return str(p.TargetPort.StrVal)
}

func mapping(content ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.MappingNode, Content: content}
}

func stringMap(m map[string]string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode, Content: make([]*yaml.Node, 0, 2*len(m))}
	for _, k := range yaml.SortedMapKeys(m) {
		n.Content = append(n.Content, str(k), str(m[k]))
	}
	return n
}

// str is a string from the Service's data (a name, a label key or value):
// double-quoted when a YAML 1.1 reader would read it as another type.
func str(v string) *yaml.Node {
	n := word(v)
	if yaml.IsValueNonString(v) {
		n.Style = yaml.DoubleQuotedStyle
	}
	return n
}

// word is a fixed word of the Service's shape (a field name, "v1",
// "Service"): a string in every YAML reader, so it skips str's check.
func word(v string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: v}
}

func integer(v int64) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagInt, Value: strconv.FormatInt(v, 10)}
}

func boolean(v bool) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagBool, Value: strconv.FormatBool(v)}
}
