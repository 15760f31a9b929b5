package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/fedlearner/flapp-services/fn"
	"github.com/fedlearner/flapp-services/internal/fastyaml"
	"github.com/fedlearner/flapp-services/internal/loader"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// RenderOptions are the flags of `flapp-services render`.
type RenderOptions struct {
	Config           string // function config file
	OwnerReferences  string // overrides the config's policy when set
	Check            string // compare with this earlier render instead of printing
	MaxServices      int64  // overrides the config's maxServices when set
	MaxObjects       int    // DefaultMaxObjects when 0
	MaxDocumentNodes int    // DefaultMaxDocumentNodes when 0
	MaxObjectNodes   int    // DefaultMaxObjectNodes when 0
	LoadRestrictor   string // loader.RootOnly when empty
	Limits           loader.Limits
	Paths            []string
}

// RunRender is the standalone mode for Argo CD and CI: manifests in, the same
// manifests plus the generated Services out, as one YAML stream. Files are
// read and parsed one document at a time, and the objects kept are encoded
// as they come, so memory follows the largest document, not the input or
// the output. On any error nothing reaches out: an empty or partial render
// would make a GitOps engine prune live Services.
func RunRender(opts RenderOptions, in io.Reader, out, errOut io.Writer) error {
	if os.Getenv("GOMEMLIMIT") == "" {
		// Garbage from one document must not pile up over the next ones:
		// past this soft limit the collector runs more often (it never
		// fails a run that needs more).
		debug.SetMemoryLimit(renderMemoryLimit)
	}
	m := &renderMode{opts: opts, stdin: in, out: out, errOut: errOut, render: fastyaml.NewStreamWriter()}
	defer func() { _ = m.render.Close() }()
	return drive(m, errOut)
}

type renderMode struct {
	opts           RenderOptions
	stdin          io.Reader
	out            io.Writer
	errOut         io.Writer
	ld             *loader.Loader
	checkPath      string // --check, resolved
	render         *fastyaml.StreamWriter
	objects        int
	maxObjects     int
	maxObjectNodes int
}

func (m *renderMode) read(add func(*yaml.RNode) error) (fn.Config, error) {
	restrictor := loader.Restrictor(m.opts.LoadRestrictor)
	if restrictor == "" {
		restrictor = loader.RootOnly
	}
	ld, err := loader.New(restrictor, m.opts.Limits)
	if err != nil {
		return fn.Config{}, err
	}
	m.ld = ld
	paths := m.opts.Paths
	if len(paths) == 0 {
		paths = []string{"."}
	}
	// Every PATH first: --config and --check must lie inside one of them
	// (or the current directory).
	roots, err := resolvePaths(ld, paths)
	if err != nil {
		return fn.Config{}, err
	}
	cfg, configPath, err := loadConfig(m.opts, ld)
	if err != nil {
		return cfg, err
	}
	if m.opts.Check != "" {
		if m.checkPath, err = ld.Confine("--check", m.opts.Check); err != nil {
			return cfg, err
		}
	}
	m.maxObjects = orDefault(m.opts.MaxObjects, DefaultMaxObjects)
	m.maxObjectNodes = orDefault(m.opts.MaxObjectNodes, DefaultMaxObjectNodes)
	maxNodes := orDefault(m.opts.MaxDocumentNodes, DefaultMaxDocumentNodes)
	// List every file first: the size ceilings are checked on their sizes
	// before anything is read.
	files, err := listFiles(ld, roots, configPath)
	if err != nil {
		return cfg, err
	}
	for i := range paths {
		if roots[i] == nil {
			data, err := ld.ReadStream("<stdin>", m.stdin)
			if err != nil {
				return cfg, err
			}
			if err := m.readFile("<stdin>", data, maxNodes, add); err != nil {
				return cfg, err
			}
			continue
		}
		for _, f := range files[i] {
			data, err := ld.Read(f)
			if err != nil {
				return cfg, err
			}
			if err := m.readFile(f.Name, data, maxNodes, add); err != nil {
				return cfg, err
			}
		}
	}
	if m.objects == 0 {
		return cfg, fmt.Errorf("no Kubernetes objects found in %s: refusing to print an empty render, which a GitOps engine would take as 'delete everything'",
			strings.Join(paths, ", "))
	}
	return cfg, nil
}

