package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fedlearner/flapp-services/bench/benchdata"
)

// The memory budgets: peak RSS of the whole process for the largest inputs
// the default ceilings admit (or must refuse cheaply), each against a fixed
// ceiling or against the do-nothing kyaml function echoing the same input.

// budgetMissed is set when a budget is not met; the run then exits 1.
var budgetMissed bool

// expect is what a correct run of a command prints. With no counts and no
// claim, stdout stays empty.
type expect struct {
	exit   int     // the exit code
	counts []count // lines counted in stdout (see lineCounter)
	claim  string  // discover: stdout is one line, and it starts with this
	reason string  // what stderr must name
}

// count is a line and how many times a correct run prints it.
type count struct {
	line string
	want int
}

// budget is one row: a command, what a correct run prints, and its ceiling.
type budget struct {
	input, mode string
	cmd         command
	expect
	ceiling  int64     // KiB; 0 means the baseline's peak in the same rounds
	baseline *baseline // what the row is compared with when ceiling is 0
	before   bool      // also run on -before, when given (discover)
}

// baseline is another program doing the same job, measured beside its row.
type baseline struct {
	what string // the budget, as the table says it
	cmd  command
	expect
}

// outcome is what the runs of a command measured.
type outcome struct {
	samples []sample
	wrong   string // the first run whose output was not the expected one
}

func (o *outcome) add(s sample, wrong string) {
	o.samples = append(o.samples, s)
	if wrong != "" && o.wrong == "" {
		o.wrong = wrong
	}
}

func (o outcome) peak() int64 {
	peak := int64(0)
	for _, s := range o.samples {
		peak = max(peak, s.rss)
	}
	return peak
}

func (o outcome) cpu() time.Duration {
	cpus := make([]time.Duration, len(o.samples))
	for i, s := range o.samples {
		cpus[i] = s.cpu
	}
	slices.Sort(cpus)
	return cpus[len(cpus)/2]
}

// verdict is the last column: met or not, and what was wrong with a run.
func (o outcome) verdict(ok bool) string {
	v := verdict(ok)
	if o.wrong != "" {
		v += " (" + strings.NewReplacer("\n", " ", "|", "\\|").Replace(o.wrong) + ")"
	}
	return v
}

// The Argo CD sidecar of examples/argocd: its memory limit (KiB) and its
// GOMEMLIMIT.
const (
	sidecarLimit      = 640 << 10
	sidecarGOMEMLIMIT = "GOMEMLIMIT=256MiB"
)

