package benchdata

import (
	"fmt"
	"strings"
)

// HostileDir holds, under MemoryDir, one kustomization root per family of
// hostile builds (CHANGELOG.md, Security history): the worst the
// default ceilings admit, or, where a family has no admitted form worth
// measuring, its cheapest refusal. make bench-memory runs each as the Argo
// CD sidecar would (GOMEMLIMIT=256MiB), against the sidecar's 640 MiB.
const HostileDir = "hostile-kustomize"

// HostileCase is one family's root.
type HostileCase struct {
	Name   string            // its directory under HostileDir
	Input  string            // what the row calls it
	Args   []string          // render's flags besides the root
	Files  map[string]string // relative path -> content
	Exit   int               // render's exit code
	Reason string            // what render's stderr names, when it fails
	Count  string            // a line render prints Want times, when it succeeds
	Want   int
}

// configMaps is n small ConfigMaps named prefix0, prefix1, ...
func configMaps(n int, prefix string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s%d}\ndata: {k: v}\n", prefix, i)
	}
	return b.String()
}

// HostileCases are the families' roots, in the order the rows list them.
// Each count sits just inside the default ceiling it meets first
// (internal/kustomize: DefaultMaxCost, DefaultMaxBuilds, DefaultMaxOutput,
// and the node ceilings), as its comment works out.
func HostileCases() []HostileCase {
	var cases []HostileCase
	add := func(c HostileCase) { cases = append(cases, c) }

	// Objects: 2n² + 2,000 within 30,000,000 for n = 3,870.
	add(HostileCase{Name: "objects", Input: "3,870 ConfigMaps in one kustomization, just under the build budget",
		Files: map[string]string{"kustomization.yaml": "resources: [r.yaml]\n", "r.yaml": configMaps(3870, "c")},
		Count: "kind: ConfigMap", Want: 3870})

	// Patches over objects: 2·100² + 1,600·100·187 + 2,000 = 29,942,000.
	// Each patch adds a label, so each visit costs more than the last: the
	// estimate admits it, and the deadline (lowered here to keep the row
	// short) stops it.
	var patches strings.Builder
	for j := range 187 {
		fmt.Fprintf(&patches, "- target: {kind: ConfigMap}\n  patch: |\n    apiVersion: v1\n    kind: ConfigMap\n    metadata: {name: any, labels: {p%d: v}}\n", j)
	}
	add(HostileCase{Name: "patches", Input: "187 patches with a selector over 100 ConfigMaps (estimated just under the budget), deadline lowered to 5s: stopped",
		Args:  []string{"--max-build-time=5s"},
		Files: map[string]string{"kustomization.yaml": "resources: [r.yaml]\npatches:\n" + patches.String(), "r.yaml": configMaps(100, "c")},
		Exit:  1, Reason: "--max-build-time"})

	// Output: 100 objects × 2 × (330,000 + 5) bytes = 66,000,000 within
	// 64 MiB.
	add(HostileCase{Name: "annotation", Input: "a 330 kB commonAnnotations value over 100 ConfigMaps, just under the output ceiling",
		Files: map[string]string{"kustomization.yaml": "resources: [r.yaml]\ncommonAnnotations:\n  a: " + strings.Repeat("x", 330000) + "\n", "r.yaml": configMaps(100, "c")},
		Count: "kind: ConfigMap", Want: 100})

	// Aliases: 7 × 11,111 (*l3 expanded) + 12,344 (the anchors' own nodes)
	// + the rest ≈ 90,150 nodes once expanded, within the object ceiling
	// of 100,000, from a file of under 1 kB.
	var anchors strings.Builder
	anchors.WriteString("  l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 4; i++ {
		fmt.Fprintf(&anchors, "  l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 10), ", "))
	}
	anchors.WriteString("  l4: [" + strings.TrimSuffix(strings.Repeat("*l3, ", 7), ", ") + "]\n")
	add(HostileCase{Name: "aliases", Input: "one object of about 90,150 YAML nodes once its aliases are expanded (a 1 kB file), under the object ceiling",
		Files: map[string]string{"kustomization.yaml": "resources: [r.yaml]\n",
			"r.yaml": "apiVersion: example.com/v1\nkind: Bomb\nmetadata: {name: b}\nspec:\n" + anchors.String()},
		Count: "kind: Bomb", Want: 1})

	// The same with one more alias, about 101,260 nodes: refused before the
	// build.
	add(HostileCase{Name: "alias-bomb", Input: "one object of over 100,000 YAML nodes once its aliases are expanded (a 1 kB file): refused",
		Files: map[string]string{"kustomization.yaml": "resources: [r.yaml]\n",
			"r.yaml": "apiVersion: example.com/v1\nkind: Bomb\nmetadata: {name: b}\nspec:\n" + strings.Replace(anchors.String(), "[*l3,", "[*l3, *l3,", 1)},
		Exit: 1, Reason: "--max-object-nodes"})

	// A diamond of bases: 1 + 2 + 4 + ... + 256 + 256 = 767 builds within
	// 1,000, each level under its own name prefix, 256 copies of one
	// ConfigMap at the root.
	diamond := map[string]string{"base/kustomization.yaml": "resources: [r.yaml]\n", "base/r.yaml": configMaps(1, "c")}
	for level := 8; level >= 1; level-- {
		for _, side := range []string{"a", "b"} {
			next := fmt.Sprintf("../l%d", level+1)
			children := fmt.Sprintf("[%sa, %sb]", next, next)
			if level == 8 {
				children = "[../base]"
			}
			diamond[fmt.Sprintf("l%d%s/kustomization.yaml", level, side)] = fmt.Sprintf("namePrefix: %s%d-\nresources: %s\n", side, level, children)
		}
	}
	diamond["kustomization.yaml"] = "resources: [l1a, l1b]\n"
	add(HostileCase{Name: "diamond", Input: "a diamond of kustomizations 8 levels deep (767 builds, 256 of one base under different prefixes)",
		Files: diamond, Count: "kind: ConfigMap", Want: 256})

	// Entries: as many references to one file as 8 MiB holds (932,000),
	// refused before it is parsed (the document's node bound).
	add(HostileCase{Name: "entries", Input: "an 8 MiB kustomization of 932,000 references to one file: refused",
		Files: map[string]string{"kustomization.yaml": "resources:\n" + strings.Repeat("- r.yaml\n", (8<<20-16)/9), "r.yaml": configMaps(1, "c")},
		Exit:  1, Reason: "over the ceiling of"})

	// Transformers: an 8 MiB file of builtin LabelTransformers over 10
	// objects: refused before its configurations are parsed.
	label := "---\napiVersion: builtin\nkind: LabelTransformer\nmetadata: {name: l}\nlabels: {a: b}\nfieldSpecs: [{path: metadata/labels, create: true}]\n"
	add(HostileCase{Name: "transformers", Input: "an 8 MiB file of 62,600 LabelTransformers over 10 ConfigMaps: refused",
		Files: map[string]string{"kustomization.yaml": "resources: [r.yaml]\ntransformers: [t.yaml]\n", "r.yaml": configMaps(10, "c"),
			"t.yaml": strings.Repeat(label, (8<<20-1)/len(label))},
		Exit: 1, Reason: "plugin configurations"})
	return cases
}
