// Package hostile throws generated hostile inputs at the flapp-services
// binary, in both modes, and checks the promises that hold whatever the input:
// no panic, no runaway (each run gets a CPU limit and 4 GiB of address space),
// never a success with a partial stream, always a reason on failure, and
// nothing from outside the rendered tree in any output.
package hostile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	h "github.com/fedlearner/flapp-services/test/integration/internal/harness"
)

func TestMain(m *testing.M) { os.Exit(h.Main(m)) }

// Limits of one run. The CPU limit is the "never a hang" guard for work
// that burns CPU; the wall-clock backstop catches a run blocked on I/O (a
// FIFO, a device). Neither is a benchmark: the CPU limit is several times
// what the heaviest input (20,000 empty items, each an error) needs on a
// loaded 2-core machine, where a tighter limit killed that input
// (SECURITY.md, Hostile-input suite); a hang or a quadratic blowup takes
// far longer.
const (
	cpuSeconds   = 10
	addressSpace = 4 << 30 // bytes; the runtime dies with "out of memory" beyond it
	wallBackstop = 60 * time.Second
)

func TestCorpusSize(t *testing.T) {
	all := corpus()
	assert.GreaterOrEqual(t, len(all), 200, "the suite promises at least 200 generated inputs")
	seen := map[string]bool{}
	for _, in := range all {
		assert.False(t, seen[in.name], "duplicate input name %s", in.name)
		seen[in.name] = true
	}
	t.Logf("%d hostile inputs", len(all))
}

// TestHostileKRM sends every input as a ResourceList on stdin.
func TestHostileKRM(t *testing.T) {
	bin := h.Binary(t)
	for _, in := range corpus() {
		if in.tree != nil || in.renderOnly {
			continue
		}
		stdin := in.krm
		if stdin == nil {
			stdin = wrapKRM(in.stream)
		}
		t.Run(in.name, func(t *testing.T) {
			t.Parallel()
			res := run(t, bin, t.TempDir(), stdin)
			checkKRM(t, stdin, res)
		})
	}
}

// TestHostileRenderFile writes every input to a file and renders its
// directory; symlink farms render their PATH arguments.
func TestHostileRenderFile(t *testing.T) {
	bin := h.Binary(t)
	for _, in := range corpus() {
		if in.krm != nil {
			continue
		}
		t.Run(in.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			var args []string
			if in.tree != nil {
				var err error
				args, err = in.tree(dir)
				require.NoError(t, err)
				dir = filepath.Join(dir, "repo")
			} else {
				require.NoError(t, os.WriteFile(filepath.Join(dir, "input.yaml"), in.stream, 0o644))
				args = []string{"."}
			}
			res := run(t, bin, dir, nil, append([]string{"render"}, args...)...)
			checkRender(t, res, in.secret)
		})
	}
}

// TestHostileRenderStdin pipes every stream to `render -`.
func TestHostileRenderStdin(t *testing.T) {
	bin := h.Binary(t)
	for _, in := range corpus() {
		if in.krm != nil || in.tree != nil {
			continue
		}
		t.Run(in.name, func(t *testing.T) {
			t.Parallel()
			res := run(t, bin, t.TempDir(), in.stream, "render", "-")
			checkRender(t, res, "")
		})
	}
}

type result struct {
	stdout, stderr []byte
	exitCode       int
	signal         string
	timedOut       bool
	cpu            time.Duration
}

// run execs the binary under RLIMIT_CPU and RLIMIT_AS (set by the shell
// that execs it), with a wall-clock backstop.
func run(t *testing.T, bin, dir string, stdin []byte, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wallBackstop)
	defer cancel()
	script := fmt.Sprintf(`ulimit -t %d && ulimit -v %d && exec "$0" "$@"`, cpuSeconds, addressSpace/1024)
	cmd := exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", script, bin}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOTRACEBACK=all")
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := result{stdout: stdout.Bytes(), stderr: stderr.Bytes(), timedOut: ctx.Err() != nil}
	if cmd.ProcessState != nil {
		res.exitCode = cmd.ProcessState.ExitCode()
		res.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		if ws, ok := cmd.ProcessState.Sys().(interface{ Signaled() bool }); ok && ws.Signaled() {
			res.signal = cmd.ProcessState.String()
		}
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("running %s: %v", bin, err)
	}
	return res
}