func memoryBudgets(bin, before, noop, kustomize, data string, runs int) {
	dir := filepath.Join(data, benchdata.MemoryDir)
	if _, err := os.Stat(filepath.Join(dir, benchdata.OverlayDir)); err != nil {
		fmt.Fprintf(os.Stderr, "no memory-budget inputs in %s: run make bench-data (or make bench-memory)\n", dir)
		os.Exit(1)
	}
	in := func(name string) string { return filepath.Join(dir, name) }
	// Counted in the files rather than generated again: this process's own
	// peak RSS is the floor of every measurement (see runnerPeak).
	objects := countLines(in(benchdata.SmallObjectFile), "kind: ConfigMap")
	items := countLines(in(benchdata.EmptyListFile), "{}")
	mentioning := countLines(in(benchdata.MentioningFile), "kind: ConfigMap")
	services := benchdata.ManyFiles * benchdata.ServicesPerFLApp
	wide := benchdata.WideCount * benchdata.WideServicesPerFLApp
	servicesOf := func(n int) []count { return []count{{"kind: Service", n}} }
	lists := countLines(in(benchdata.ListsFile), "kind: List")

	inputs := struct{ many, wide, small, list, wideKRM, manyKRM string }{
		many:    fmt.Sprintf("%s Services from %s FLApp files (%d Services each)", thousands(services), thousands(benchdata.ManyFiles), benchdata.ServicesPerFLApp),
		wide:    fmt.Sprintf("%s Services from a %s file (%d FLApps × %s replicas)", thousands(wide), kb(in(benchdata.WideFile)), benchdata.WideCount, thousands(benchdata.WideServicesPerFLApp)),
		small:   fmt.Sprintf("one %s file of %s small ConfigMaps", mibFile(in(benchdata.SmallObjectFile)), thousands(objects)),
		list:    fmt.Sprintf("one %s `v1 List` of %s `- {}` items", mibFile(in(benchdata.EmptyListFile)), thousands(items)),
		wideKRM: fmt.Sprintf("%s Services from %d FLApps (ResourceList on stdin, %s)", thousands(wide), benchdata.WideCount, kb(in(benchdata.WideKRMFile))),
		manyKRM: fmt.Sprintf("%s Services from %s FLApps (ResourceList on stdin, %s)", thousands(services), thousands(benchdata.ManyFiles), size(in(benchdata.ManyKRMFile))),
	}
	run := func(args ...string) command {
		return command{name: strings.Join(args, " "), argv: append([]string{bin}, args...)}
	}
	discover := func(input, path string, e expect) budget {
		return budget{input: input, mode: "discover", cmd: run("discover", path), expect: e, ceiling: 128 << 10, before: true}
	}
	claim := func(file string) expect { return expect{claim: "FLApp in " + file} }
	rows := []budget{
		{input: inputs.many, mode: "render", cmd: run("render", in(benchdata.ManyFilesDir)),
			expect: expect{counts: servicesOf(services)}, ceiling: 256 << 10},
		{input: inputs.wide, mode: "render", cmd: run("render", in(benchdata.WideFile)),
			expect: expect{counts: servicesOf(wide)}, ceiling: 64 << 10},
		{input: inputs.small, mode: "render", cmd: run("render", in(benchdata.SmallObjectFile)),
			expect: expect{counts: []count{{"kind: ConfigMap", objects}}}, ceiling: 256 << 10},
		{input: inputs.list + ": refused (exit 1)", mode: "render", cmd: run("render", in(benchdata.EmptyListFile)),
			expect: expect{exit: 1, reason: "--max-document-nodes"}, ceiling: 128 << 10},
		{input: inputs.wideKRM, mode: "KRM", cmd: command{name: "KRM wide", argv: []string{bin}, stdin: in(benchdata.WideKRMFile)},
			expect: expect{counts: servicesOf(wide)}, ceiling: 64 << 10},
		{input: inputs.manyKRM, mode: "KRM", cmd: command{name: "KRM many", argv: []string{bin}, stdin: in(benchdata.ManyKRMFile)},
			expect: expect{counts: servicesOf(services)},
			baseline: &baseline{what: "kyaml echoing it", cmd: command{name: "noop", argv: []string{noop}, stdin: in(benchdata.ManyKRMFile)},
				expect: expect{counts: []count{{"kind: FLApp", benchdata.ManyFiles}}}}},
		discover(inputs.many+": claimed", in(benchdata.ManyFilesDir), claim(in(filepath.Join(benchdata.ManyFilesDir, benchdata.AppName(0)+".yaml")))),
		discover(inputs.wide+": claimed", in(benchdata.WideFile), claim(in(benchdata.WideFile))),
		discover(inputs.small+": no FLApp", in(benchdata.SmallObjectFile), expect{}),
		discover(inputs.list+": no FLApp", in(benchdata.EmptyListFile), expect{}),
		discover(fmt.Sprintf("one %s file of %s small ConfigMaps that mention FLApp, its one FLApp last: claimed", mibFile(in(benchdata.MentioningFile)), thousands(mentioning)),
			in(benchdata.MentioningFile), claim(in(benchdata.MentioningFile))),
		discover("the "+kb(in(benchdata.WideKRMFile))+" ResourceList of 10 FLApps, as a file: claimed", in(benchdata.WideKRMFile), claim(in(benchdata.WideKRMFile))),
		discover("the "+size(in(benchdata.ManyKRMFile))+" ResourceList of 5,000 FLApps, as a file: refused (exit 1)", in(benchdata.ManyKRMFile),
			expect{exit: 1, reason: "--max-file-size"}),
		discover(fmt.Sprintf("one %s file of %d `v1 List`s at the document node bound, each of %d ConfigMaps at the object node bound that mention FLApp; "+
			"its one FLApp is the last item: claimed", mibFile(in(benchdata.ListsFile)), lists, benchdata.ListObjects), in(benchdata.ListsFile), claim(in(benchdata.ListsFile))),
		{input: fmt.Sprintf("a kustomize overlay (namespace, patch, flapp-services as its transformer) of a base of %s FLApp files -> %s Services",
			thousands(benchdata.OverlayFLApps), thousands(benchdata.OverlayFLApps*benchdata.ServicesPerFLApp)),
			// Run from the repository's root, as Argo CD runs it: the
			// build reads only inside the current directory. Its estimated
			// cost is over the default build budget (SECURITY.md, the cost
			// model), and it runs past the default deadline: the row raises both,
			// as a team with such a build must.
			mode: "render (kustomize build)", cmd: command{name: "render overlay", argv: []string{bin, "render", "--max-build-cost=120000000", "--max-build-time=10m", "--max-cpu-time=20m", "--max-memory=1Gi", "overlay"}, dir: in(benchdata.OverlayDir)},
			expect: expect{counts: []count{{"kind: Service", benchdata.OverlayFLApps * benchdata.ServicesPerFLApp},
				{"namespace: " + benchdata.OverlayNamespace, benchdata.OverlayFLApps * (1 + benchdata.ServicesPerFLApp)}}},
			baseline: &baseline{what: "kustomize building it", cmd: command{name: "kustomize build", argv: []string{kustomize, "build", in(filepath.Join(benchdata.OverlayDir, "overlay-plain"))}},
				expect: expect{counts: []count{{"kind: FLApp", benchdata.OverlayFLApps}, {"namespace: " + benchdata.OverlayNamespace, benchdata.OverlayFLApps}}}}},
	}
	// The hostile kustomize families, as the Argo CD sidecar runs them:
	// render against its memory limit, discover against its own budget.
	for _, c := range benchdata.HostileCases() {
		root := in(filepath.Join(benchdata.HostileDir, c.Name))
		e := expect{exit: c.Exit, reason: c.Reason}
		if c.Count != "" {
			e.counts = []count{{c.Count, c.Want}}
		}
		argv := append(append([]string{bin, "render"}, c.Args...), ".")
		rows = append(rows,
			budget{input: "hostile: " + c.Input, mode: "render (kustomize build)", expect: e, ceiling: sidecarLimit,
				cmd: command{name: "render " + c.Name, argv: argv, dir: root, env: []string{sidecarGOMEMLIMIT}}},
			budget{input: "hostile: " + c.Input, mode: "discover", expect: expect{}, ceiling: 128 << 10,
				cmd: command{name: "discover " + c.Name, argv: []string{bin, "discover", "."}, dir: root, env: []string{sidecarGOMEMLIMIT}}})
	}

	// Rows run round by round, so every row sees the same machine load; a
	// row's baseline and its run on -before run beside it, alternating which
	// goes first.
	outcomes := make([]outcome, len(rows))
	baselines := make([]outcome, len(rows))
	befores := make([]outcome, len(rows))
	for r := 0; r < runs; r++ {
		for i, row := range rows {
			var steps []func()
			steps = append(steps, func() {
				outcomes[i].add(measureRow(row.cmd, row.expect))
				s := outcomes[i].samples[r]
				fmt.Fprintf(os.Stderr, "  %s: %s, %v CPU\n", row.cmd.name, mib(s.rss), s.cpu.Round(time.Millisecond))
			})
			if row.baseline != nil {
				steps = append(steps, func() { baselines[i].add(measureRow(row.baseline.cmd, row.baseline.expect)) })
			}
			if row.before && before != "" {
				c := row.cmd
				c.argv = append([]string{before}, c.argv[1:]...)
				steps = append(steps, func() { befores[i].add(measureRow(c, row.expect)) })
			}
			for k := range steps {
				steps[(k+r)%len(steps)]()
			}
		}
		fmt.Fprintf(os.Stderr, "  memory round %d done\n", r+1)
	}

	printf("\n## Memory budgets\n\n")
	printf("Peak RSS of the whole process, for the largest inputs the default ceilings admit and for one they must refuse cheaply. ")
	printf("The inputs are generated by `bench/gen` (`.cache/bench-data/memory/`); `make bench-memory` runs this section alone. ")
	printf("Each command runs %s, stdin from the input file where the mode reads one, the rows interleaved round by round; ", times(runs))
	printf("the table gives the highest peak RSS of the runs (the kernel's `ru_maxrss` from `wait4`) and the median CPU time (user + system). ")
	printf("Every run's output is checked: its exit code; the number of Services (or ConfigMaps) printed, and for the overlay the number of objects in its namespace; ")
	printf("for a refusal, nothing on stdout and the ceiling that refused it named on stderr; for `discover`, the one line that claims the input and names the file holding the FLApp, or nothing. ")
	printf("`discover` runs on every input above, plus the worst file it must parse. ")
	printf("The KRM row's budget is the peak of the do-nothing kyaml function (`bench/noop`) echoing the same ResourceList; ")
	printf("the overlay's is the peak of kustomize %s building the same overlay without the transformer entry (the build alone: flapp-services also renders the Services). ", kustomizeVersion(kustomize))
	printf("Each is measured alternately with its row in the same rounds.\n\n")
	printf("| input | mode | peak RSS | budget | CPU | |\n|---|---|---|---|---|---|\n")
	for i, row := range rows {
		o := outcomes[i]
		ceiling, budgetText := row.ceiling, "≤ "+mib(row.ceiling)
		ok := o.wrong == ""
		if row.baseline != nil {
			ceiling = baselines[i].peak()
			budgetText = fmt.Sprintf("≤ %s: %s", row.baseline.what, mib(ceiling))
			ok = ok && baselines[i].wrong == ""
		}
		ok = ok && o.peak() <= ceiling
		if !ok {
			budgetMissed = true
		}
		v := o.verdict(ok)
		if row.baseline != nil && baselines[i].wrong != "" {
			v += " (baseline: " + baselines[i].verdict(false) + ")"
		}
		printf("| %s | %s | %s | %s | %.1f s | %s |\n", row.input, row.mode, mib(o.peak()), budgetText, o.cpu().Seconds(), v)
		target(fmt.Sprintf("memory, %s: %s", row.mode, row.input), mib(o.peak()), budgetText, ok)
	}
	printf("\n")
	for i, row := range rows {
		if row.baseline != nil {
			printf("%s (%s): %s peak RSS, %.1f s CPU (median). ", row.baseline.what, row.baseline.cmd.name, mib(baselines[i].peak()), baselines[i].cpu().Seconds())
		}
	}
	printf("Each peak includes the measuring process's own (%s): Go starts a command with vfork, and the kernel counts the parent's high-water RSS into the child's `ru_maxrss` at exec.\n", mib(runnerPeak()))

	if before != "" {
		printf("\n`discover` on the same inputs, in the same rounds: before (%s, `%s`) and after (%s); ", strings.TrimSpace(output(before, "version")), before, strings.TrimSpace(output(bin, "version")))
		printf("the highest peak RSS of the runs, and the median CPU time. The same output checks hold for both.\n\n")
		printf("| input | before | after |\n|---|---|---|\n")
		for i, row := range rows {
			if row.before {
				b, a := befores[i], outcomes[i]
				printf("| %s | %s, %.1f s%s | %s, %.1f s |\n", row.input, mib(b.peak()), b.cpu().Seconds(), wrongNote(b), mib(a.peak()), a.cpu().Seconds())
			}
		}
	}
}

