package fn

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

// ServiceNode is the reference encoder: the yaml node of a generated Service,
// with a fixed field order (that of the Kubernetes Go types) and sorted maps,
// so the bytes of a render never depend on map iteration. Only the fields
// package render sets exist. The fast writer (internal/fastyaml) writes
// exactly what kyaml's encoder writes for this node.
func ServiceNode(svc *corev1.Service) *yaml.RNode {
	meta := mapping(
		str("name"), str(svc.Name),
	)
	if svc.Namespace != "" {
		meta.Content = append(meta.Content, str("namespace"), str(svc.Namespace))
	}
	if len(svc.Labels) > 0 {
		meta.Content = append(meta.Content, str("labels"), stringMap(svc.Labels))
	}
	if len(svc.Annotations) > 0 {
		meta.Content = append(meta.Content, str("annotations"), stringMap(svc.Annotations))
	}
	if len(svc.OwnerReferences) > 0 {
		refs := &yaml.Node{Kind: yaml.SequenceNode}
		for _, o := range svc.OwnerReferences {
			ref := mapping(
				str("apiVersion"), str(o.APIVersion),
				str("kind"), str(o.Kind),
				str("name"), str(o.Name),
				str("uid"), str(string(o.UID)),
			)
			if o.Controller != nil {
				ref.Content = append(ref.Content, str("controller"), boolean(*o.Controller))
			}
			if o.BlockOwnerDeletion != nil {
				ref.Content = append(ref.Content, str("blockOwnerDeletion"), boolean(*o.BlockOwnerDeletion))
			}
			refs.Content = append(refs.Content, ref)
		}
		meta.Content = append(meta.Content, str("ownerReferences"), refs)
	}

	ports := &yaml.Node{Kind: yaml.SequenceNode}
	for _, p := range svc.Spec.Ports {
		port := mapping(str("name"), str(p.Name))
		if p.Protocol != "" {
			port.Content = append(port.Content, str("protocol"), str(string(p.Protocol)))
		}
		port.Content = append(port.Content, str("port"), integer(int64(p.Port)), str("targetPort"), intOrString(p))
		ports.Content = append(ports.Content, port)
	}
	spec := mapping(str("ports"), ports)
	if len(svc.Spec.Selector) > 0 {
		spec.Content = append(spec.Content, str("selector"), stringMap(svc.Spec.Selector))
	}
	return yaml.NewRNode(mapping(
		str("apiVersion"), str("v1"),
		str("kind"), str("Service"),
		str("metadata"), meta,
		str("spec"), spec,
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

func str(v string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: v}
}

func integer(v int64) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagInt, Value: strconv.FormatInt(v, 10)}
}

func boolean(v bool) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagBool, Value: strconv.FormatBool(v)}
}
