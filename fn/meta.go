package fn

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Reading items. kyaml's metadata getters panic on malformed metadata
// (labels: [a]), and the function must never panic, so items are read
// through these checked helpers.

// lookup is the value of key in a mapping node, or nil.
func lookup(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func metadataOf(node *yaml.RNode) *yaml.Node {
	return lookup(node.YNode(), "metadata")
}

// metaString is metadata.<field> (name, namespace) when it is a scalar.
func metaString(node *yaml.RNode, field string) string {
	if v := lookup(metadataOf(node), field); v != nil && v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}

// labelOf and annotationOf read one entry of metadata.labels/annotations.
func labelOf(node *yaml.RNode, key string) string      { return metaMapValue(node, "labels", key) }
func annotationOf(node *yaml.RNode, key string) string { return metaMapValue(node, "annotations", key) }

func metaMapValue(node *yaml.RNode, field, key string) string {
	if v := lookup(lookup(metadataOf(node), field), key); v != nil && v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}

// checkMetadata reports the first way an item's metadata is not the shape
// every Kubernetes object has, as a field path and a message.
func checkMetadata(node *yaml.RNode) (string, string) {
	md := lookup(node.YNode(), "metadata")
	if md == nil || md.Tag == yaml.NodeTagNull {
		return "", ""
	}
	if md.Kind != yaml.MappingNode {
		return "metadata", "metadata must be an object"
	}
	for _, f := range []string{"name", "namespace", "uid"} {
		if v := lookup(md, f); v != nil && v.Kind != yaml.ScalarNode {
			return "metadata." + f, fmt.Sprintf("metadata.%s must be a string", f)
		}
	}
	for _, f := range []string{"labels", "annotations"} {
		v := lookup(md, f)
		if v == nil || v.Tag == yaml.NodeTagNull {
			continue
		}
		if v.Kind != yaml.MappingNode {
			return "metadata." + f, fmt.Sprintf("metadata.%s must be a map of strings", f)
		}
		for i := 0; i+1 < len(v.Content); i += 2 {
			if v.Content[i].Kind != yaml.ScalarNode || v.Content[i+1].Kind != yaml.ScalarNode {
				return "metadata." + f, fmt.Sprintf("metadata.%s must be a map of strings", f)
			}
		}
	}
	return "", ""
}

// fieldNames lists a mapping node's keys in document order.
func fieldNames(node *yaml.RNode) []string {
	names, _ := node.Fields() // only an error for a node that is not a mapping
	return names
}

// stringField is a top-level scalar's value, or "" when absent or not a scalar.
func stringField(node *yaml.RNode, name string) string {
	if v := fieldValue(node, name); v != nil && v.YNode().Kind == yaml.ScalarNode {
		return v.YNode().Value
	}
	return ""
}

// fieldValue is a top-level field's value node, or nil.
func fieldValue(node *yaml.RNode, name string) *yaml.RNode {
	if f := node.Field(name); f != nil {
		return f.Value
	}
	return nil
}

// refOf identifies an object for a result, as far as it can be identified.
func refOf(node *yaml.RNode) *yaml.ResourceIdentifier {
	if node == nil || node.YNode().Kind != yaml.MappingNode {
		return nil
	}
	ref := &yaml.ResourceIdentifier{
		TypeMeta: yaml.TypeMeta{APIVersion: stringField(node, "apiVersion"), Kind: stringField(node, "kind")},
	}
	ref.Name, ref.Namespace = metaString(node, "name"), metaString(node, "namespace")
	if *ref == (yaml.ResourceIdentifier{}) {
		return nil
	}
	return ref
}

// fileAnnotation is the item's file as kpt or kustomize annotated it.
func fileAnnotation(node *yaml.RNode) string {
	if p := annotationOf(node, kioutil.PathAnnotation); p != "" {
		return p
	}
	return annotationOf(node, kioutil.LegacyPathAnnotation)
}
