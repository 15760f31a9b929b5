package cli

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

const localConfigAnnotation = "config.kubernetes.io/local-config"

// readManifests reads every object of the given files and directories, in a
// stable order, expanding v1 Lists and dropping local-config objects (as
// kustomize does). Each object carries its file in the path annotation until
// the render is written, so errors can name it.
func readManifests(paths []string, skip string, stdin io.Reader) ([]*yaml.RNode, error) {
	var items []*yaml.RNode
	add := func(name string, r io.Reader) error {
		// PreserveSeqIndent keeps each file's list indentation, so the
		// pass-through objects diff cleanly against their sources.
		nodes, err := (&kio.ByteReader{
			Reader:            r,
			PreserveSeqIndent: true,
			SetAnnotations:    map[string]string{kioutil.PathAnnotation: name},
		}).Read()
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		for _, n := range nodes {
			items = appendObjects(items, n, name)
		}
		return nil
	}
	for _, p := range paths {
		if p == "-" {
			if err := add("<stdin>", stdin); err != nil {
				return nil, err
			}
			continue
		}
		files, err := manifestFiles(p, skip)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			if err := add(filepath.ToSlash(f), bytes.NewReader(data)); err != nil {
				return nil, err
			}
		}
	}
	return items, nil
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

// manifestFiles lists p itself, or the YAML and JSON files below it in
// lexical order, skipping hidden directories and the config file.
func manifestFiles(p, skip string) ([]string, error) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []string{p}, nil
	}
	var files []string
	err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != p && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		switch strings.ToLower(filepath.Ext(path)) {
		case ".yaml", ".yml", ".json":
		default:
			return nil
		}
		if skip != "" {
			if abs, err := filepath.Abs(path); err == nil && abs == skip {
				return nil
			}
		}
		files = append(files, path)
		return nil
	})
	return files, err
}
