package krmio

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mirrored are the modules this package mirrors, at the versions it
// mirrors (../README.md).
var mirrored = map[string]string{
	"sigs.k8s.io/kustomize/kyaml": "v0.21.2",
	"go.yaml.in/yaml/v3":          "v3.0.5",
}

// TestMirroredVersions fails when go.mod moves a mirrored module: the
// mirror must be read against the new version's changes first.
func TestMirroredVersions(t *testing.T) {
	gomod, err := os.ReadFile("../../go.mod")
	require.NoError(t, err)
	built := map[string]string{}
	for _, line := range strings.Split(string(gomod), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && strings.Contains(f[0], ".") {
			built[f[0]] = f[1]
		}
	}
	readme, err := os.ReadFile("MIRRORED.md")
	require.NoError(t, err)
	for path, version := range mirrored {
		assert.Equal(t, version, built[path], "%s moved: read its changes since %s into this package, then update MIRRORED.md and this test", path, version)
		assert.True(t, strings.Contains(string(readme), "| `"+path+"` | "+version+" |"), "MIRRORED.md names %s %s", path, version)
	}
}
