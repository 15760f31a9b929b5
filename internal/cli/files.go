package cli

import (
	"github.com/fedlearner/flapp-services/internal/loader"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

const (
	localConfigAnnotation = "config.kubernetes.io/local-config"
	pathAnnotation        = kioutil.PathAnnotation
)

// resolvePaths resolves every PATH but stdin ("-", a nil root).
func resolvePaths(ld *loader.Loader, paths []string) ([]*loader.Root, error) {
	roots := make([]*loader.Root, len(paths))
	for i, p := range paths {
		if p == "-" {
			continue
		}
		root, err := ld.Resolve(p)
		if err != nil {
			return nil, err
		}
		roots[i] = &root
	}
	return roots, nil
}

// listFiles lists the manifest files of every root, skipping the resolved
// path skip (the config file).
func listFiles(ld *loader.Loader, roots []*loader.Root, skip string) ([][]loader.File, error) {
	files := make([][]loader.File, len(roots))
	for i, root := range roots {
		if root == nil {
			continue
		}
		var err error
		if files[i], err = ld.Files(*root, skip); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// expandObjects calls each with n, or with the objects of n when it is a v1
// List, unless it is local configuration (kustomize drops those too).
func expandObjects(n *yaml.RNode, name string, each func(*yaml.RNode) error) error {
	if n.YNode().Kind != yaml.MappingNode {
		return each(n)
	}
	if scalar(n, "kind") == "List" && scalar(n, "apiVersion") == "v1" {
		if list := n.Field("items"); list != nil && list.Value.YNode().Kind == yaml.SequenceNode {
			for _, item := range list.Value.YNode().Content {
				child := yaml.NewRNode(item)
				if item.Kind == yaml.MappingNode {
					_ = child.PipeE(yaml.SetAnnotation(pathAnnotation, name))
				}
				if err := expandObjects(child, name, each); err != nil {
					return err
				}
			}
			return nil
		}
	}
	if scalar(n, "metadata", "annotations", localConfigAnnotation) == "true" {
		return nil
	}
	return each(n)
}

// scalar is the value of the scalar at path, or "" when there is none. It
// never panics on malformed metadata, unlike kyaml's metadata getters.
func scalar(n *yaml.RNode, path ...string) string {
	v, err := n.Pipe(yaml.Lookup(path...))
	if err != nil || v == nil || v.YNode().Kind != yaml.ScalarNode {
		return ""
	}
	return v.YNode().Value
}
