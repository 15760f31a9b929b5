package kustomize

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fedlearner/flapp-services/internal/loader"
	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// FileNames are the names of a kustomization file, in the order kustomize
// looks for them.
var FileNames = konfig.RecognizedKustomizationFileNames()

// Name is the function's name: its image's repository ends in it
// (ghcr.io/fedlearner/flapp-services:v1), or its exec path's file is it.
const Name = "flapp-services"

// The typed function config, which names the function even without the
// function annotation.
const (
	configAPIVersion = "fn.fedlearner.k8s.io/v1alpha1"
	configKind       = "FLAppServices"
)

// Build is a kustomization root, scanned: what its build reads and runs.
type Build struct {
	tree  *loader.Tree
	dir   string // the root, resolved
	File  string // its kustomization file, as messages name it
	Dir   string // the root, as messages name it
	tight bool   // kustomize's own LoadRestrictionsRootOnly

	// Functions are flapp-services' transformer entries, in the order the
	// build meets them: the render's configuration.
	Functions []Function
	// Problems are what the build would execute or fetch, or cannot do
	// without either, each naming its kustomization file: the render
	// refuses the build when there is any.
	Problems []string

	rewrites map[string][]byte // resolved kustomization file -> its content without the function entries
	seen     map[string]bool   // resolved kustomization roots scanned
}

// Function is one flapp-services entry of a kustomization's transformers.
type Function struct {
	Kustomization string      // the kustomization file that lists it, as messages name it
	Source        string      // the file holding the entry (the kustomization itself for an inline one)
	Config        *yaml.RNode // the entry: a ConfigMap or FLAppServices, the functionConfig
}

// Scan reads the kustomization files of the build rooted at the directory
// dir (absolute, inside tree), without building it. file is the root's
// kustomization file as messages name it. Its error is a kustomization
// file that cannot be read or parsed; what the build must not do goes into
// Problems.
func Scan(tree *loader.Tree, dir, file string, restrictRoot bool) (*Build, error) {
	b := &Build{
		tree: tree, dir: dir, File: file, Dir: filepath.ToSlash(filepath.Dir(file)), tight: restrictRoot,
		rewrites: map[string][]byte{}, seen: map[string]bool{},
	}
	if err := b.scan(dir); err != nil {
		return nil, err
	}
	return b, nil
}

// kustomizationFile finds the kustomization file of the directory dir.
func (b *Build) kustomizationFile(dir string) (string, bool) {
	for _, name := range FileNames {
		if info, err := b.tree.Stat(filepath.Join(dir, name)); err == nil && info.Mode().IsRegular() {
			return filepath.Join(dir, name), true
		}
	}
	return "", false
}

func (b *Build) problem(kustFile, format string, args ...any) {
	b.Problems = append(b.Problems, b.tree.Name(kustFile)+": "+fmt.Sprintf(format, args...))
}

// scan reads the kustomization of the directory dir and, depth first, the
// kustomizations it refers to.
func (b *Build) scan(dir string) error {
	resolved, err := b.tree.Resolve(dir)
	if err != nil {
		return err
	}
	if b.seen[resolved] {
		return nil // kustomize reports cycles itself
	}
	b.seen[resolved] = true
	kustFile, ok := b.kustomizationFile(dir)
	if !ok {
		return nil // kustomize says what is missing
	}
	content, err := b.tree.ReadFile(kustFile)
	if err != nil {
		return err
	}
	var k types.Kustomization
	if err := k.Unmarshal(content); err != nil {
		return fmt.Errorf("%s: not a kustomization: %w", b.tree.Name(kustFile), err)
	}
	k.FixKustomization()

	if len(k.HelmCharts) > 0 || len(k.HelmChartInflationGenerator) > 0 || k.HelmGlobals != nil {
		b.problem(kustFile, "Helm chart inflation (helmCharts) runs the helm program, which flapp-services' build never runs: "+
			"render the chart with helm template and pipe it to flapp-services render -")
	}
	for field, paths := range map[string][]string{
		"crds": k.Crds, "configurations": k.Configurations, "openapi": openAPIPath(k),
		"patches": patchPaths(k), "replacements": replacementPaths(k), "configMapGenerator": generatorPaths(k.ConfigMapGenerator),
		"secretGenerator": secretPaths(k.SecretGenerator),
	} {
		for _, p := range paths {
			if isRemote(p) {
				b.problem(kustFile, "%s: %s is remote: flapp-services builds only what the repository holds, and fetches nothing", field, p)
			}
		}
	}
	for _, list := range []struct {
		field string
		paths []string
	}{{"resources", k.Resources}, {"components", k.Components}} {
		for _, p := range list.paths {
			if isRemote(p) {
				b.problem(kustFile, "%s: %s is a remote resource or base: flapp-services builds only what the repository holds, and fetches nothing", list.field, p)
				continue
			}
			if err := b.maybeBase(dir, p); err != nil {
				b.problem(kustFile, "%s: %s: %v", list.field, p, err)
			}
		}
	}
	var drop []string
	for _, plugins := range []struct {
		field   string
		entries []string
	}{{"generators", k.Generators}, {"transformers", k.Transformers}, {"validators", k.Validators}} {
		for _, entry := range plugins.entries {
			ours, err := b.plugin(kustFile, dir, plugins.field, entry)
			if err != nil {
				return err
			}
			if ours {
				drop = append(drop, entry)
			}
		}
	}
	if len(drop) > 0 {
		rewritten, err := withoutTransformers(content, drop)
		if err != nil {
			return fmt.Errorf("%s: %w", b.tree.Name(kustFile), err)
		}
		resolvedFile, err := b.tree.Resolve(kustFile)
		if err != nil {
			return err
		}
		b.rewrites[resolvedFile] = rewritten
	}
	return nil
}

