package fn_test

import (
	"fmt"
	"github.com/fedlearner/flapp-services/fn"
	"github.com/fedlearner/flapp-services/fn/fntest"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/fn/framework/frameworktestutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

const goldenDir = "../testdata"

// TestGolden runs every case under testdata/ through framework.Execute, as
// kpt's catalog functions do. UPDATE_GOLDEN=1 rewrites expected.yaml.
func TestGolden(t *testing.T) {
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		updateGolden(t)
		return
	}
	checker := frameworktestutil.ProcessorResultsChecker{
		TestDataDirectory: goldenDir,
		Processor:         func() framework.ResourceListProcessor { return fntest.Processor{} },
	}
	checker.Assert(t)
	assert.GreaterOrEqual(t, len(checker.TestCasesRun()), 25)
}

// TestGoldenErrorOutputs keeps the expected.yaml of error cases honest:
// frameworktestutil checks only errors.txt for them, but their output (the
// items unchanged, plus the error results) is documentation too.
func TestGoldenErrorOutputs(t *testing.T) {
	for _, dir := range fntest.GoldenCases(t, goldenDir) {
		if _, err := os.Stat(filepath.Join(dir, "errors.txt")); err != nil {
			continue
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			input, err := os.ReadFile(filepath.Join(dir, "input.yaml"))
			require.NoError(t, err)
			want, err := os.ReadFile(filepath.Join(dir, "expected.yaml"))
			require.NoError(t, err)
			got, err := fntest.Execute(input, false)
			require.Error(t, err)
			assert.Equal(t, string(want), string(got))
		})
	}
}

// TestGoldenSecondRun feeds every success case its own output: the items must
// come back byte for byte (kpt renders twice and expects no change).
func TestGoldenSecondRun(t *testing.T) {
	for _, dir := range fntest.GoldenCases(t, goldenDir) {
		if _, err := os.Stat(filepath.Join(dir, "errors.txt")); err == nil {
			continue
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			first, err := os.ReadFile(filepath.Join(dir, "expected.yaml"))
			require.NoError(t, err)
			second, err := fntest.Execute(first, false)
			require.NoError(t, err)
			assert.Equal(t, fntest.WithoutResults(t, first), fntest.WithoutResults(t, second))
		})
	}
}

// TestGoldenServicesReadAlike: every Service in every success case's
// expected.yaml reads the same with kubectl's reader (YAML 1.1) as with
// kyaml's (YAML 1.2); yaml11-words-quoted is the case that needs quotes.
// The differential tests (internal/krmio) do the same for every output
// of both modes, on the golden and random inputs.
func TestGoldenServicesReadAlike(t *testing.T) {
	n := 0
	for _, dir := range fntest.GoldenCases(t, goldenDir) {
		if _, err := os.Stat(filepath.Join(dir, "errors.txt")); err == nil {
			continue
		}
		out, err := os.ReadFile(filepath.Join(dir, "expected.yaml"))
		require.NoError(t, err)
		read := fntest.ServicesReadAlike(t, out, true)
		if filepath.Base(dir) == "yaml11-words-quoted" {
			assert.Equal(t, 1, read, dir)
		}
		n += read
	}
	t.Logf("%d Services read", n)
	assert.Greater(t, n, 100)
}

// TestGeneratedServicesIndependentOfInputOrder: the Services come out in the
// documented order (namespace, FLApp name, replica type, index as a number),
// written here by hand, whatever the order of the input; the kept items stay
// in input order.
func TestGeneratedServicesIndependentOfInputOrder(t *testing.T) {
	flapp := func(ns, name, role string, types ...string) string {
		s := "apiVersion: fedlearner.k8s.io/v1alpha1\nkind: FLApp\nmetadata: {name: " + name + ", namespace: " + ns + "}\n" +
			"spec:\n  role: " + role + "\n  peerSpecs: {Follower: {peerURL: x}}\n  flReplicaSpecs:\n"
		for _, t := range types {
			typ, n, _ := strings.Cut(t, "=")
			s += "    " + typ + ": {replicas: " + n + ", template: {spec: {containers: [{name: tensorflow}]}}}\n"
		}
		return s
	}
	docs := []string{
		flapp("z", "a", "Leader", "Worker=1"), // not y: kubectl would read a boolean
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: x}\n",
		flapp("x", "c", "Follower", "Master=1"),
		flapp("x", "b", "Leader", "Worker=2", "PS=1"),
		flapp("x", "a", "Leader", "Worker=11"),
	}
	var want []string
	for i := range 11 {
		want = append(want, fmt.Sprintf("x/a-leader-worker-%d", i)) // 9 before 10
	}
	want = append(want, "x/b-leader-ps-0", "x/b-leader-worker-0", "x/b-leader-worker-1", "x/c-follower-master-0", "z/a-leader-worker-0")

	rnd := rand.New(rand.NewSource(1))
	order := []int{0, 1, 2, 3, 4}
	for range 10 {
		var items []*yaml.RNode
		for _, i := range order {
			items = append(items, yaml.MustParse(docs[i]))
		}
		kept, out, results := fntest.Generate(items, fn.DefaultConfig())
		require.Zero(t, results.ExitCode(), results.Error())
		var got []string
		for svc := range out.Services() {
			got = append(got, svc.Namespace+"/"+svc.Name)
		}
		assert.Equal(t, want, got, "input order %v", order)
		assert.Equal(t, items, kept, "kept in input order")
		rnd.Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
	}
}

// updateGolden writes every case's expected.yaml from the current code. It
// is not frameworktestutil's UpdateExpectedFromActual, which would also
// overwrite each errors.txt (hand-written regular expressions) with the
// literal error text.
func updateGolden(t *testing.T) {
	for _, dir := range fntest.GoldenCases(t, goldenDir) {
		input, err := os.ReadFile(filepath.Join(dir, "input.yaml"))
		require.NoError(t, err)
		got, _ := fntest.Execute(input, false) // error cases are checked against errors.txt by TestGolden
		require.NoError(t, os.WriteFile(filepath.Join(dir, "expected.yaml"), got, 0o644))
	}
	t.Skip("updated testdata/*/expected.yaml; read the diff, then run the tests without UPDATE_GOLDEN")
}
