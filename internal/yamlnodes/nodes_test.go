package yamlnodes

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func parse(t *testing.T, doc string) *yaml.Node {
	t.Helper()
	var n yaml.Node
	require.NoError(t, yaml.NewDecoder(strings.NewReader(doc)).Decode(&n))
	return &n
}

// Expanded counts what decoding with aliases resolved builds: each alias as
// a copy of its anchor's tree, nested aliases multiplied out.
func TestExpanded(t *testing.T) {
	for doc, want := range map[string]int{
		"a: b":                       4, // document, mapping, key, value
		"a: &x [1, 2]\nb: *x":        10,
		"a: &x {k: v}\nb: *x\nc: *x": 14,
		"- &x a\n- *x\n- *x":         5, // each alias a copy of the scalar
	} {
		assert.Equal(t, want, Expanded(parse(t, doc), 1000), doc)
	}
}

// A billion laughs of a few hundred bytes: counted in one pass, stopped at
// the limit.
func TestExpandedBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 10; i++ {
		b.WriteString("a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	n := parse(t, b.String())
	assert.Greater(t, Expanded(n, 600000), 600000)
	assert.Less(t, Expanded(n, 1<<62), 1<<62, "the whole expansion counted, not looped")
}
