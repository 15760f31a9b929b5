package fn

import (
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