// maybeBase scans p, an entry of resources or components, when it is a
// directory: a base or component with a kustomization of its own. Its
// error is a path the build may not read (outside the repository).
func (b *Build) maybeBase(dir, p string) error {
	if filepath.IsAbs(p) {
		return nil // kustomize refuses it itself
	}
	info, err := b.tree.Stat(filepath.Join(dir, p))
	if errors.Is(err, fs.ErrNotExist) {
		return nil // missing: kustomize reports it
	}
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return nil // a file: kustomize reads it
	}
	return b.scan(filepath.Join(dir, p))
}

// plugin classifies one entry of generators, transformers or validators:
// a path to a file or directory, or inline YAML. It reports whether the
// entry is flapp-services' own (a transformer the render does not execute).
func (b *Build) plugin(kustFile, dir, field, entry string) (bool, error) {
	objects, source, err := b.pluginObjects(dir, entry)
	if err != nil {
		return false, err
	}
	if source == "" {
		source = kustFile
	}
	if objects == nil {
		if isRemote(entry) {
			b.problem(kustFile, "%s: %s is remote: flapp-services builds only what the repository holds, and fetches nothing", field, entry)
		}
		return false, nil // a directory, or missing: kustomize builds or reports it
	}
	ours := 0
	for _, obj := range objects {
		kind, what := classify(obj)
		switch kind {
		case builtin:
		case flappServices:
			ours++
			if field != "transformers" {
				b.problem(kustFile, "%s: %s lists flapp-services, a transformer: list it under transformers", field, b.tree.Name(source))
				continue
			}
			b.Functions = append(b.Functions, Function{Kustomization: b.tree.Name(kustFile), Source: b.tree.Name(source), Config: obj})
		case function:
			b.problem(kustFile, "%s: %s runs %s: flapp-services' build runs no KRM function; its own entry is read as its configuration, and nothing else is executed", field, b.tree.Name(source), what)
		case plugin:
			b.problem(kustFile, "%s: %s configures the kustomize plugin %s: flapp-services' build runs builtin transformers and generators only", field, b.tree.Name(source), what)
		}
	}
	if ours > 0 && ours < len(objects) {
		b.problem(kustFile, "%s: %s holds flapp-services' entry and other configurations: give flapp-services' entry a file of its own", field, b.tree.Name(source))
	}
	return ours > 0 && field == "transformers", nil
}

// pluginObjects reads the objects of a plugin entry: inline YAML, or a file
// (then source is its path). It returns no objects for a directory or a
// path that does not exist.
func (b *Build) pluginObjects(dir, entry string) (objects []*yaml.RNode, source string, err error) {
	if inline, err := parseObjects([]byte(entry)); err == nil && len(inline) > 0 {
		return inline, "", nil
	}
	if isRemote(entry) || filepath.IsAbs(entry) {
		return nil, "", nil
	}
	p := filepath.Join(dir, entry)
	info, err := b.tree.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	if !info.Mode().IsRegular() {
		return nil, "", nil
	}
	data, err := b.tree.ReadFile(p)
	if err != nil {
		return nil, "", err
	}
	objects, err = parseObjects(data)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", b.tree.Name(p), err)
	}
	return objects, p, nil
}

func openAPIPath(k types.Kustomization) []string {
	if p, ok := k.OpenAPI["path"]; ok {
		return []string{p}
	}
	return nil
}

func patchPaths(k types.Kustomization) []string {
	var out []string
	// kustomize v5 still reads the deprecated fields; so must the scan.
	for _, p := range append(slices.Clone(k.Patches), k.PatchesJson6902...) { //nolint:staticcheck // read as kustomize reads them
		if p.Path != "" {
			out = append(out, p.Path)
		}
	}
	for _, p := range k.PatchesStrategicMerge { //nolint:staticcheck // read as kustomize reads them
		out = append(out, string(p))
	}
	return out
}

func replacementPaths(k types.Kustomization) []string {
	var out []string
	for _, r := range k.Replacements {
		if r.Path != "" {
			out = append(out, r.Path)
		}
	}
	return out
}

func generatorPaths(args []types.ConfigMapArgs) []string {
	var out []string
	for _, a := range args {
		out = append(out, sourcePaths(a.KvPairSources)...)
	}
	return out
}

func secretPaths(args []types.SecretArgs) []string {
	var out []string
	for _, a := range args {
		out = append(out, sourcePaths(a.KvPairSources)...)
	}
	return out
}

func sourcePaths(s types.KvPairSources) []string {
	out := slices.Clone(s.EnvSources)
	if s.EnvSource != "" {
		out = append(out, s.EnvSource)
	}
	for _, f := range s.FileSources {
		if _, p, found := strings.Cut(f, "="); found {
			f = p
		}
		out = append(out, f)
	}
	return out
}

// withoutTransformers is a kustomization file's content without the given
// entries of its transformers: what krusty reads in its place.
func withoutTransformers(content []byte, drop []string) ([]byte, error) {
	node, err := yaml.Parse(string(content))
	if err != nil {
		return nil, err
	}
	list, err := node.Pipe(yaml.Lookup("transformers"))
	if err != nil || list == nil || list.YNode().Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("transformers is not a list")
	}
	seq := list.YNode()
	seq.Content = slices.DeleteFunc(seq.Content, func(n *yaml.Node) bool {
		return n.Kind == yaml.ScalarNode && slices.Contains(drop, n.Value)
	})
	s, err := node.String()
	return []byte(s), err
}