// wrongNote is what was wrong with a run on -before, if anything.
func wrongNote(o outcome) string {
	if o.wrong == "" {
		return ""
	}
	return " (" + strings.NewReplacer("\n", " ", "|", "\\|").Replace(o.wrong) + ")"
}

// measureRow runs a command once and says what was wrong with its output,
// if anything.
func measureRow(c command, e expect) (sample, string) {
	counter := &lineCounter{}
	for _, n := range e.counts {
		counter.lines = append(counter.lines, []byte(n.line))
	}
	counter.counts = make([]int, len(e.counts))
	s, code, stderr, err := c.exec(counter)
	check(err)
	counter.finish()
	if code != e.exit {
		return s, fmt.Sprintf("exit code %d, not %d: %.200s", code, e.exit, stderr)
	}
	if !strings.Contains(stderr, e.reason) {
		return s, fmt.Sprintf("stderr does not name %s: %.200s", e.reason, stderr)
	}
	if e.claim != "" {
		if counter.newlines != 1 || !bytes.HasPrefix(counter.first, []byte(e.claim)) {
			return s, fmt.Sprintf("printed %d lines, the first %.200q; want one that starts with %q", counter.newlines, counter.first, e.claim)
		}
		return s, ""
	}
	if len(e.counts) == 0 && counter.bytes > 0 {
		return s, fmt.Sprintf("%d bytes on stdout, expected none: %.200q", counter.bytes, counter.first)
	}
	for i, n := range e.counts {
		if counter.counts[i] != n.want {
			return s, fmt.Sprintf("printed %d %q, not %d", counter.counts[i], n.line, n.want)
		}
	}
	return s, ""
}

