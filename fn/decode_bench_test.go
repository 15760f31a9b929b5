package fn

import (
	"os"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// BenchmarkDecodeFLApp decodes the demo's leader FLApp (three replica types,
// a pod template each): the per-FLApp cost of decoding, without the rest of
// the run.
func BenchmarkDecodeFLApp(b *testing.B) {
	data, err := os.ReadFile("../examples/basic/leader.yaml")
	if err != nil {
		b.Fatal(err)
	}
	node := yaml.MustParse(string(data))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeFLApp(node); err != nil {
			b.Fatal(err)
		}
	}
}
