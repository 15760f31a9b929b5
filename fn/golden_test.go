package fn_test

import (
	"bytes"
	"github.com/fedlearner/flapp-services/fn"
	"github.com/fedlearner/flapp-services/fn/fntest"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/fn/framework/frameworktestutil"
	"sigs.k8s.io/kustomize/kyaml/kio"
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
// The differential tests (internal/third_party/kyaml/krmio) do the same for every output
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

// TestGeneratedServicesIndependentOfInputOrder shuffles each success case's
// items and checks the generated Services come out identical.
func TestGeneratedServicesIndependentOfInputOrder(t *testing.T) {
	rnd := rand.New(rand.NewSource(1))
	for _, dir := range fntest.GoldenCases(t, goldenDir) {
		if _, err := os.Stat(filepath.Join(dir, "errors.txt")); err == nil {
			continue
		}
		input, err := os.ReadFile(filepath.Join(dir, "input.yaml"))
		require.NoError(t, err)
		rw := &kio.ByteReadWriter{Reader: bytes.NewReader(input)}
		items, err := rw.Read()
		require.NoError(t, err)
		cfg, _ := fn.ParseConfig(rw.FunctionConfig, fn.Origin{})
		_, want, results := fntest.Generate(items, cfg)
		require.Zero(t, results.ExitCode(), dir)
		for i := 0; i < 5; i++ {
			shuffled := append([]*yaml.RNode(nil), items...)
			rnd.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
			_, got, results := fntest.Generate(shuffled, cfg)
			require.Zero(t, results.ExitCode(), dir)
			assert.Equal(t, encode(t, want), encode(t, got), dir)
		}
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

// encode writes the generated Services only.
func encode(t *testing.T, out *fn.Output) string {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, kio.ByteWriter{Writer: &buf}.Write(fn.WithServiceNodes(nil, out.Services())))
	return buf.String()
}
