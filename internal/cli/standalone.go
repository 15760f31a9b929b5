package cli

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/fedlearner/flapp-services/fn"
	"github.com/fedlearner/flapp-services/internal/fastyaml"
	"github.com/fedlearner/flapp-services/internal/loader"
	"github.com/pmezard/go-difflib/difflib"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// RenderOptions are the flags of `flapp-services render`.
type RenderOptions struct {
	Config          string // function config file
	OwnerReferences string // overrides the config's policy when set
	Check           string // compare with this earlier render instead of printing
	MaxServices     int64  // overrides the config's maxServices when set
	MaxObjects      int    // DefaultMaxObjects when 0
	LoadRestrictor  string // loader.RootOnly when empty
	Limits          loader.Limits
	Paths           []string
}

// checkCeiling bounds the file --check reads: a committed render of the
// maximum 100,000 Services is about 49 MB.
const checkCeiling = 256 << 20

// RunRender is the standalone mode for Argo CD and CI: manifests in, the same
// manifests plus the generated Services out, as one YAML stream. On any error
// nothing reaches out: an empty or partial render would make a GitOps engine
// prune live Services.
func RunRender(opts RenderOptions, in io.Reader, out, errOut io.Writer) (err error) {
	defer func() {
		if r := recover(); r != nil {
			_, _ = fmt.Fprintf(errOut, "error: internal error: %v\n", r)
			err = fn.ErrFailed
		}
	}()
	fail := func(format string, args ...any) error {
		_, _ = fmt.Fprintf(errOut, "error: "+format+"\n", args...)
		return fn.ErrFailed
	}

	restrictor := loader.Restrictor(opts.LoadRestrictor)
	if restrictor == "" {
		restrictor = loader.RootOnly
	}
	ld, err := loader.New(restrictor, opts.Limits)
	if err != nil {
		return fail("%v", err)
	}
	paths := opts.Paths
	if len(paths) == 0 {
		paths = []string{"."}
	}
	// Every PATH first: --config and --check must lie inside one of them
	// (or the current directory).
	roots, err := resolvePaths(ld, paths)
	if err != nil {
		return fail("%v", err)
	}
	cfg, configPath, err := loadConfig(opts, ld)
	if err != nil {
		return fail("%v", err)
	}
	var checkPath string
	if opts.Check != "" {
		if checkPath, err = ld.Confine("--check", opts.Check); err != nil {
			return fail("%v", err)
		}
	}
	maxObjects := opts.MaxObjects
	if maxObjects == 0 {
		maxObjects = DefaultMaxObjects
	}
	items, err := readManifests(ld, paths, roots, configPath, in, maxObjects)
	if err != nil {
		return fail("%v", err)
	}
	if len(items) == 0 {
		return fail("no Kubernetes objects found in %s: refusing to print an empty render, which a GitOps engine would take as 'delete everything'",
			strings.Join(paths, ", "))
	}

	output, results := fn.Generate(items, cfg)
	results.Sort()
	if results.ExitCode() != 0 {
		fn.PrintErrors(errOut, results)
		return fn.ErrFailed
	}
	var buf bytes.Buffer
	if err := fastyaml.WriteStream(&buf, output.Kept, output.Services); err != nil {
		return fail("writing the render: %v", err)
	}

	if opts.Check != "" {
		committed, err := ld.ReadConfined("--check", opts.Check, checkPath, checkCeiling)
		if err != nil {
			return fail("%v", err)
		}
		if err := check(opts.Check, committed, buf.Bytes(), errOut); err != nil {
			return err
		}
	} else if _, err := out.Write(buf.Bytes()); err != nil {
		return err
	}
	fn.PrintWarnings(errOut, results)
	return nil
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

// check compares a fresh render with an earlier one, for CI drift checks.
func check(file string, old, fresh []byte, errOut io.Writer) error {
	if bytes.Equal(old, fresh) {
		return nil
	}
	diff, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(string(old)), B: difflib.SplitLines(string(fresh)),
		FromFile: file + " (committed)", ToFile: file + " (fresh render)", Context: 3,
	})
	_, _ = fmt.Fprintf(errOut, "error: %s is out of date with its sources; re-render it with 'flapp-services render' and commit the result:\n%s", file, diff)
	return fn.ErrFailed
}
