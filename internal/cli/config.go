package cli

import (
	"fmt"

	"github.com/fedlearner/flapp-services/fn"
	"github.com/fedlearner/flapp-services/internal/repofs"
	"github.com/fedlearner/flapp-services/internal/yamlnodes"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The render's configuration: --config or a ConfigMap, then the flags.

// loadConfig reads --config and applies --owner-references and
// --max-services; it returns the config file's resolved path, which is not
// part of the render.
func loadConfig(opts RenderOptions, ld *repofs.Loader) (fn.Config, string, error) {
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
		// The same node ceilings as any input: the file is the
		// repository's when Argo CD names it (FLAPP_CONFIG).
		if n := yamlnodes.Bound(string(data)); n > opts.MaxDocumentNodes {
			return cfg, "", fmt.Errorf("--config %s may hold up to %d YAML nodes, over the ceiling of %d (--max-document-nodes): a configuration is a few lines", opts.Config, n, opts.MaxDocumentNodes)
		}
		node, err := yaml.Parse(string(data))
		if err != nil {
			return cfg, "", fmt.Errorf("--config %s is not YAML: %w", opts.Config, err)
		}
		if yamlnodes.Expanded(node.YNode(), opts.MaxObjectNodes) > opts.MaxObjectNodes {
			return cfg, "", fmt.Errorf("--config %s has over %d YAML nodes (--max-object-nodes): a configuration is a few lines", opts.Config, opts.MaxObjectNodes)
		}
		parsed, results := fn.ParseConfig(node, fn.Origin{File: opts.Config})
		if results.ExitCode() != 0 {
			return cfg, "", results
		}
		cfg = parsed
	}
	cfg, err := overrides(cfg, opts)
	return cfg, configPath, err
}

// overrides applies --max-services and --owner-references to cfg.
func overrides(cfg fn.Config, opts RenderOptions) (fn.Config, error) {
	if opts.MaxServices != 0 {
		if opts.MaxServices < 0 {
			return cfg, fmt.Errorf("--max-services must be a positive integer, not %d", opts.MaxServices)
		}
		cfg.MaxServices = opts.MaxServices
	}
	if opts.OwnerReferences != "" {
		policy, err := fn.ParseOwnerReferences("--owner-references", opts.OwnerReferences)
		if err != nil {
			return cfg, err
		}
		cfg.OwnerReferences = policy
	}
	return cfg, nil
}
