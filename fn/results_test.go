package fn

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// A huge invalid name comes back shortened, not once per error result.
func TestResultsEchoBoundedInput(t *testing.T) {
	name := strings.Repeat("x", 1<<20)
	node, err := yaml.Parse("apiVersion: fedlearner.k8s.io/v1alpha1\nkind: FLApp\nmetadata: {name: " + name + ", namespace: " + name +
		"}\nspec: {role: Leader, flReplicaSpecs: {Worker: {replicas: 1, template: {spec: {containers: [{name: tensorflow}]}}}}}\n")
	require.NoError(t, err)
	run := NewRun()
	run.Add(ItemObject(0, node))
	_, results := run.Finish(DefaultConfig())
	require.NotEmpty(t, results)
	out, err := yaml.Marshal(results.Framework())
	require.NoError(t, err)
	assert.Less(t, len(out), 32<<10, "results echo at most a few kB of a 1 MB name")
	assert.Contains(t, string(out), "(1048576 bytes in all)")
	assert.Equal(t, "ab... (6 bytes in all)", shorten("ab\xe2\x82\xacz", 3), "cut on a rune boundary")
}

// ErrorList keeps an error once, up to MaxErrors, counts the rest, and
// says how many more there were in the one line a run says it in.
func TestErrorList(t *testing.T) {
	var l ErrorList
	assert.Empty(t, l.Results())
	assert.Equal(t, 0, l.Len())
	chain := []string{"overlay/kustomization.yaml (resources[0])", "../base/kustomization.yaml"}
	l.Add(BuildProblem(chain, "transformers[0]", "runs a plugin"))
	l.Add(BuildProblem(chain, "transformers[0]", "runs a plugin"))
	require.Equal(t, 1, l.Len(), "the same words once")
	got := l.Results()
	require.Len(t, got, 1)
	assert.Equal(t, "error: overlay/kustomization.yaml (resources[0]) → ../base/kustomization.yaml: transformers[0]: runs a plugin", got[0].String())
	assert.Equal(t, "transformers[0]", got[0].Field.Path)
	assert.Nil(t, got[0].File, "the chain names the file; results carry no path of its last, relative to the one before")

	for i := range MaxErrors + 2 {
		l.Add(BuildProblem([]string{"kustomization.yaml"}, fmt.Sprintf("resources[%d]", i), "is remote"))
	}
	assert.Equal(t, MaxErrors+3, l.Len())
	got = l.Results()
	require.Len(t, got, MaxErrors+1)
	assert.Equal(t, "error: kustomization.yaml: resources[98]: is remote", got[MaxErrors-1].String())
	assert.Equal(t, "3 more errors not shown (the first 100 are)", got[MaxErrors].Message)
	assert.Len(t, l.Results(), MaxErrors+1, "asking again adds nothing")
}
