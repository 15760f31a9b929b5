// Package driver runs kpt's e2e runner, github.com/kptdev/kpt/pkg/test/runner,
// over the kpt packages named on the command line. hack/build-kpt-runner.sh
// compiles it inside the patched copy of the kpt module (as
// e2e/flappservices) into a test binary; it lives under testdata/ because it
// is not a package of this module.
//
// runTests is kpt's own e2e/fn_test.go driver at v1.0.0-beta.61 (sequential
// cases first, runtimes skip), with one change: a subtest is named after the
// case's path relative to the folder scanned (its folder's name when that is
// the case itself), not its absolute path.
package driver

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kptdev/kpt/internal/fnruntime"
	"github.com/kptdev/kpt/pkg/test/runner"
)

// TestCatalogCases: every argument is a folder that runner.ScanTestCases
// scans for cases (folders holding .expected/); a folder without any fails.
func TestCatalogCases(t *testing.T) {
	if flag.NArg() == 0 {
		t.Fatal("usage: kpt-runner.test [-test.v] DIR...")
	}
	for _, dir := range flag.Args() {
		cases, err := runner.ScanTestCases(dir)
		if err != nil {
			t.Fatalf("failed to scan test cases: %s", err)
		}
		if len(*cases) == 0 {
			t.Fatalf("%s: no test case (a folder holding .expected/)", dir)
		}
		runTests(t, dir, cases, true)
		runTests(t, dir, cases, false)
	}
}

func runTests(t *testing.T, dir string, cases *runner.TestCases, sequential bool) {
	for _, c := range *cases {
		if c.Config.Sequential != sequential {
			continue
		}
		// If the current function runtime doesn't match, we skip this test case.
		currRuntime := strings.ToLower(os.Getenv(fnruntime.ContainerRuntimeEnv))
		if len(c.Config.Runtimes) > 0 {
			skip := true
			for _, rt := range c.Config.Runtimes {
				if currRuntime == strings.ToLower(rt) {
					skip = false
					break
				}
			}
			if skip {
				continue
			}
		}
		t.Run(caseName(dir, c.Path), func(t *testing.T) {
			if !c.Config.Sequential {
				t.Parallel()
			}
			r, err := runner.NewRunner(t, c, c.Config.TestType)
			if err != nil {
				t.Fatalf("failed to create test runner: %s", err)
			}
			if r.Skip() {
				t.Skip()
			}
			err = r.Run()
			if err != nil {
				t.Fatalf("failed when running test: %s", err)
			}
		})
	}
}

func caseName(dir, path string) string {
	if rel, err := filepath.Rel(dir, path); err == nil && rel != "." {
		return filepath.ToSlash(rel)
	}
	return filepath.Base(path)
}