// checkCommon holds for both modes.
func checkCommon(t *testing.T, res result, secret string) {
	t.Helper()
	require.False(t, res.timedOut, "hang: no exit within %s (blocked without burning CPU)", wallBackstop)
	require.Empty(t, res.signal, "killed (%s): over %d s of CPU or another limit", res.signal, cpuSeconds)
	stderr := string(res.stderr)
	for _, bad := range []string{"panic:", "goroutine ", "fatal error:", "internal error"} {
		if strings.Contains(stderr, bad) {
			t.Fatalf("a crash (%q on stderr, exit %d):\n%s", bad, res.exitCode, head(stderr))
		}
	}
	if res.exitCode == 2 {
		t.Fatalf("exit code 2 is a Go runtime crash:\n%s", head(stderr))
	}
	if secret != "" {
		if strings.Contains(string(res.stdout), secret) {
			t.Errorf("a file from outside the tree reached stdout (exit %d):\n%s", res.exitCode, head(string(res.stdout)))
		}
		if strings.Contains(stderr, secret) {
			t.Errorf("a file from outside the tree reached stderr (exit %d):\n%s", res.exitCode, head(stderr))
		}
	}
}

func checkRender(t *testing.T, res result, secret string) {
	t.Helper()
	checkCommon(t, res, secret)
	if res.exitCode != 0 {
		assert.Empty(t, res.stdout, "a failed render printed something: a partial stream")
		assert.NotEmpty(t, strings.TrimSpace(string(res.stderr)), "a failure without a reason")
		return
	}
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(res.stdout)}).Read()
	require.NoError(t, err, "exit 0, yet the output does not parse:\n%s", head(string(res.stdout)))
	assert.NotEmpty(t, nodes, "exit 0 with an empty render")
}

func checkKRM(t *testing.T, stdin []byte, res result) {
	t.Helper()
	checkCommon(t, res, "")
	rw := &kio.ByteReadWriter{Reader: bytes.NewReader(res.stdout), PreserveSeqIndent: true}
	items, err := rw.Read()
	require.NoError(t, err, "exit %d and the output is not a readable ResourceList:\n%s\nstderr:\n%s",
		res.exitCode, head(string(res.stdout)), head(string(res.stderr)))
	assert.Equal(t, kio.ResourceListKind, rw.WrappingKind)
	var results framework.Results
	if rw.Results != nil {
		s, err := rw.Results.String()
		require.NoError(t, err)
		require.NoError(t, yaml.Unmarshal([]byte(s), &results))
	}
	if res.exitCode != 0 {
		assert.NotEmpty(t, strings.TrimSpace(string(res.stderr)), "a failure without a reason on stderr")
		assert.Equal(t, 1, results.ExitCode(), "a failure without an error result")
		// By design a failed KRM run gives back its input items unchanged
		// (kustomize and kpt then stop): nothing generated, nothing pruned.
		assert.Subset(t, ids(readItems(stdin)), ids(items), "a failed run returned items that were not in its input")
		return
	}
	assert.Zero(t, results.ExitCode(), "exit 0 with an error result")
}

// readItems is what kyaml reads from a ResourceList, or nothing when it
// cannot read it (kyaml panics on some inputs).
func readItems(rl []byte) (items []*yaml.RNode) {
	defer func() {
		if recover() != nil {
			items = nil
		}
	}()
	items, _ = (&kio.ByteReadWriter{Reader: bytes.NewReader(rl)}).Read()
	return items
}

func ids(nodes []*yaml.RNode) []string {
	var out []string
	for _, n := range nodes {
		if n.YNode().Kind != yaml.MappingNode {
			out = append(out, "not an object: "+n.MustString())
			continue
		}
		out = append(out, fmt.Sprintf("%s %s %s/%s", n.GetApiVersion(), n.GetKind(), n.GetNamespace(), n.GetName()))
	}
	return out
}

func head(s string) string {
	if len(s) > 2000 {
		return s[:2000] + fmt.Sprintf("... (%d bytes)", len(s))
	}
	return s
}
