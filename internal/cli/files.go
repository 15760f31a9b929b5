package cli

import (
	"bytes"
	"fmt"
	"io"

	"github.com/fedlearner/flapp-services/internal/loader"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

const localConfigAnnotation = "config.kubernetes.io/local-config"

// DefaultMaxObjects bounds the objects one render reads. Parsing costs
// about 6 kB per document however small it is: the byte ceilings alone let a
// file of empty documents ask for gigabytes.
const DefaultMaxObjects = 200000

// readManifests reads every object of the given files and directories, in a
// stable order, expanding v1 Lists and dropping local-config objects (as
// kustomize does). Each object carries its file in the path annotation until
// the render is written, so errors can name it. Which files are read, and
// how much of them, is the loader's to decide; a nil root is stdin. At most
// maxObjects objects are read: a file's documents are counted before it is
// parsed.
func readManifests(ld *loader.Loader, paths []string, roots []*loader.Root, skip string, stdin io.Reader, maxObjects int) ([]*yaml.RNode, error) {
	var items []*yaml.RNode
	add := func(name string, data []byte) error {
		// kio.ByteReader splits a file at every line that starts with "---".
		if docs := bytes.Count(data, []byte("\n---")) + 1; len(items)+docs > maxObjects {
			return fmt.Errorf("%s holds up to %d documents, bringing the input over %d objects (--max-objects)", name, docs, maxObjects)
		}
		// PreserveSeqIndent keeps each file's list indentation, so the
		// pass-through objects diff cleanly against their sources.
		nodes, err := (&kio.ByteReader{
			Reader:            bytes.NewReader(data),
			PreserveSeqIndent: true,
			SetAnnotations:    map[string]string{kioutil.PathAnnotation: name},
		}).Read()
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		for _, n := range nodes {
			items = appendObjects(items, n, name)
		}
		if len(items) > maxObjects { // a List's items
			return fmt.Errorf("%s brings the input to %d objects, over %d (--max-objects)", name, len(items), maxObjects)
		}
		return nil
	}
	// List every file first: the ceilings are checked on their sizes before
	// anything is read.
	files, err := listFiles(ld, roots, skip)
	if err != nil {
		return nil, err
	}
	for i := range paths {
		if roots[i] == nil {
			data, err := ld.ReadStream("<stdin>", stdin)
			if err != nil {
				return nil, err
			}
			if err := add("<stdin>", data); err != nil {
				return nil, err
			}
			continue
		}
		for _, f := range files[i] {
			data, err := ld.Read(f)
			if err != nil {
				return nil, err
			}
			if err := add(f.Name, data); err != nil {
				return nil, err
			}
		}
	}
	return items, nil
}

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

// appendObjects appends n, or the objects of n when it is a v1 List, unless
// it is local configuration.
func appendObjects(items []*yaml.RNode, n *yaml.RNode, name string) []*yaml.RNode {
	if n.YNode().Kind != yaml.MappingNode {
		return append(items, n)
	}
	if scalar(n, "kind") == "List" && scalar(n, "apiVersion") == "v1" {
		if list := n.Field("items"); list != nil && list.Value.YNode().Kind == yaml.SequenceNode {
			for _, item := range list.Value.YNode().Content {
				child := yaml.NewRNode(item)
				if item.Kind == yaml.MappingNode {
					_ = child.PipeE(yaml.SetAnnotation(kioutil.PathAnnotation, name))
				}
				items = appendObjects(items, child, name)
			}
			return items
		}
	}
	if scalar(n, "metadata", "annotations", localConfigAnnotation) == "true" {
		return items
	}
	return append(items, n)
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
