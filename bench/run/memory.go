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

// budget is one row: a command, what a correct run prints, and its ceiling.
type budget struct {
	input, mode string
	cmd         command
	exit        int    // the expected exit code
	line        string // the line counted in the output, e.g. "kind: Service"
	want        int    // how many of them a correct run prints (0: stdout stays empty)
	reason      string // what a refusal's stderr must name
	ceiling     int64  // KiB; 0 means the baseline's peak in the same run
}

// outcome is what the runs of a row measured.
type outcome struct {
	samples []sample
	wrong   string // the first run whose output was not the expected one
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

func memoryBudgets(bin, noop, data string, runs int) {
	dir := filepath.Join(data, benchdata.MemoryDir)
	if _, err := os.Stat(filepath.Join(dir, benchdata.ManyKRMFile)); err != nil {
		fmt.Fprintf(os.Stderr, "no memory-budget inputs in %s: run make bench-data (or make bench-memory)\n", dir)
		os.Exit(1)
	}
	in := func(name string) string { return filepath.Join(dir, name) }
	// Counted in the files rather than generated again: this process's own
	// peak RSS is the floor of every measurement (see runnerPeak).
	objects := countLines(in(benchdata.SmallObjectFile), "kind: ConfigMap")
	items := countLines(in(benchdata.EmptyListFile), "{}")
	services := benchdata.ManyFiles * benchdata.ServicesPerFLApp
	wide := benchdata.WideCount * benchdata.WideServicesPerFLApp
	rows := []budget{
		{input: fmt.Sprintf("%s Services from %s FLApp files (%d Services each)", thousands(services), thousands(benchdata.ManyFiles), benchdata.ServicesPerFLApp),
			mode: "render", cmd: command{name: "render many files", argv: []string{bin, "render", in(benchdata.ManyFilesDir)}},
			line: "kind: Service", want: services, ceiling: 256 << 10},
		{input: fmt.Sprintf("%s Services from a %s file (%d FLApps × %s replicas)", thousands(wide), kb(in(benchdata.WideFile)), benchdata.WideCount, thousands(benchdata.WideServicesPerFLApp)),
			mode: "render", cmd: command{name: "render wide", argv: []string{bin, "render", in(benchdata.WideFile)}},
			line: "kind: Service", want: wide, ceiling: 64 << 10},
		{input: fmt.Sprintf("one %s file of %s small ConfigMaps", mibFile(in(benchdata.SmallObjectFile)), thousands(objects)),
			mode: "render", cmd: command{name: "render small objects", argv: []string{bin, "render", in(benchdata.SmallObjectFile)}},
			line: "kind: ConfigMap", want: objects, ceiling: 256 << 10},
		{input: fmt.Sprintf("one %s `v1 List` of %s `- {}` items: refused (exit 1)", mibFile(in(benchdata.EmptyListFile)), thousands(items)),
			mode: "render", cmd: command{name: "render List", argv: []string{bin, "render", in(benchdata.EmptyListFile)}},
			exit: 1, reason: "--max-document-nodes", ceiling: 128 << 10},
		{input: fmt.Sprintf("%s Services from %d FLApps (ResourceList on stdin, %s)", thousands(wide), benchdata.WideCount, kb(in(benchdata.WideKRMFile))),
			mode: "KRM", cmd: command{name: "KRM wide", argv: []string{bin}, stdin: in(benchdata.WideKRMFile)},
			line: "kind: Service", want: wide, ceiling: 64 << 10},
		{input: fmt.Sprintf("%s Services from %s FLApps (ResourceList on stdin, %s)", thousands(services), thousands(benchdata.ManyFiles), size(in(benchdata.ManyKRMFile))),
			mode: "KRM", cmd: command{name: "KRM many", argv: []string{bin}, stdin: in(benchdata.ManyKRMFile)},
			line: "kind: Service", want: services},
	}
	baseline := command{name: "noop", argv: []string{noop}, stdin: in(benchdata.ManyKRMFile)}

	// Rows run round by round, so every row sees the same machine load; the
	// baseline runs beside the row compared with it, alternating which goes
	// first.
	outcomes := make([]outcome, len(rows))
	var floor outcome
	for r := 0; r < runs; r++ {
		for i, row := range rows {
			if row.ceiling == 0 && r%2 == 1 {
				floor.samples = append(floor.samples, measureBaseline(baseline))
			}
			s, wrong := measureRow(row)
			outcomes[i].samples = append(outcomes[i].samples, s)
			if wrong != "" && outcomes[i].wrong == "" {
				outcomes[i].wrong = wrong
			}
			if row.ceiling == 0 && r%2 == 0 {
				floor.samples = append(floor.samples, measureBaseline(baseline))
			}
			fmt.Fprintf(os.Stderr, "  %s: %s, %v CPU\n", row.cmd.name, mib(s.rss), s.cpu.Round(time.Millisecond))
		}
		fmt.Fprintf(os.Stderr, "  memory round %d done\n", r+1)
	}

	printf("\n## Memory budgets\n\n")
	printf("Peak RSS of the whole process, for the largest inputs the default ceilings admit and for one they must refuse cheaply. ")
	printf("The inputs are generated by `bench/gen` (`.cache/bench-data/memory/`); `make bench-memory` runs this section alone. ")
	printf("Each command runs %s, stdin from the input file where the mode reads one, the rows interleaved round by round; ", times(runs))
	printf("the table gives the highest peak RSS of the runs (the kernel's `ru_maxrss` from `wait4`) and the median CPU time (user + system). ")
	printf("Every run's output is checked: its exit code, and the number of Services (or ConfigMaps) printed, or for the refusal nothing on stdout and the ceiling that refused it (`--max-document-nodes`) named on stderr. ")
	printf("The last row's budget is the peak of the do-nothing kyaml function (`bench/noop`) echoing the same ResourceList, measured alternately with it in the same rounds.\n\n")
	printf("| input | mode | peak RSS | budget | CPU | |\n|---|---|---|---|---|---|\n")
	for i, row := range rows {
		o := outcomes[i]
		ceiling, budgetText := row.ceiling, "≤ "+mib(row.ceiling)
		if ceiling == 0 {
			ceiling = floor.peak()
			budgetText = fmt.Sprintf("≤ kyaml echoing it: %s", mib(ceiling))
		}
		ok := o.wrong == "" && o.peak() <= ceiling
		if !ok {
			budgetMissed = true
		}
		v := verdict(ok)
		if o.wrong != "" {
			v += " (" + strings.NewReplacer("\n", " ", "|", "\\|").Replace(o.wrong) + ")"
		}
		printf("| %s | %s | %s | %s | %.1f s | %s |\n", row.input, row.mode, mib(o.peak()), budgetText, o.cpu().Seconds(), v)
		target(fmt.Sprintf("memory, %s: %s", row.mode, row.input), mib(o.peak()), budgetText, ok)
	}
	printf("\nThe do-nothing kyaml function on the last row's input: %s peak RSS, %.1f s CPU (median). ", mib(floor.peak()), floor.cpu().Seconds())
	printf("Each peak includes the measuring process's own (%s): Go starts a command with vfork, and the kernel counts the parent's high-water RSS into the child's `ru_maxrss` at exec.\n", mib(runnerPeak()))
}

// measureRow runs a row's command once and says what was wrong with its
// output, if anything.
func measureRow(row budget) (sample, string) {
	counter := &lineCounter{line: []byte(row.line)}
	s, code, stderr, err := row.cmd.exec(counter)
	check(err)
	counter.finish()
	switch {
	case code != row.exit:
		return s, fmt.Sprintf("exit code %d, not %d: %.200s", code, row.exit, stderr)
	case !strings.Contains(stderr, row.reason):
		return s, fmt.Sprintf("stderr does not name %s: %.200s", row.reason, stderr)
	case row.want == 0 && counter.bytes > 0:
		return s, fmt.Sprintf("%d bytes on stdout, expected none", counter.bytes)
	case row.want > 0 && counter.count != row.want:
		return s, fmt.Sprintf("printed %d %q, not %d", counter.count, row.line, row.want)
	}
	return s, ""
}

func measureBaseline(c command) sample {
	s, err := c.try()
	check(err)
	return s
}

// lineCounter counts the lines of a stream that are line, once leading
// spaces and a sequence item's "- " are cut: a document's kind in a render,
// an item's kind in a ResourceList.
type lineCounter struct {
	line    []byte
	partial []byte
	count   int
	bytes   int64
}

func (c *lineCounter) Write(p []byte) (int, error) {
	c.bytes += int64(len(p))
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
	if len(c.line) > 0 && bytes.Equal(l, c.line) {
		c.count++
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
	c := &lineCounter{line: []byte(line)}
	_, err = io.Copy(c, f)
	check(err)
	c.finish()
	return c.count
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
