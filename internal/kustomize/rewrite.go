package kustomize

import (
	"fmt"
	"path/filepath"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The kustomization files as the build reads them: each read once, and
// flapp-services' entries written as the build runs them.

// readFile reads a file of the tree once for the scan and the build: the
// build's first read of it is served from memory and not counted again.
func (b *Root) readFile(p string) ([]byte, error) {
	resolved, err := b.tree.Resolve(p)
	if err != nil {
		return nil, err
	}
	if data, ok := b.read[resolved]; ok {
		return data, b.tree.Charge(b.tree.Name(p), int64(len(data)))
	}
	data, err := b.tree.ReadFile(p)
	if err != nil {
		return nil, err
	}
	b.read[resolved] = data
	return data, nil
}

// renderEntry is the file of the render's own entry, in the root: the
// build reads it, the disk never holds it.
const renderEntry = ".flapp-services.render.yaml"

// addRenderEntry lists the render's own entry last in the root's
// transformers, for a build that lists no flapp-services entry: its FLApps
// are rendered as the root's transformers leave them. It is a file (an
// inline entry would run before the root's other entries, as kustomize
// runs inline ones first).
func (b *Root) addRenderEntry() error {
	kustFile, _ := b.kustomizationFile(b.dir)
	resolved, err := b.tree.Resolve(kustFile)
	if err != nil {
		return err
	}
	content, ok := b.rewrites[resolved]
	if !ok {
		content = b.read[resolved]
	}
	node, err := yaml.Parse(string(content))
	if err != nil {
		return err
	}
	list, err := node.Pipe(yaml.LookupCreate(yaml.SequenceNode, "transformers"))
	if err != nil || list.YNode().Kind != yaml.SequenceNode {
		return fmt.Errorf("transformers is not a list")
	}
	list.YNode().Style = 0
	list.YNode().Content = append(list.YNode().Content, &yaml.Node{Kind: yaml.ScalarNode, Value: renderEntry})
	rewritten, err := node.String()
	if err != nil {
		return err
	}
	config := yaml.NewMapRNode(nil)
	config.SetApiVersion(configAPIVersion)
	config.SetKind(configKind)
	if err := config.SetName(Name); err != nil {
		return err
	}
	entry, err := entryDocument(config, b.key, len(b.Functions))
	if err != nil {
		return err
	}
	b.Functions = append(b.Functions, Function{Kustomization: b.File, Source: b.File, Render: true, apiVersion: configAPIVersion, kind: configKind, last: b.lastAllowed})
	b.rewrites[resolved] = []byte(rewritten)
	b.virtual = map[string][]byte{filepath.Join(b.dir, renderEntry): []byte(entry)}
	return nil
}

// withInlineEntries is a kustomization file's content with the inline
// entries transformers[i] replaced by entries[i]: what krusty reads in its
// place.
func withInlineEntries(content []byte, entries map[int]string) ([]byte, error) {
	node, err := yaml.Parse(string(content))
	if err != nil {
		return nil, err
	}
	list, err := node.Pipe(yaml.Lookup("transformers"))
	if err != nil || list == nil || list.YNode().Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("transformers is not a list")
	}
	for i, entry := range entries {
		if i >= len(list.YNode().Content) {
			return nil, fmt.Errorf("transformers has no entry %d", i)
		}
		list.YNode().Content[i] = &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Style: yaml.LiteralStyle, Value: entry}
	}
	s, err := node.String()
	return []byte(s), err
}
