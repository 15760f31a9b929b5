package fn

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
)

// kpt rejects two resources with the same path and index, so Services that
// share a file (same FLApp name, two namespaces, one directory) must be
// numbered per file.
func TestPathAndIndexUniquePerFile(t *testing.T) {
	input, err := os.ReadFile(filepath.Join("../testdata", "kpt-same-name-two-namespaces", "input.yaml"))
	require.NoError(t, err)
	items, err := (&kio.ByteReadWriter{Reader: bytes.NewReader(input)}).Read()
	require.NoError(t, err)
	run := NewRun()
	for i, item := range items {
		run.Add(ItemObject(i, item))
	}
	out, results := run.Finish(DefaultConfig())
	require.Zero(t, results.ExitCode())
	require.Equal(t, 4, out.ServiceCount())
	seen := map[string]bool{}
	for svc := range out.Services() {
		key := svc.Annotations[kioutil.PathAnnotation] + "#" + svc.Annotations[kioutil.IndexAnnotation]
		assert.False(t, seen[key], "duplicate path and index %s", key)
		seen[key] = true
		assert.Equal(t, "jobs/mnist.services.yaml", svc.Annotations[kioutil.PathAnnotation])
	}
}