// readFile reads the objects of one file, expanding v1 Lists and dropping
// local configuration. Each object carries its file in the path annotation
// until it is written, so errors can name it.
func (m *renderMode) readFile(name string, data []byte, maxNodes int, add func(*yaml.RNode) error) error {
	limits := fastyaml.ReadLimits{MaxNodes: maxNodes, MaxDocuments: m.maxObjects - m.objects}
	err := fastyaml.ReadObjects(data, map[string]string{pathAnnotation: name}, limits, func(n *yaml.RNode) error {
		return expandObjects(n, name, func(obj *yaml.RNode) error {
			if m.objects++; m.objects > m.maxObjects {
				return &overError{fmt.Sprintf("%s brings the input to %d objects, over %d (--max-objects)", name, m.objects, m.maxObjects)}
			}
			if n := countNodes(obj.YNode(), m.maxObjectNodes); n > m.maxObjectNodes {
				return &overError{fmt.Sprintf("%s: %s has over %d YAML nodes (--max-object-nodes): no Kubernetes object is that large; split it",
					name, describeObject(obj), m.maxObjectNodes)}
			}
			return add(obj)
		})
	})
	var over *overError
	var docs *fastyaml.DocumentsError
	var doc *fastyaml.DocumentError
	switch {
	case err == nil || errors.As(err, &over):
		return err
	case errors.As(err, &docs):
		return fmt.Errorf("%s %v, bringing the input over %d objects (--max-objects)", name, err, m.maxObjects)
	case errors.As(err, &doc) && doc.Err == nil:
		doc.Setting = "--max-document-nodes"
	}
	return fmt.Errorf("%s: %w", name, err)
}

// overError is a ceiling passed, its message complete.
type overError struct{ msg string }

func (e *overError) Error() string { return e.msg }

func (m *renderMode) keep(item *yaml.RNode) error { return m.render.Add(item) }

// fail leaves stdout empty: the reasons are on stderr.
func (m *renderMode) fail(framework.Results) error { return nil }

func (m *renderMode) write(out *fn.Output, results framework.Results) error {
	if m.opts.Check == "" {
		return m.render.WriteTo(m.out, out)
	}
	// Warnings first: they hold whether or not the file is current.
	printResults(m.errOut, results, framework.Warning)
	return m.check(out)
}

func orDefault(n, def int) int {
	if n == 0 {
		return def
	}
	return n
}

// loadConfig reads --config and applies --owner-references and
// --max-services; it returns the config file's resolved path, which is not
// part of the render.
func loadConfig(opts RenderOptions, ld *loader.Loader) (fn.Config, string, error) {
	cfg := fn.DefaultConfig()
	var configPath string
	if opts.Config != "" {
		var err error
		if configPath, err = ld.Confine("--config", opts.Config); err != nil {
			return cfg, "", err
		}
		data, err := ld.ReadConfined("--config", opts.Config, configPath, ld.Limits().MaxFileSize)
		if err != nil {
			return cfg, "", err
		}
		node, err := yaml.Parse(string(data))
		if err != nil {
			return cfg, "", fmt.Errorf("--config %s is not YAML: %w", opts.Config, err)
		}
		parsed, results := fn.ParseConfig(node)
		if results.ExitCode() != 0 {
			return cfg, "", fmt.Errorf("--config %s: %s", opts.Config, results[0].Message)
		}
		cfg = parsed
	}
	if opts.MaxServices != 0 {
		if opts.MaxServices < 0 {
			return cfg, "", fmt.Errorf("--max-services must be a positive integer, not %d", opts.MaxServices)
		}
		cfg.MaxServices = opts.MaxServices
	}
	if opts.OwnerReferences != "" {
		policy, err := fn.ParseOwnerReferences("--owner-references", opts.OwnerReferences)
		if err != nil {
			return cfg, "", err
		}
		cfg.OwnerReferences = policy
	}
	return cfg, configPath, nil
}

// countNodes counts n's nodes, stopping past limit.
func countNodes(n *yaml.Node, limit int) int {
	c := 1
	for _, child := range n.Content {
		if c += countNodes(child, limit-c); c > limit {
			return c
		}
	}
	return c
}

// describeObject names an object for an error, as far as it can be named.
func describeObject(n *yaml.RNode) string {
	kind, name := scalar(n, "kind"), scalar(n, "metadata", "name")
	if kind == "" && name == "" {
		return "an object"
	}
	return strings.TrimSpace(kind + " " + name)
}
