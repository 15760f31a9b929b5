package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"log"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fedlearner/flapp-services/bench/benchdata"
)

// The kustomize corpus: every root built by kustomize with the function as
// its exec transformer and by `flapp-services render`, side by side.

// corpusFailed is set when a root's build fails or the two builds disagree;
// the run then exits 1, once the report is written.
var corpusFailed bool

// built is what the runs of one command on one root measured, and the
// objects its first successful run printed, by kind.
type built struct {
	outcome
	kinds map[string]int
}

// measure runs c once, counting the objects it prints.
func (b *built) measure(c command) sample {
	counter := &kindCounter{kinds: map[string]int{}}
	s, code, stderr, err := c.exec(counter)
	if err != nil {
		log.Fatal(err)
	}
	counter.finish()
	wrong := ""
	switch {
	case code != 0:
		wrong = fmt.Sprintf("exit code %d: %s", code, tail(stderr, 300))
	case b.kinds == nil:
		b.kinds = counter.kinds
	case !maps.Equal(b.kinds, counter.kinds):
		wrong = fmt.Sprintf("printed %s, and %s in an earlier run", objects(counter.kinds), objects(b.kinds))
	}
	b.add(s, wrong)
	return s
}

func (b *built) wall() time.Duration { return median(b.samples).wall }
func (b *built) cpu() time.Duration  { return median(b.samples).cpu }

func corpus(bin, kustomize, data string, runs int) {
	dir := filepath.Join(data, benchdata.CorpusDir)
	checkCorpus(dir, bin)
	roots := benchdata.CorpusRoots()
	kust := make([]built, len(roots))
	rend := make([]built, len(roots))
	for r := 0; r < runs; r++ {
		for i, root := range roots {
			k := command{name: "kustomize " + root.Root, dir: dir,
				argv: []string{kustomize, "build", "--enable-alpha-plugins", "--enable-exec", root.Root}}
			f := command{name: "render " + root.Root, dir: dir,
				argv: append(append([]string{bin, "render"}, root.Args...), root.Root)}
			steps := []func() sample{func() sample { return kust[i].measure(k) }, func() sample { return rend[i].measure(f) }}
			if (r+i)%2 == 1 {
				steps[0], steps[1] = steps[1], steps[0]
			}
			steps[0]()
			steps[1]()
			ks, fs := kust[i].samples[r], rend[i].samples[r]
			fmt.Fprintf(os.Stderr, "  %s: kustomize %v (%v CPU), render %v (%v CPU)\n", root.Root,
				ks.wall.Round(time.Millisecond), ks.cpu.Round(time.Millisecond), fs.wall.Round(time.Millisecond), fs.cpu.Round(time.Millisecond))
		}
		fmt.Fprintf(os.Stderr, "  corpus round %d done\n", r+1)
	}

	printf("\n## Kustomize corpus: render against kustomize\n\n")
	printf("%d kustomization roots laid out as teams lay them out (`bench/gen`, `benchdata.CorpusRoots`, in `%s/`): bases, overlays, components, ", len(roots), benchdata.CorpusDir)
	printf("operator installs of 200 CRDs, patches with selectors, generators with hash suffixes, replacements; each runs flapp-services as its exec transformer. ")
	printf("Each root is built by `kustomize build --enable-alpha-plugins --enable-exec ROOT` (kustomize %s, which execs the function) ", kustomizeVersion(kustomize))
	printf("and by `flapp-services render ROOT` (kustomize's API in process; run from the corpus directory, so that every base is inside the current directory), ")
	printf("alternately, %s each, every root in each round. The table gives median wall times, median CPU times (user + system, with the children's: kustomize's includes the function it execs), ", times(runs))
	printf("and render's wall time over kustomize's. Every run's exit code is checked, and both builds must print the same objects (counted by kind); ")
	printf("a root that fails either check is marked failed, and the run exits 1 once the report is written.\n\n")
	printf("| root | what | objects | kustomize | render | ratio | |\n|---|---|---|---|---|---|---|\n")
	var ratios, cpuRatios []float64
	worst, failed := -1, 0
	for i, root := range roots {
		k, f := &kust[i], &rend[i]
		var problems []string
		if k.wrong != "" {
			problems = append(problems, "kustomize: "+k.wrong)
		}
		if f.wrong != "" {
			problems = append(problems, "render: "+f.wrong)
		}
		if k.kinds != nil && f.kinds != nil && !maps.Equal(k.kinds, f.kinds) {
			problems = append(problems, fmt.Sprintf("kustomize printed %s, render %s", objects(k.kinds), objects(f.kinds)))
		}
		ratio := float64(f.wall()) / float64(k.wall())
		ratios = append(ratios, ratio)
		cpuRatios = append(cpuRatios, float64(f.cpu())/float64(k.cpu()))
		if worst < 0 || ratio > ratios[worst] {
			worst = i
		}
		v := "ok"
		if len(problems) > 0 {
			failed++
			corpusFailed = true
			v = "**failed** (" + strings.NewReplacer("\n", " ", "|", "\\|").Replace(strings.Join(problems, "; ")) + ")"
		}
		kinds := k.kinds
		if kinds == nil {
			kinds = f.kinds
		}
		printf("| `%s` | %s | %s | %s, %.1f s CPU | %s, %.1f s CPU | **%.2f×** | %s |\n", root.Root, root.Input, objects(kinds),
			ms(k.wall()), k.cpu().Seconds(), ms(f.wall()), f.cpu().Seconds(), ratio, v)
	}
	med, medCPU := medianOf(ratios), medianOf(cpuRatios)
	medOK, maxOK := med <= 0.5 && failed == 0, ratios[worst] < 1.0 && failed == 0
	note := ""
	if failed > 0 {
		note = fmt.Sprintf(" (%d of %d roots failed)", failed, len(roots))
	}
	printf("\nMedian ratio over the %d roots: **%.2f×** (target ≤ 0.5×): %s%s. Highest: **%.2f×** (`%s`; target < 1.0×, never slower than kustomize): %s%s. ",
		len(roots), med, verdict(medOK), note, ratios[worst], roots[worst].Root, verdict(maxOK), note)
	printf("CPU time, render over kustomize: median %.2f×, highest %.2f×.\n", medCPU, slices.Max(cpuRatios))
	target(fmt.Sprintf("kustomize corpus (%d roots): render / kustomize build, median wall time", len(roots)), fmt.Sprintf("%.2f×", med), "≤ 0.5×", medOK)
	target(fmt.Sprintf("kustomize corpus (%d roots): render / kustomize build, highest wall time", len(roots)), fmt.Sprintf("%.2f× (`%s`)", ratios[worst], roots[worst].Root), "< 1.0×", maxOK)
}

