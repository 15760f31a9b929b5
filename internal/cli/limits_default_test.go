package cli

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/fedlearner/flapp-services/fn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestLimitsHoldAtTheirDefaults: every ceiling of Limits is one users were
// told of (userLimits, by hand), and behaves as told at its default: the
// default itself passes and one more fails, here when a unit test can reach
// it cheaply, or in the test named.
func TestLimitsHoldAtTheirDefaults(t *testing.T) {
	here := map[string]func(t *testing.T){
		"Services per run":   servicesPerRunAtDefault,
		"Services per FLApp": servicesPerFLAppAtDefault,
		"error results":      errorResultsAtDefault,
		"echoed value":       echoedValueAtDefault,
		"echoed message":     echoedMessageAtDefault,
	}
	elsewhere := map[string]string{
		"file size":                    "internal/repofs TestDefaultCeilings (8Mi and 8Mi+1)",
		"input size":                   "internal/repofs TestDefaultCeilings (32Mi and 32Mi+1)",
		"YAML nodes per document":      "TestRenderHelpShowsTheLimits (the default) and krmio's reader tests (a ceiling and one past it)",
		"YAML nodes per object":        "TestRenderHelpShowsTheLimits and TestMaxObjectNodes",
		"objects":                      "TestRenderHelpShowsTheLimits and TestMaxObjectsBoundary",
		"kustomization builds":         "TestRenderHelpShowsTheLimits and internal/kustomize TestMaxBuildsBoundary",
		"kustomize build cost":         "TestRenderHelpShowsTheLimits and internal/kustomize TestScanCost",
		"kustomize build output":       "TestRenderHelpShowsTheLimits and internal/kustomize TestMaxOutputBoundary",
		"kustomize build time":         "TestRenderHelpShowsTheLimits and internal/kustomize TestRunStopsAtItsDeadline",
		"memory, hard (render)":        "TestRenderHelpShowsTheLimits (the default) and test/integration/untrusted TestMemoryCeilingStopsTheRender (a render stopped at a lowered ceiling; the default passes)",
		"CPU time (render)":            "TestRenderHelpShowsTheLimits (the default) and test/integration/untrusted TestMemoryCeilingStopsTheRender (a render stopped at a lowered ceiling)",
		"heap, soft (render mode)":     "a soft limit: nothing fails past it (bench/run's memory budgets)",
		"heap, soft (kustomize build)": "a soft limit: nothing fails past it",
		"heap, soft (discover)":        "a soft limit: nothing fails past it",
		"render spool in memory":       "krmio's spool tests: past it the render waits in a file, the output the same",

		"Services of entries before the root's last": "TestRenderBuildBoundsTheServicesInPlace (the ceiling renders, two past it is refused)",
	}
	// Not held at their boundary by any test yet: named here so that the
	// gap is seen, not hidden.
	unheld := []string{"--check file", "--check diff"}
	want := map[string]string{}
	for _, l := range userLimits {
		want[l.name] = fmt.Sprintf("%s | %s | %s", l.def, l.flag, l.configKey)
	}
	for _, l := range Limits {
		assert.Equal(t, want[l.Name], fmt.Sprintf("%s | %s | %s", l.Default, l.Flag, l.ConfigKey), "%s: not what users were told", l.Name)
		delete(want, l.Name)
		if check, ok := here[l.Name]; ok {
			t.Run(l.Name, check)
			continue
		}
		if slices.Contains(unheld, l.Name) {
			t.Logf("%s: not held at its boundary by a test", l.Name)
			continue
		}
		assert.NotEmpty(t, elsewhere[l.Name], "%s: no test holds it at its default", l.Name)
	}
	assert.Empty(t, want, "told of, but not in Limits")
}

func flappYAML(name string, replicas int) string {
	return fmt.Sprintf("apiVersion: fedlearner.k8s.io/v1alpha1\nkind: FLApp\nmetadata: {name: %s, namespace: ns}\n"+
		"spec:\n  role: Leader\n  peerSpecs: {Follower: {peerURL: x}}\n  flReplicaSpecs:\n"+
		"    Worker: {replicas: %d, template: {spec: {containers: [{name: tensorflow}]}}}\n", name, replicas)
}

