package kustomize

import (
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Run builds the kustomization as `kustomize build` does (the same output
// order), but with flapp-services' entries left out of every
// kustomization's transformers, no plugin but kustomize's builtins, and a
// file system that reads only the repository, within the render's
// ceilings, and writes nothing. It returns the build's output, a YAML
// stream of one document per object, and for each document the file the
// object was read from (as messages name it; "" for an object a generator
// made).
func (b *Build) Run() (data []byte, files []string, err error) {
	if err := b.Err(); err != nil {
		return nil, nil, err
	}
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionUnspecified // kustomize build's default: its legacy order unless sortOptions says otherwise
	opts.LoadRestrictions = types.LoadRestrictionsNone
	if b.tight {
		opts.LoadRestrictions = types.LoadRestrictionsRootOnly
	}
	opts.PluginConfig = types.DisabledPluginConfig()
	rewrites, askedForOrigins, err := b.withOrigins()
	if err != nil {
		return nil, nil, err
	}
	fsys := &confinedFS{build: b, rewrites: rewrites, served: map[string]bool{}}
	type built struct {
		m   resmap.ResMap
		err error
	}
	done := make(chan built, 1)
	go func() {
		m, err := krusty.MakeKustomizer(opts).Run(fsys, b.dir)
		done <- built{m, err}
	}()
	var m resmap.ResMap
	select {
	case r := <-done:
		m, err = r.m, r.err
	case <-time.After(b.limits.MaxTime):
		// A backstop for what the estimate cannot see; the build is
		// abandoned, and the render that fails with this error ends the
		// process with it.
		return nil, nil, fmt.Errorf("the build ran past its deadline of %s (--max-build-time): its cost is beyond what the scan estimates; split the application, or raise the deadline and Argo CD's timeout together", b.limits.MaxTime)
	}
	if fsys.refused != nil {
		return nil, nil, fsys.refused // kustomize wraps it in its own words
	}
	if err != nil {
		return nil, nil, fmt.Errorf("kustomize build: %s", b.tidy(err.Error()))
	}
	for _, res := range m.Resources() {
		file := ""
		if origin, err := res.GetOrigin(); err == nil && origin != nil && origin.Repo == "" && origin.Path != "" {
			file = b.tree.Name(filepath.Join(b.dir, filepath.FromSlash(origin.Path)))
		}
		files = append(files, file)
	}
	if !askedForOrigins {
		if err := m.RemoveOriginAnnotations(); err != nil {
			return nil, nil, fmt.Errorf("kustomize build: %w", err)
		}
	}
	data, err = m.AsYaml()
	if err != nil {
		return nil, nil, fmt.Errorf("kustomize build: %w", err)
	}
	if int64(len(data)) > b.limits.MaxOutput {
		return nil, nil, fmt.Errorf("the build's output is %d bytes, over the ceiling of %d bytes (--max-build-output)", len(data), b.limits.MaxOutput)
	}
	return data, files, nil
}

// tidy names the repository's files in a kustomize error from the current
// directory, as every other message does, instead of by their absolute
// paths.
func (b *Build) tidy(msg string) string {
	prefix := b.tree.Name(b.tree.Dir())
	if prefix == "." {
		prefix = ""
	} else {
		prefix += "/"
	}
	return strings.ReplaceAll(msg, b.tree.Dir()+string(filepath.Separator), prefix)
}

// withOrigins is the rewritten kustomization files, with the root's
// buildMetadata asking for origin annotations (they name each object's
// file), and whether the root asked for them itself (then they stay in the
// output, as in kustomize's).
func (b *Build) withOrigins() (map[string][]byte, bool, error) {
	file, _ := b.kustomizationFile(b.dir)
	resolved, err := b.tree.Resolve(file)
	if err != nil {
		return nil, false, err
	}
	content, ok := b.rewrites[resolved]
	if !ok {
		content = b.read[resolved] // the scan read it
	}
	node, err := yaml.Parse(string(content))
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", b.File, err)
	}
	list, err := node.Pipe(yaml.LookupCreate(yaml.SequenceNode, "buildMetadata"))
	if err != nil || list.YNode().Kind != yaml.SequenceNode {
		return nil, false, fmt.Errorf("%s: buildMetadata is not a list", b.File)
	}
	for _, v := range list.YNode().Content {
		if v.Value == types.OriginAnnotations {
			return b.rewrites, true, nil
		}
	}
	list.YNode().Style = 0
	list.YNode().Content = append(list.YNode().Content, &yaml.Node{Kind: yaml.ScalarNode, Value: types.OriginAnnotations})
	s, err := node.String()
	if err != nil {
		return nil, false, err
	}
	rewrites := maps.Clone(b.rewrites)
	rewrites[resolved] = []byte(s)
	return rewrites, false, nil
}
