// Command run is `make bench`: whole-process comparisons of flapp-services
// with a do-nothing kyaml function (bench/noop), measured side by side in one
// run. Each pair of commands is run alternately, -runs times each; the
// report gives medians of wall time and of peak RSS (the kernel's ru_maxrss
// of the process), and their ratios. See BENCHMARKS.md.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

var (
	dataDir   = flag.String("data", ".cache/bench-data", "directory written by bench/gen (make bench-data)")
	bin       = flag.String("bin", "bin/flapp-services", "the function")
	tools     = flag.String("tools", ".cache/bin", "where the baseline and kustomize are built")
	runs      = flag.Int("runs", 5, "runs of each command per comparison")
	startRuns = flag.Int("startup-runs", 20, "runs of the start-up case")
	report    = flag.String("report", ".cache/bench-report.md", "also write the report here")
	skip100k  = flag.Bool("skip-100k", false, "leave out the 100,000-Service run (for a quick look)")
	only      = flag.String("only", "", "run only these sections (comma-separated: compare,scaling,startup,kustomize,corpus,memory)")
	before    = flag.String("before", "", "an earlier build of the function: start-up and discover's memory are measured on it too, in the same rounds")
)

func want(section string) bool {
	return *only == "" || slices.Contains(strings.Split(*only, ","), section)
}

var out bytes.Buffer

// summary collects one line per target for the report's last table.
var summary []string

func target(name, measured, goal string, ok bool) {
	summary = append(summary, fmt.Sprintf("| %s | %s | %s | %s |", name, measured, goal, verdict(ok)))
}

func printf(format string, args ...any) {
	fmt.Fprintf(&out, format, args...)
	fmt.Printf(format, args...)
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "**NOT met**"
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }
func mib(kib int64) string      { return fmt.Sprintf("%.0f MiB", float64(kib)/1024) }

