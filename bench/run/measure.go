package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

// sample is one run of a command.
type sample struct {
	wall time.Duration
	cpu  time.Duration // user + system
	rss  int64         // KiB
}

// command is a process to measure: argv and a file for stdin.
type command struct {
	name  string
	argv  []string
	stdin string
	env   []string
	dir   string // the working directory, when not this one
}

func (c command) run() sample {
	s, err := c.try()
	if err != nil {
		log.Fatal(err)
	}
	return s
}

func (c command) try() (sample, error) {
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return sample{}, err
	}
	defer func() { _ = devnull.Close() }()
	s, code, stderr, err := c.exec(devnull)
	if err != nil {
		return sample{}, err
	}
	if code != 0 {
		return sample{}, fmt.Errorf("%s: exit status %d\n%s", c.name, code, stderr)
	}
	return s, nil
}

// exec runs the command once, stdout to w, and returns what it cost, its
// exit code and its stderr.
func (c command) exec(w io.Writer) (sample, int, string, error) {
	cmd := exec.Command(c.argv[0], c.argv[1:]...)
	cmd.Env = append(os.Environ(), c.env...)
	cmd.Dir = c.dir
	if c.stdin != "" {
		f, err := os.Open(c.stdin)
		if err != nil {
			return sample{}, 0, "", err
		}
		defer func() { _ = f.Close() }()
		cmd.Stdin = f
	}
	cmd.Stdout = w
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return sample{}, 0, "", fmt.Errorf("%s: %v\n%s", c.name, err, stderr.String())
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return sample{wall: wall, cpu: cpu, rss: ru.Maxrss}, cmd.ProcessState.ExitCode(), stderr.String(), nil
}

type stats struct {
	wall, cpu time.Duration
	rss       int64
	n         int
}

func median(samples []sample) stats {
	walls := make([]time.Duration, len(samples))
	cpus := make([]time.Duration, len(samples))
	rsss := make([]int64, len(samples))
	for i, s := range samples {
		walls[i], cpus[i], rsss[i] = s.wall, s.cpu, s.rss
	}
	slices.Sort(walls)
	slices.Sort(cpus)
	slices.Sort(rsss)
	return stats{wall: walls[len(walls)/2], cpu: cpus[len(cpus)/2], rss: rsss[len(rsss)/2], n: len(samples)}
}

// compare runs a and b alternately (a, b, b, a, a, b, ...: each goes first
// equally often) n times each.
func compare(a, b command, n int) (stats, stats) {
	res := compareAll([]command{a, b}, n)
	return res[0], res[1]
}

// compareAll runs the commands n times each, in rounds, each round starting
// one command further on (a b c, b c a, c a b, ...), and returns their
// medians.
func compareAll(cmds []command, n int) []stats {
	samples := make([][]sample, len(cmds))
	for i := 0; i < n; i++ {
		var line []string
		for k := range cmds {
			j := (k + i) % len(cmds)
			samples[j] = append(samples[j], cmds[j].run())
		}
		for j, c := range cmds {
			line = append(line, fmt.Sprintf("%s %v", c.name, samples[j][i].wall.Round(time.Millisecond)))
		}
		fmt.Fprintf(os.Stderr, "  %s\n", strings.Join(line, " / "))
	}
	res := make([]stats, len(cmds))
	for j := range cmds {
		res[j] = median(samples[j])
	}
	return res
}
