package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fedlearner/flapp-services/fn"
	"github.com/fedlearner/flapp-services/internal/fastyaml"
	"github.com/pmezard/go-difflib/difflib"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// RenderOptions are the flags of `flapp-services render`.
type RenderOptions struct {
	Config          string // function config file
	OwnerReferences string // overrides the config's policy when set
	Check           string // compare with this earlier render instead of printing
	Paths           []string
}

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

	output, results := fn.Generate(items, cfg)
	if results.ExitCode() != 0 {
		results.Sort()
		fn.PrintErrors(errOut, results)
		return fn.ErrFailed
	}
	var buf bytes.Buffer
	if err := fastyaml.WriteStream(&buf, output.Kept, output.Services); err != nil {
		return fail("writing the render: %v", err)
	}

	if opts.Check != "" {
		return check(opts.Check, buf.Bytes(), errOut)
	}
	_, err = out.Write(buf.Bytes())
	return err
}

// loadConfig reads --config and applies --owner-references; it returns the
// config file's absolute path, which is not part of the render.
func loadConfig(opts RenderOptions) (fn.Config, string, error) {
	cfg := fn.DefaultConfig()
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
		parsed, results := fn.ParseConfig(node)
		if results.ExitCode() != 0 {
			return cfg, "", fmt.Errorf("--config %s: %s", opts.Config, results[0].Message)
		}
		cfg = parsed
		if configPath, err = filepath.Abs(opts.Config); err != nil {
			return cfg, "", err
		}
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
func check(file string, fresh []byte, errOut io.Writer) error {
	old, err := os.ReadFile(file)
	if err != nil {
		_, _ = fmt.Fprintf(errOut, "error: --check: %v\n", err)
		return fn.ErrFailed
	}
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
