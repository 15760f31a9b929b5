// Package kptrunner runs kpt's own e2e test runner, pkg/test/runner of kpt
// v1.0.0-beta.61 (what the kpt functions catalog tests its examples with),
// over the catalog-style example packages examples/kpt/flapp-services-*,
// against the real kpt. The runner is a test binary that
// hack/build-kpt-runner.sh builds from the same patched copy of the kpt
// module as kpt itself (hack/build-kpt.sh); the packages run the image that
// `make image` builds under the name they use, with podman.
package kptrunner

import (
	"bufio"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fedlearner/flapp-services/test/e2e/clients/internal/engine"
	"github.com/fedlearner/flapp-services/test/e2e/internal/testenv"
)

// casesGlob matches the catalog-style example packages (repository-relative).
const casesGlob = "examples/kpt/flapp-services-*"

// required are the cases the examples must hold at least: a first render, a
// scale-down, a failure, and `kpt fn eval` in the imperative form.
var required = []string{
	"flapp-services-error",
	"flapp-services-fresh",
	"flapp-services-imperative",
	"flapp-services-scale-down",
}

var env struct {
	engine.Suite        // the image the packages name, and a work folder
	kpt          string // the kpt binary
	runner       string // kpt's runner, a test binary
}

func TestMain(m *testing.M) {
	flag.Parse()
	// The packages run verbatim: the image is built under the name their
	// Kptfiles use (TestExamplesAreCatalogCases checks that they all use it).
	os.Exit(engine.RunSuite(m, "clients/kptrunner", "examples/kpt/flapp-services-fresh/Kptfile", imageLine,
		func() (err error) {
			if env.kpt, err = testenv.Hack(engine.Repo(), "build-kpt.sh"); err != nil {
				return err
			}
			env.runner, err = testenv.Hack(engine.Repo(), "build-kpt-runner.sh")
			return err
		}, &env.Suite))
}

// imageLine is a Kptfile mutator's image.
var imageLine = regexp.MustCompile(`(?m)^    - image: (\S+)$`)

// runnerRun is what one run of the runner binary reported, per case (the
// subtest of the driver's TestCatalogCases, named after the case's path
// relative to the folder given).
type runnerRun struct {
	exitCode int
	outcome  map[string]string // case -> "pass", "fail" or "skip"
	log      map[string]string // case -> its output
	all      string            // the whole output, for messages
}

// runRunner runs kpt's runner over dirs, as the catalog's e2e test does: the
// kpt built by hack/build-kpt.sh first on PATH (the runner runs `which kpt`),
// KRM_FN_RUNTIME=podman for kpt, podman-docker's docker and CONTAINERS_CONF
// from engine.Setup. KPT_E2E_UPDATE_EXPECTED is cleared: set to "true" it
// makes the runner rewrite the expected files instead of comparing them.
// `go tool test2json` attributes the output of the parallel cases.
func runRunner(t *testing.T, dirs ...string) runnerRun {
	t.Helper()
	path := filepath.Dir(env.kpt) + string(os.PathListSeparator) + os.Getenv("PATH")
	args := append([]string{"tool", "test2json", "-t", env.runner, "-test.v=test2json", "-test.timeout=20m"}, dirs...)
	res := engine.Run(t, t.TempDir(), []string{"PATH=" + path, "KRM_FN_RUNTIME=podman", "KPT_E2E_UPDATE_EXPECTED="},
		nil, "go", args...)
	run := runnerRun{exitCode: res.ExitCode, outcome: map[string]string{}, log: map[string]string{}}
	var all strings.Builder
	sc := bufio.NewScanner(strings.NewReader(res.Stdout))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var ev struct{ Action, Test, Output string }
		require.NoError(t, json.Unmarshal(sc.Bytes(), &ev), "test2json: %s", sc.Text())
		all.WriteString(ev.Output)
		name, ok := strings.CutPrefix(ev.Test, "TestCatalogCases/")
		if !ok {
			continue
		}
		switch ev.Action {
		case "output":
			run.log[name] += ev.Output
		case "pass", "fail", "skip":
			run.outcome[name] = ev.Action
		}
	}
	require.NoError(t, sc.Err())
	run.all = all.String() + res.Stderr
	return run
}

// runnerCommand is a kpt command the runner logged: "running command:
// KRM_FN_RUNTIME=podman <kpt> fn render <tmp>/<case> <flags>".
var runnerCommand = regexp.MustCompile(`running command: (.*)`)

// exampleCases are the folders casesGlob matches, absolute and sorted.
func exampleCases(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(engine.Repo(), casesGlob))
	require.NoError(t, err)
	sort.Strings(dirs)
	return dirs
}

