package fn

import (
	"github.com/fedlearner/flapp-services/internal/fastyaml"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Processor is the KRM function as a framework.ResourceListProcessor.
type Processor struct{}

// Process replaces rl.Items with the pass-through items followed by the fresh
// Services. On any error it leaves rl.Items exactly as they came and returns
// the results: a partial render must never be applied.
func (Processor) Process(rl *framework.ResourceList) error {
	services, err := generateFor(rl)
	if err != nil {
		return err
	}
	rl.Items = fastyaml.WithServiceNodes(rl.Items, services)
	return nil
}

// generateFor is Process without the last step: on success rl.Items holds
// only the kept items and the generated Services are returned typed, for
// fastyaml to write (a fastyaml.Generator).
func generateFor(rl *framework.ResourceList) ([]corev1.Service, error) {
	cfg, results := ParseConfig(rl.FunctionConfig)
	var out *Output
	if results.ExitCode() == 0 {
		var generateResults framework.Results
		out, generateResults = Generate(rl.Items, cfg)
		results = append(results, generateResults...)
	}
	results.Sort()
	rl.Results = results
	if results.ExitCode() != 0 {
		return nil, results
	}
	rl.Items = out.Kept
	return out.Services, nil
}

// Output is a successful run: the items kept as they came, in input order,
// and the freshly generated Services, sorted.
type Output struct {
	Kept     []*yaml.RNode
	Services []corev1.Service
}