func main() {
	flag.Parse()
	log.SetFlags(0)
	binPath, err := filepath.Abs(*bin)
	check(err)
	beforePath := ""
	if *before != "" {
		beforePath, err = filepath.Abs(*before)
		check(err)
	}
	toolDir, err := filepath.Abs(*tools)
	check(err)
	// Resolved: render refuses a PATH written inside the current directory
	// that leads out of it, and .cache may be a link (in a git worktree).
	data, err := filepath.Abs(*dataDir)
	check(err)
	data, err = filepath.EvalSymlinks(data)
	check(err)
	if want("compare") || want("scaling") || want("startup") || want("kustomize") {
		if _, err := os.Stat(filepath.Join(data, "floor-10k.yaml")); err != nil {
			log.Fatalf("no bench data in %s: run make bench-data", data)
		}
	}

	// The baseline is built here, with the same Go and kyaml as the function.
	noop := filepath.Join(toolDir, "flapp-noop")
	goCmd("build", "-trimpath", "-ldflags", "-s -w", "-o", noop, "./bench/noop")
	kustomize := filepath.Join(toolDir, "kustomize")
	if _, err := os.Stat(kustomize); err != nil && (want("kustomize") || want("corpus") || want("memory")) {
		fmt.Fprintln(os.Stderr, "installing kustomize v5.8.1 into", toolDir)
		cmd := exec.Command("go", "install", "sigs.k8s.io/kustomize/kustomize/v5@v5.8.1")
		cmd.Env = append(os.Environ(), "GOBIN="+toolDir)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		check(cmd.Run())
	}

	fnc := func(name, input string, args ...string) command {
		c := command{name: name, argv: append([]string{binPath}, args...)}
		if input != "" {
			c.stdin = filepath.Join(data, input)
		}
		return c
	}
	floor := func(input string) command {
		return command{name: "noop", argv: []string{noop}, stdin: filepath.Join(data, input)}
	}

	printf("# flapp-services benchmark\n\n")
	printf("- date: %s\n", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	printf("- machine: %d cores (nproc), %s, %s\n", runtime.NumCPU(), cpuModel(), memTotal())
	printf("- Go: %s; kyaml v0.21.2; kustomize %s\n", goVersion(), kustomizeVersion(kustomize))
	printf("- load average at start: %s\n", loadAvg())
	printf("- method: each comparison runs the two commands alternately, %d times each; medians; wall time and peak RSS (ru_maxrss); stdout to /dev/null\n\n", *runs)

	type row struct {
		name       string
		a, b       stats
		target     float64
		timeOK     bool
		memOK      bool
		timeR, mem float64
	}
	var rows []row
	cmp := func(name string, a, b command, target float64) {
		fmt.Fprintln(os.Stderr, name)
		as, bs := compare(a, b, *runs)
		r := row{name: name, a: as, b: bs, target: target,
			timeR: float64(as.wall) / float64(bs.wall), mem: float64(as.rss) / float64(bs.rss)}
		r.timeOK, r.memOK = r.timeR <= target, r.mem <= target
		rows = append(rows, r)
	}
	if want("compare") {
		cmp("KRM: 500 FLApps -> 10,000 Services", fnc("flapp-services", "krm-10k.yaml"), floor("floor-10k.yaml"), 0.5)
		cmp("kpt: 500 FLApps + previous 10,000 Services", fnc("flapp-services", "kpt-10k.yaml"), floor("kpt-10k.yaml"), 1.0)
		cmp("render: 500 FLApp files -> 10,000 Services", fnc("flapp-services render", "", "render", filepath.Join(data, "render-10k")), floor("floor-10k.yaml"), 0.5)
	}

	if want("compare") {
		printf("## Against the do-nothing kyaml function\n\n")
		printf("Baseline: `bench/noop` (framework.Execute, empty processor) reading and writing the function's own output for the same input (`floor-10k.yaml`, %s), or the same input for the kpt case.\n\n", size(filepath.Join(data, "floor-10k.yaml")))
		printf("| case | flapp-services | baseline | time ratio | memory ratio | target | |\n|---|---|---|---|---|---|---|\n")
		for _, r := range rows {
			printf("| %s | %s, %s | %s, %s | **%.2f×** | **%.2f×** | ≤ %.1f× | %s |\n", r.name,
				ms(r.a.wall), mib(r.a.rss), ms(r.b.wall), mib(r.b.rss), r.timeR, r.mem, r.target, verdict(r.timeOK && r.memOK))
			target(r.name+": time / memory vs baseline", fmt.Sprintf("%.2f× / %.2f×", r.timeR, r.mem), fmt.Sprintf("≤ %.1f× each", r.target), r.timeOK && r.memOK)
		}

	}
	if want("scaling") {
		// Scaling: KRM mode at 1k, 10k, 100k Services, interleaved round by
		// round (the short runs several times per round) so that every size
		// sees the same machine load.
		sizes := []struct {
			n     int
			file  string
			times int
		}{{1000, "krm-1k.yaml", 3}, {10000, "krm-10k.yaml", 1}, {100000, "krm-100k.yaml", 1}}
		if *skip100k {
			sizes = sizes[:2]
		}
		samples := make([][]sample, len(sizes))
		for r := 0; r < *runs; r++ {
			for k := range sizes {
				j := (k + r) % len(sizes)
				for t := 0; t < sizes[j].times; t++ {
					samples[j] = append(samples[j], fnc("flapp-services", sizes[j].file).run())
				}
			}
			fmt.Fprintf(os.Stderr, "  scaling round %d done\n", r+1)
		}
		printf("\n## Scaling (KRM mode, FLApps in, Services out)\n\n")
		printf("Runs interleaved: in each of %d rounds the sizes run in rotating order, 1k three times.\n\n", *runs)
		printf("| Services | input | runs | wall (median) | per Service | CPU (user+sys) per Service | peak RSS | RSS per Service |\n|---|---|---|---|---|---|---|---|\n")
		var perWall, perCPU []float64
		for j, sz := range sizes {
			st := median(samples[j])
			w := float64(st.wall) / float64(time.Microsecond) / float64(sz.n)
			c := float64(st.cpu) / float64(time.Microsecond) / float64(sz.n)
			perWall, perCPU = append(perWall, w), append(perCPU, c)
			printf("| %d | %s | %d | %s | %.1f µs | %.1f µs | %s | %.1f KiB |\n", sz.n, size(filepath.Join(data, sz.file)), st.n, ms(st.wall), w, c, mib(st.rss), float64(st.rss)/float64(sz.n))
		}
		last := len(sizes) - 1
		scale := perWall[last] / perWall[0]
		printf("\nPer-Service wall time at %dk / at 1k: **%.2f×** (target ≤ 1.3×): %s; per-Service CPU time: %.2f× (at %dk / at 10k: %.2f×)\n",
			sizes[last].n/1000, scale, verdict(scale <= 1.3), perCPU[last]/perCPU[0], sizes[last].n/1000, perCPU[last]/perCPU[1])
		target(fmt.Sprintf("per-Service cost, %dk / 1k", sizes[last].n/1000), fmt.Sprintf("%.2f× (wall), %.2f× (CPU)", scale, perCPU[last]/perCPU[0]), "≤ 1.3×", scale <= 1.3)

	}
	if want("startup") {
		// Start-up, alternating with the baseline (and the earlier build).
		fmt.Fprintln(os.Stderr, "start-up")
		cmds := []command{fnc("flapp-services", "empty.yaml"), floor("empty.yaml")}
		if beforePath != "" {
			cmds = append(cmds, command{name: "before", argv: []string{beforePath}, stdin: filepath.Join(data, "empty.yaml")})
		}
		res := compareAll(cmds, *startRuns)
		st, nst := res[0], res[1]
		msf := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
		printf("\n## Start-up\n\nEmpty ResourceList, median of %d runs (alternating with the baseline): flapp-services **%.1f ms** wall, %.1f ms CPU, %s (baseline %.1f ms wall, %.1f ms CPU) (target < 10 ms): %s\n",
			*startRuns, msf(st.wall), msf(st.cpu), mib(st.rss), msf(nst.wall), msf(nst.cpu), verdict(st.wall < 10*time.Millisecond))
		if beforePath != "" {
			bst := res[2]
			printf("\nThe earlier build (%s), in the same rotation: %.1f ms wall, %.1f ms CPU, %s. Binary sizes: %s and %s (before).\n",
				strings.TrimSpace(output(beforePath, "version")), msf(bst.wall), msf(bst.cpu), mib(bst.rss), size(binPath), size(beforePath))
		}
		target(fmt.Sprintf("start-up, empty ResourceList (median of %d)", *startRuns), fmt.Sprintf("%.1f ms (baseline %.1f ms)", float64(st.wall)/float64(time.Millisecond), float64(nst.wall)/float64(time.Millisecond)), "< 10 ms", st.wall < 10*time.Millisecond)

	}
	if want("kustomize") {
		// kustomize.
		fmt.Fprintln(os.Stderr, "kustomize")
		kust := func(dir string, alpha bool) command {
			argv := []string{kustomize, "build"}
			if alpha {
				argv = append(argv, "--enable-alpha-plugins", "--enable-exec")
			}
			return command{name: "kustomize " + dir, argv: append(argv, filepath.Join(data, dir))}
		}
		withFn, alone := compare(kust("kustomize-1k", true), fnc("flapp-services", "krm-1k.yaml"), *runs)
		flapps, plain := compare(kust("kustomize-1k-flapps", false), kust("kustomize-1k-plain", false), *runs)
		printf("\n## Through kustomize (transformer, 50 FLApps -> 1,000 Services)\n\n")
		printf("| command | wall (median of %d) |\n|---|---|\n", *runs)
		printf("| `kustomize build --enable-alpha-plugins --enable-exec` with the function as transformer | %s |\n", ms(withFn.wall))
		printf("| the function alone on the same 50 FLApps (ResourceList on stdin) | %s |\n", ms(alone.wall))
		printf("| `kustomize build` of the 50 FLApps, no transformer | %s |\n", ms(flapps.wall))
		printf("| `kustomize build` of the rendered output (FLApps + 1,000 Services) as plain resources | %s |\n", ms(plain.wall))
		printf("\nThe function's own share of the transformer build: **%.0f%%** (%s of %s); the rest is kustomize handling 1,000 more resources.\n",
			100*float64(alone.wall)/float64(withFn.wall), ms(alone.wall), ms(withFn.wall))
		summary = append(summary, fmt.Sprintf("| function's share of `kustomize build` (1,000 Services) | %.0f%% | reported | — |", 100*float64(alone.wall)/float64(withFn.wall)))

	}
	if want("corpus") {
		fmt.Fprintln(os.Stderr, "kustomize corpus")
		corpus(binPath, kustomize, data, *runs)
	}
	if want("memory") {
		fmt.Fprintln(os.Stderr, "memory budgets")
		memoryBudgets(binPath, beforePath, noop, kustomize, data, *runs)
	}
	if len(summary) > 0 {
		printf("\n## Targets\n\n| target | measured | goal | |\n|---|---|---|---|\n%s\n", strings.Join(summary, "\n"))
	}
	printf("\n- load average at end: %s\n", loadAvg())
	if *report != "" {
		check(os.MkdirAll(filepath.Dir(*report), 0o755))
		check(os.WriteFile(*report, out.Bytes(), 0o644))
		fmt.Fprintln(os.Stderr, "report written to", *report)
	}
	if budgetMissed {
		log.Fatal("a memory budget is not met")
	}
	if corpusFailed {
		log.Fatal("a root of the kustomize corpus failed to build, or its two builds disagree")
	}
}