// lineCounter counts the lines of a stream that are one of lines, once
// leading spaces and a sequence item's "- " are cut: a document's kind in a
// render, an item's kind in a ResourceList. It also keeps the stream's first
// line (up to 1 KiB) and counts its line breaks.
type lineCounter struct {
	lines    [][]byte
	counts   []int
	partial  []byte
	first    []byte
	newlines int
	bytes    int64
}

func (c *lineCounter) Write(p []byte) (int, error) {
	if c.newlines == 0 && len(c.first) < 1024 {
		c.first = append(c.first, p[:min(len(p), 1024-len(c.first))]...)
		if i := bytes.IndexByte(c.first, '\n'); i >= 0 {
			c.first = c.first[:i]
		}
	}
	c.bytes += int64(len(p))
	c.newlines += bytes.Count(p, []byte("\n"))
	data := p
	if len(c.partial) > 0 {
		data = append(append([]byte(nil), c.partial...), p...)
	}
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			c.partial = append(c.partial[:0], data...)
			return len(p), nil
		}
		c.match(data[:i])
		data = data[i+1:]
	}
}

func (c *lineCounter) finish() {
	if len(c.partial) > 0 {
		c.match(c.partial)
	}
}

func (c *lineCounter) match(l []byte) {
	l = bytes.TrimLeft(l, " ")
	l = bytes.TrimPrefix(l, []byte("- "))
	for i, line := range c.lines {
		if bytes.Equal(l, line) {
			c.counts[i]++
		}
	}
}

func times(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}

// countLines counts the lines of a file that are line (see lineCounter).
func countLines(path, line string) int {
	f, err := os.Open(path)
	check(err)
	defer func() { _ = f.Close() }()
	c := &lineCounter{lines: [][]byte{[]byte(line)}, counts: []int{0}}
	_, err = io.Copy(c, f)
	check(err)
	c.finish()
	return c.counts[0]
}

// runnerPeak is this process's peak RSS in KiB (VmHWM).
func runnerPeak() int64 {
	b, err := os.ReadFile("/proc/self/status")
	check(err)
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kib, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			check(err)
			return kib
		}
	}
	return 0
}

// thousands writes n with comma separators.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func kb(path string) string {
	fi, err := os.Stat(path)
	check(err)
	return fmt.Sprintf("%.1f kB", float64(fi.Size())/1e3)
}

func mibFile(path string) string {
	fi, err := os.Stat(path)
	check(err)
	return fmt.Sprintf("%.0f MiB", float64(fi.Size())/(1<<20))
}
