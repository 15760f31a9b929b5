package fn

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/fedlearner/flapp-services/render"
	"github.com/pmezard/go-difflib/difflib"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// RenderOptions are the flags of `flapp-services render`.
type RenderOptions struct {
	Config          string // function config file
	OwnerReferences string // overrides the config's policy when set
	Check           string // compare with this earlier render instead of printing
	Paths           []string
}

// annotations that exist only while rendering and must not reach a cluster.
var readerAnnotations = []string{
	kioutil.PathAnnotation, kioutil.IndexAnnotation,
	kioutil.LegacyPathAnnotation, kioutil.LegacyIndexAnnotation,
}

const localConfigAnnotation = "config.kubernetes.io/local-config"

// RunRender is the standalone mode for Argo CD and CI: manifests in, the same
// manifests plus the generated Services out, as one YAML stream. On any error
// nothing reaches out: an empty or partial render would make a GitOps engine
// prune live Services.
func RunRender(opts RenderOptions, in io.Reader, out, errOut io.Writer) (err error) {
	defer func() {
		if r := recover(); r != nil {
			_, _ = fmt.Fprintf(errOut, "error: internal error: %v\n", r)
			err = ErrFailed
		}
	}()
	fail := func(format string, args ...any) error {
		_, _ = fmt.Fprintf(errOut, "error: "+format+"\n", args...)
		return ErrFailed
	}

	cfg, configPath, err := loadConfig(opts)
	if err != nil {
		return fail("%v", err)
	}
	paths := opts.Paths
	if len(paths) == 0 {
		paths = []string{"."}
	}
	items, err := readManifests(paths, configPath, in)
	if err != nil {
		return fail("%v", err)
	}
	if len(items) == 0 {
		return fail("no Kubernetes objects found in %s: refusing to print an empty render, which a GitOps engine would take as 'delete everything'",
			strings.Join(paths, ", "))
	}

	output, results := Generate(items, cfg)
	if results.ExitCode() != 0 {
		results.Sort()
		reportResults(errOut, results, nil)
		return ErrFailed
	}
	var buf bytes.Buffer
	// = kio.ByteWriter{ClearAnnotations: readerAnnotations}.Write(output.Nodes()),
	// with the generated Services written by the fast encoder (fastwrite.go).
	if err := writeRender(&buf, output); err != nil {
		return fail("writing the render: %v", err)
	}

	if opts.Check != "" {
		return check(opts.Check, buf.Bytes(), errOut)
	}
	_, err = out.Write(buf.Bytes())
	return err
}

func loadConfig(opts RenderOptions) (Config, string, error) {
	cfg := DefaultConfig()
	var configPath string
	if opts.Config != "" {
		data, err := os.ReadFile(opts.Config)
		if err != nil {
			return cfg, "", fmt.Errorf("reading --config: %w", err)
		}
		node, err := yaml.Parse(string(data))
		if err != nil {
			return cfg, "", fmt.Errorf("--config %s is not YAML: %w", opts.Config, err)
		}
		var results framework.Results
		if cfg, results = ParseConfig(node); results.ExitCode() != 0 {
			return cfg, "", fmt.Errorf("--config %s: %s", opts.Config, results[0].Message)
		}
		if configPath, err = filepath.Abs(opts.Config); err != nil {
			return cfg, "", err
		}
	}
	if opts.OwnerReferences != "" {
		policy := render.OwnerReferencePolicy(opts.OwnerReferences)
		if !validPolicy(policy) {
			return cfg, "", fmt.Errorf("--owner-references must be one of %s, not %q", policyList(), opts.OwnerReferences)
		}
		cfg.OwnerReferences = policy
	}
	return cfg, configPath, nil
}

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

func appendObjects(items []*yaml.RNode, n *yaml.RNode, name string) []*yaml.RNode {
	if n.YNode().Kind == yaml.MappingNode && stringField(n, "kind") == "List" && stringField(n, "apiVersion") == "v1" {
		if list := fieldValue(n, "items"); list != nil && list.YNode().Kind == yaml.SequenceNode {
			for _, item := range list.YNode().Content {
				child := yaml.NewRNode(item)
				if item.Kind == yaml.MappingNode {
					_ = child.PipeE(yaml.SetAnnotation(kioutil.PathAnnotation, name))
				}
				items = appendObjects(items, child, name)
			}
			return items
		}
	}
	if n.YNode().Kind == yaml.MappingNode && annotationOf(n, localConfigAnnotation) == "true" {
		return items
	}
	return append(items, n)
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

// check compares a fresh render with an earlier one, for CI drift checks.
func check(file string, fresh []byte, errOut io.Writer) error {
	old, err := os.ReadFile(file)
	if err != nil {
		_, _ = fmt.Fprintf(errOut, "error: --check: %v\n", err)
		return ErrFailed
	}
	if bytes.Equal(old, fresh) {
		return nil
	}
	diff, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(string(old)), B: difflib.SplitLines(string(fresh)),
		FromFile: file + " (committed)", ToFile: file + " (fresh render)", Context: 3,
	})
	_, _ = fmt.Fprintf(errOut, "error: %s is out of date with its sources; re-render it with 'flapp-services render' and commit the result:\n%s", file, diff)
	return ErrFailed
}