// finishDefault runs fn over the documents with the default config.
func finishDefault(t *testing.T, docs ...string) (*fn.Output, fn.Results) {
	t.Helper()
	run := fn.NewRun()
	for i, d := range docs {
		n, err := yaml.Parse(d)
		require.NoError(t, err)
		run.Add(fn.ItemObject(i, n))
	}
	return run.Finish(fn.DefaultConfig())
}

func errorMessages(results fn.Results) []string {
	var m []string
	for _, r := range results {
		if r.Severity == framework.Error {
			m = append(m, r.Message)
		}
	}
	return m
}

// 100,000 Services in one run: ten FLApps of 10,000 pass, eleven fail.
func servicesPerRunAtDefault(t *testing.T) {
	var docs []string
	for i := range 11 {
		docs = append(docs, flappYAML(fmt.Sprintf("a%02d", i), 10000))
	}
	out, results := finishDefault(t, docs[:10]...)
	require.Zero(t, results.ExitCode(), results.Error())
	assert.Equal(t, 100000, out.ServiceCount())
	_, results = finishDefault(t, docs...)
	msgs := errorMessages(results)
	require.Len(t, msgs, 1)
	assert.True(t, strings.HasPrefix(msgs[0], "the input would produce 110000 Services, more than maxServices (100000)"), msgs[0])
}

// 10,000 Services for one FLApp pass, 10,001 fail.
func servicesPerFLAppAtDefault(t *testing.T) {
	out, results := finishDefault(t, flappYAML("a", 10000))
	require.Zero(t, results.ExitCode(), results.Error())
	assert.Equal(t, 10000, out.ServiceCount())
	_, results = finishDefault(t, flappYAML("a", 10001))
	assert.Equal(t, []string{"Invalid value: 10001: the FLApp would produce 10001 Services, more than maxServicesPerFLApp (10000)"}, errorMessages(results))
}

// 100 errors are shown; the 101st is counted in one more result.
func errorResultsAtDefault(t *testing.T) {
	broken := func(n int) []string {
		docs := make([]string, n)
		for i := range docs {
			docs[i] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [x]}\n"
		}
		return docs
	}
	_, results := finishDefault(t, broken(100)...)
	assert.Len(t, errorMessages(results), 100)
	assert.NotContains(t, results.Error(), "more errors not shown")
	_, results = finishDefault(t, broken(101)...)
	msgs := errorMessages(results)
	require.Len(t, msgs, 101)
	assert.Contains(t, msgs, "1 more errors not shown (the first 100 are)")
}

// A name of 256 bytes is echoed whole; one of 257 is cut to 256 and says
// its length.
func echoedValueAtDefault(t *testing.T) {
	for n, want := range map[int]string{256: strings.Repeat("a", 256), 257: strings.Repeat("a", 256) + "... (257 bytes in all)"} {
		doc := strings.Replace(flappYAML(strings.Repeat("a", n), 1), "v1alpha1", "v2", 1)
		_, results := finishDefault(t, doc)
		require.Len(t, results, 1)
		require.NotNil(t, results[0].ResourceRef)
		assert.Equal(t, want, results[0].ResourceRef.Name, n)
	}
}

// A message of 4096 bytes is shown whole; one of 4097 is cut to 4096 and
// says its length.
func echoedMessageAtDefault(t *testing.T) {
	const head, tail = "unsupported FLApp version fedlearner.k8s.io/", ": only fedlearner.k8s.io/v1alpha1 is known"
	for n, want := range map[int]string{4096: "", 4097: "... (4097 bytes in all)"} {
		version := strings.Repeat("v", n-len(head)-len(tail))
		doc := strings.Replace(flappYAML("a", 1), "v1alpha1", version, 1)
		_, results := finishDefault(t, doc)
		msgs := errorMessages(results)
		require.Len(t, msgs, 1)
		full := head + version + tail
		require.Len(t, full, n)
		if want == "" {
			assert.Equal(t, full, msgs[0])
		} else {
			assert.Equal(t, full[:4096]+want, msgs[0])
		}
	}
}
