package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The command line at its boundaries, expectations by hand (README).

// inDir writes files into a fresh directory and makes it the current one.
func inDir(t *testing.T, files map[string]string) {
	t.Helper()
	dir := t.TempDir()
	for p, content := range files {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte(content), 0o644))
	}
	t.Chdir(dir)
}

const twoServices = "apiVersion: fedlearner.k8s.io/v1alpha1\nkind: FLApp\nmetadata: {name: a, namespace: ns}\n" +
	"spec:\n  role: Leader\n  peerSpecs: {Follower: {peerURL: x}}\n  flReplicaSpecs:\n" +
	"    Worker: {replicas: 2, template: {spec: {containers: [{name: tensorflow, ports: [{name: p, containerPort: 5000}]}]}}}\n"

// --max-services N: N Services render, N+1 fail, and 0 is refused as a
// usage error (README: a positive integer), not read as "unset".
func TestMaxServicesFlagBoundary(t *testing.T) {
	inDir(t, map[string]string{"a.yaml": twoServices,
		"config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {maxServices: \"1\"}\n"})
	code, out, stderr := runMain([]string{"render", "--max-services", "2", "a.yaml"}, "")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, 2, strings.Count(out, "kind: Service\n"))

	code, out, stderr = runMain([]string{"render", "--max-services", "2", "--config", "config.yaml", "a.yaml"}, "")
	require.Equal(t, 0, code, "the flag overrides the config: %s", stderr)
	assert.Equal(t, 2, strings.Count(out, "kind: Service\n"))

	code, out, stderr = runMain([]string{"render", "--config", "config.yaml", "a.yaml"}, "")
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Contains(t, stderr, "the input would produce 2 Services, more than maxServices (1)")

	code, out, stderr = runMain([]string{"render", "--max-services", "1", "a.yaml"}, "")
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Contains(t, stderr, "the input would produce 2 Services, more than maxServices (1)")

	for _, n := range []string{"0", "-1"} {
		code, out, stderr = runMain([]string{"render", "--max-services", n, "a.yaml"}, "")
		assert.Equal(t, 1, code, n)
		assert.Empty(t, out, n)
		assert.Equal(t, "error: --max-services must be a positive integer, not "+n+"\n", stderr, n)
	}
}

// The config's settings of 0, through --config: an error at the file.
func TestConfigZeroThroughRender(t *testing.T) {
	for _, key := range []string{"maxServices", "maxServicesPerFLApp"} {
		inDir(t, map[string]string{"a.yaml": twoServices,
			"config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {" + key + ": \"0\"}\n"})
		code, out, stderr := runMain([]string{"render", "--config", "config.yaml", "a.yaml"}, "")
		assert.Equal(t, 1, code, key)
		assert.Empty(t, out, key)
		assert.Contains(t, stderr, "functionConfig: "+key+" must be a positive integer, not \"0\"", key)
	}
}

// --max-build-count 0 is a usage error; the count itself is held by the scan
// (internal/kustomize's TestMaxBuildsBoundary).
func TestMaxBuildCountZero(t *testing.T) {
	inDir(t, map[string]string{"a.yaml": twoServices})
	code, out, stderr := runMain([]string{"render", "--max-build-count", "0", "a.yaml"}, "")
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Equal(t, "error: --max-build-count, --max-build-cost and --max-build-time must be positive\n", stderr)
	code, _, stderr = runMain([]string{"render", "--max-build-count", "1", "a.yaml"}, "")
	assert.Equal(t, 0, code, "no kustomization: one build is never needed: %s", stderr)
}

// A lone object read from a .json file is written back as JSON, as
// kio.ByteWriter writes a single node from a .json path (keys sorted,
// two-space indent); from a .yaml file, or with Services after it, the
// output is YAML.
func TestRenderLoneJSONObject(t *testing.T) {
	cm := `{"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "a"}, "data": {"k": "v"}}`
	inDir(t, map[string]string{"cm.json": cm, "cm.yaml": cm, "flapp.json": twoServices})
	code, out, stderr := runMain([]string{"render", "cm.json"}, "")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "{\n  \"apiVersion\": \"v1\",\n  \"data\": {\n    \"k\": \"v\"\n  },\n  \"kind\": \"ConfigMap\",\n  \"metadata\": {\n    \"name\": \"a\"\n  }\n}\n", out)

	code, out, stderr = runMain([]string{"render", "cm.yaml"}, "")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, cm+"\n", out, "YAML, in the style it was written (a flow mapping)")

	code, out, stderr = runMain([]string{"render", "flapp.json"}, "")
	require.Equal(t, 0, code, stderr)
	assert.False(t, strings.HasPrefix(out, "{"), out)
	assert.Equal(t, 3, strings.Count(out, "---\n")+1, "the FLApp and its two Services, as YAML documents:\n%s", out)
	assert.Contains(t, out, "  name: a-leader-worker-1\n")
}

// A separator line may carry a comment; any other text after --- is an
// error at the document it opens.
func TestRenderCommentedSeparator(t *testing.T) {
	inDir(t, map[string]string{
		"ok.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n--- # the second\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
		"bad.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n--- b\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
	})
	code, out, stderr := runMain([]string{"render", "ok.yaml"}, "")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n", out)

	code, out, stderr = runMain([]string{"render", "bad.yaml"}, "")
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Contains(t, stderr, "bad.yaml: document 2 (line 5): invalid document separator: --- b")
}
