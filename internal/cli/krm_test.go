package cli

import (
	"bytes"
	"github.com/fedlearner/flapp-services/fn/fntest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"
)

const goldenDir = "../../testdata"

// TestKRMModeMatchesFramework proves the binary's KRM mode (RunKRM) writes
// what framework.Execute writes with fn.Processor with kyaml's KRM-mode settings, and fails
// exactly when it fails.
func TestKRMModeMatchesFramework(t *testing.T) {
	for _, dir := range fntest.GoldenCases(t, goldenDir) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			input, err := os.ReadFile(filepath.Join(dir, "input.yaml"))
			require.NoError(t, err)
			want, wantErr := fntest.Execute(input, true)

			var out, stderr bytes.Buffer
			gotErr := RunKRM(bytes.NewReader(input), &out, &stderr)
			assert.Equal(t, string(want), out.String())
			if wantErr != nil {
				assert.ErrorIs(t, gotErr, ErrFailed)
				assert.NotEmpty(t, stderr.String(), "errors are also explained on stderr")
			} else {
				assert.NoError(t, gotErr)
				onlyWarnings(t, stderr.String())
			}
		})
	}
}

// onlyWarnings checks the stderr of a success: nothing, or warnings, one
// line each (kustomize shows a function's stderr, not its results).
func onlyWarnings(t *testing.T, stderr string) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
		assert.True(t, line == "" || strings.HasPrefix(line, "warning"), "stderr of a success: %q", line)
	}
}

// FuzzKRM feeds arbitrary bytes to the KRM mode. Whatever the input: no
// panic (the recover in RunKRM would report an "internal error"), a failure
// is a non-zero exit with a ResourceList holding an error result and an
// explanation on stderr, and a success is a fixed point whose generated
// Services read alike with kubectl's YAML 1.1 reader and kyaml's.
// Its seed corpus (every golden input plus malformed shapes) runs in go test.
func FuzzKRM(f *testing.F) {
	inputs, _ := filepath.Glob(filepath.Join(goldenDir, "*", "input.yaml"))
	for _, p := range inputs {
		data, err := os.ReadFile(p)
		require.NoError(f, err)
		f.Add(data)
	}
	for _, s := range []string{
		"", "{", "[]", "null", "items: [1]", "kind: ResourceList",
		"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: [1, x, [2]]\n",
		"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: {a: b}\n",
		"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {apiVersion: v1, kind: Service, metadata: [1]}\n",
		"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {apiVersion: v1, kind: Service, metadata: {name: x, labels: [a], annotations: 5}}\n",
		"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig: [1]\nitems: []\n",
		"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig: {apiVersion: v1, kind: ConfigMap, data: [1]}\nitems: []\n",
		"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- &a {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n- *a\n",
		"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {apiVersion: fedlearner.k8s.io/v1alpha1, kind: FLApp, metadata: {name: a, uid: [1]}, spec: {role: Leader, flReplicaSpecs: {W: {replicas: 1}}}}\n",
		"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {apiVersion: fedlearner.k8s.io/v1alpha1, kind: FLApp, metadata: {name: a}, spec: {role: Leader, flReplicaSpecs: {W: {replicas: 2147483647, template: {spec: {containers: [{name: tensorflow}]}}}}}}\n",
		"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {apiVersion: fedlearner.k8s.io/v1alpha1, kind: FLApp, metadata: {name: a}, spec: [1]}\n",
		"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {apiVersion: fedlearner.k8s.io/v1alpha1, kind: FLApp, metadata: {name: a}, spec: {role: Leader, flReplicaSpecs: {W: {replicas: 1, template: {spec: {containers: [{name: tensorflow, ports: [{name: p, containerPort: 1e99}]}]}}}}}}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var out, stderr bytes.Buffer
		err := RunKRM(bytes.NewReader(data), &out, &stderr)
		require.NotContains(t, stderr.String(), "internal error", "a panic was recovered")

		rw := &kio.ByteReadWriter{Reader: bytes.NewReader(out.Bytes())}
		_, readErr := rw.Read()
		require.NoError(t, readErr, "the output is always a readable ResourceList:\n%s", out.String())
		assert.Equal(t, kio.ResourceListKind, rw.WrappingKind)

		if err != nil {
			require.ErrorIs(t, err, ErrFailed)
			assert.NotEmpty(t, stderr.String())
			assert.Contains(t, out.String(), "severity: error")
			return
		}
		onlyWarnings(t, stderr.String())
		fntest.ServicesReadAlike(t, out.Bytes(), true)
		var again bytes.Buffer
		require.NoError(t, RunKRM(bytes.NewReader(out.Bytes()), &again, &stderr), stderr.String())
		assert.Equal(t, fntest.WithoutResults(t, out.Bytes()), fntest.WithoutResults(t, again.Bytes()), "a second run changes nothing")
	})
}