// checkCorpus stops the run unless dir holds the corpus, its entries
// running bin: kustomize must exec the binary that render runs as.
func checkCorpus(dir, bin string) {
	if _, err := os.Stat(filepath.Join(dir, benchdata.CorpusRoots()[0].Root)); err != nil {
		log.Fatalf("no kustomize corpus in %s: run make bench-data", dir)
	}
	want := []byte("path: " + bin + "\n")
	check(filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() != "flapp-services.yaml" {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !bytes.Contains(b, want) {
			return fmt.Errorf("%s does not exec %s (-bin): run bench/gen with the same -bin", path, bin)
		}
		return nil
	}))
}

// kindCounter counts the objects of a YAML stream by kind: its lines that
// start with "kind: " at the first column (a kustomize build and a render
// print one document per object, block style).
type kindCounter struct {
	kinds   map[string]int
	partial []byte
}

func (c *kindCounter) Write(p []byte) (int, error) {
	data := p
	if len(c.partial) > 0 {
		data = append(append([]byte(nil), c.partial...), p...)
	}
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			c.partial = append(c.partial[:0:0], data...)
			return len(p), nil
		}
		c.match(data[:i])
		data = data[i+1:]
	}
}

func (c *kindCounter) finish() {
	if len(c.partial) > 0 {
		c.match(c.partial)
		c.partial = nil
	}
}

func (c *kindCounter) match(line []byte) {
	if kind, ok := bytes.CutPrefix(line, []byte("kind: ")); ok {
		c.kinds[string(bytes.TrimSpace(kind))]++
	}
}

// objects says how many objects kinds holds, and of which kinds, the most
// frequent first.
func objects(kinds map[string]int) string {
	if kinds == nil {
		return "—"
	}
	total := 0
	names := slices.Collect(maps.Keys(kinds))
	for _, n := range kinds {
		total += n
	}
	slices.SortFunc(names, func(a, b string) int {
		if kinds[a] != kinds[b] {
			return kinds[b] - kinds[a]
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%d %s", kinds[n], n))
	}
	if len(parts) > 3 {
		parts = append(parts[:3], fmt.Sprintf("%d other", total-kinds[names[0]]-kinds[names[1]]-kinds[names[2]]))
	}
	return fmt.Sprintf("%d (%s)", total, strings.Join(parts, ", "))
}

// medianOf is the median of xs (the mean of the middle two for an even
// count).
func medianOf(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// tail is the last n bytes of s, trimmed.
func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		s = "…" + s[len(s)-n:]
	}
	return s
}