// Every example package passes kpt's runner against the real kpt: the exit
// code, stderr, results and the `git diff` of the package are as its
// .expected/ says, and a success case is rendered twice (the second render
// must leave the diff from the original package as the first did). A failing
// case runs once: the runner stops after the expected failure.
func TestRunnerPassesTheExamples(t *testing.T) {
	dirs := exampleCases(t)
	run := runRunner(t, dirs...)
	require.Equal(t, 0, run.exitCode, "kpt's runner failed:\n%s", run.all)
	for _, dir := range dirs {
		name := filepath.Base(dir)
		c := readCase(t, dir)
		t.Run(name, func(t *testing.T) {
			require.Equal(t, "pass", run.outcome[name], "kpt's runner did not run %s to a pass:\n%s", name, run.all)
			log := run.log[name]
			assert.Contains(t, log, "Using kpt binary: "+env.kpt)
			runs := 2
			if c.Config.ExitCode != 0 {
				runs = 1
			}
			cmds := runnerCommand.FindAllStringSubmatch(log, -1)
			require.Len(t, cmds, runs, "kpt runs of %s:\n%s", name, log)
			for _, cmd := range cmds {
				assert.Contains(t, cmd[1], "KRM_FN_RUNTIME=podman "+env.kpt+" fn "+c.testType()+" ")
				assert.Contains(t, cmd[1], "--image-pull-policy Never")
				if c.testType() == "eval" {
					assert.Contains(t, cmd[1], "--image "+env.Image.Name+" -- ")
				}
			}
		})
	}
}

// mutation is one wrong line in a scratch copy of an example's expected
// files, or (old empty) a file added to it.
type mutation struct {
	example, file, old, new string
	want                    string // the runner's message
	runs                    int    // the kpt runs before the failure
}

// kpt's runner fails a case whose expected files are wrong: each mutation,
// in a scratch copy of an example, fails its case with the runner's message.
// Without this, a runner that compared nothing would pass the examples too.
// "second-run" shows that the diff after the second render is compared: a
// teardown script (which the runner runs after each checked run) edits an
// FLApp's file, so only the second comparison can see it.
func TestRunnerFailsOnAWrongExpectation(t *testing.T) {
	const diffWrong = "actual diff doesn't match expected"
	mutations := map[string]mutation{
		"diff-line": {"flapp-services-fresh", ".expected/diff.patch",
			"+  name: mnist-leader-worker-1\n", "+  name: mnist-leader-worker-9\n", diffWrong, 1},
		"diff-removed-service": {"flapp-services-scale-down", ".expected/diff.patch",
			"-  name: train-leader-worker-3\n", "-  name: train-leader-worker-1\n", diffWrong, 1},
		"eval-diff-line": {"flapp-services-imperative", ".expected/diff.patch",
			"+    port: 50052\n", "+    port: 50053\n", diffWrong, 1},
		"eval-args": {"flapp-services-imperative", ".expected/config.yaml",
			"ownerReferences: Never\n", "ownerReferences: Required\n", "actual exit code 1 doesn't match expected 0", 1},
		"results": {"flapp-services-error", ".expected/results.yaml",
			"name: mnist.v2\n", "name: mnist-v2\n", "actual results doesn't match expected", 1},
		"exit-code": {"flapp-services-error", ".expected/config.yaml",
			"exitCode: 1\n", "exitCode: 0\n", "actual exit code 1 doesn't match expected 0", 1},
		"stderr": {"flapp-services-error", ".expected/config.yaml",
			"mnist.v2", "mnist-v2", "wanted stderr", 1},
		"second-run": {"flapp-services-fresh", ".expected/teardown.sh",
			"", "echo '# edited after the first render' >> leader/mnist.yaml\n", diffWrong, 2},
	}
	root := t.TempDir()
	for name, m := range mutations {
		dst := filepath.Join(root, name, m.example)
		engine.CopyTree(t, filepath.Join(engine.Repo(), "examples/kpt", m.example), dst)
		file := filepath.Join(dst, m.file)
		if m.old == "" {
			require.NoFileExists(t, file)
			require.NoError(t, os.WriteFile(file, []byte(m.new), 0o644))
			continue
		}
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		require.Contains(t, string(b), m.old, "%s: %s no longer holds the line this mutation changes", name, m.file)
		require.NoError(t, os.WriteFile(file, []byte(strings.Replace(string(b), m.old, m.new, 1)), 0o644))
	}
	run := runRunner(t, root)
	assert.NotEqual(t, 0, run.exitCode, "kpt's runner passed wrong expectations:\n%s", run.all)
	for name, m := range mutations {
		t.Run(name, func(t *testing.T) {
			c := name + "/" + m.example
			assert.Equal(t, "fail", run.outcome[c], "%s:\n%s", c, run.log[c])
			assert.Contains(t, run.log[c], m.want)
			assert.Len(t, runnerCommand.FindAllString(run.log[c], -1), m.runs, "kpt runs before the failure")
		})
	}
}
