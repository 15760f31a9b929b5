package fn

import (
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
)

// Processor is the KRM function as a framework.ResourceListProcessor, for
// framework.Execute and its test utilities. It materializes every generated
// Service as a node; the binary's drivers (internal/cli) stream them instead.
type Processor struct{}

// Process replaces rl.Items with the pass-through items followed by the fresh
// Services. On any error it leaves rl.Items exactly as they came and returns
// the results: a partial render must never be applied.
func (Processor) Process(rl *framework.ResourceList) error {
	cfg, results := ParseConfig(rl.FunctionConfig)
	if results.ExitCode() != 0 {
		rl.Results = finish(results)
		return rl.Results
	}
	kept, out, results := Generate(rl.Items, cfg)
	rl.Results = results
	if results.ExitCode() != 0 {
		return results
	}
	rl.Items = WithServiceNodes(kept, out.Services())
	return nil
}
