package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A document that is not an object is named by file, document and line,
// and its content is not repeated: a 3 MB scalar gives one short line.
func TestRenderErrorsAreShortAndNameThePlace(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big.yaml"), []byte(strings.Repeat("x", 3<<20)+"\n"), 0o644))
	out, stderr, err := runRenderTest(t, RenderOptions{Paths: []string{filepath.Join(dir, "big.yaml")}}, "")
	require.ErrorIs(t, err, ErrFailed)
	assert.Empty(t, out)
	assert.Less(t, len(stderr), 512, stderr)
	assert.Contains(t, stderr, "big.yaml: document 1 (line 1): not a Kubernetes object: a YAML scalar")

	multi := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  labels: {x: [}\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "multi.yaml"), []byte(multi), 0o644))
	_, stderr, err = runRenderTest(t, RenderOptions{Paths: []string{filepath.Join(dir, "multi.yaml")}}, "")
	require.ErrorIs(t, err, ErrFailed)
	assert.Equal(t, "error: "+filepath.Join(dir, "multi.yaml")+": document 2 (line 6): yaml: line 9: did not find expected node content\n", stderr,
		"where the document starts, then go-yaml's words naming the file's line (its parser counts from 0: the fault is on line 10), not the document's (4), and no library's type name")
}

// --max-document-nodes refuses a document before parsing it.
func TestRenderRefusesADocumentOverTheNodeCeiling(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "list.yaml"), []byte("apiVersion: v1\nkind: List\nitems:\n"+strings.Repeat("- {}\n", 1000)), 0o644))
	_, stderr, err := runRenderTest(t, RenderOptions{Paths: []string{dir}, MaxDocumentNodes: 1000}, "")
	require.ErrorIs(t, err, ErrFailed)
	assert.Contains(t, stderr, "list.yaml: document 1 (line 1): may hold up to")
	assert.Contains(t, stderr, "over the ceiling of 1000 per document (--max-document-nodes)")
}

// runRenderTest runs RunRender and returns stdout and stderr.
func runRenderTest(t *testing.T, opts RenderOptions, stdin string) (string, string, error) {
	t.Helper()
	var out, errOut strings.Builder
	err := RunRender(opts, strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), err
}

// --check prints the run's warnings whether or not the committed file is
// current.
func TestCheckPrintsWarningsEitherWay(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	app := func(role string, workers int) string {
		return "apiVersion: fedlearner.k8s.io/v1alpha1\nkind: FLApp\nmetadata: {name: job, namespace: " + strings.ToLower(role) +
			"}\nspec:\n  role: " + role + "\n  flReplicaSpecs:\n    Worker:\n      pair: true\n      replicas: " + string(rune('0'+workers)) +
			"\n      template: {spec: {containers: [{name: tensorflow}]}}\n"
	}
	require.NoError(t, os.MkdirAll("apps", 0o755))
	require.NoError(t, os.WriteFile("apps/job.yaml", []byte(app("Leader", 2)+"---\n"+app("Follower", 1)), 0o644))
	current, stderr, err := runRenderTest(t, RenderOptions{Paths: []string{"apps"}}, "")
	require.NoError(t, err)
	require.Contains(t, stderr, "warning")
	require.NoError(t, os.WriteFile("current.yaml", []byte(current), 0o644))
	require.NoError(t, os.WriteFile("stale.yaml", []byte(strings.Replace(current, "job-leader-worker-1", "job-leader-worker-9", 1)), 0o644))

	_, stderr, err = runRenderTest(t, RenderOptions{Paths: []string{"apps"}, Check: "current.yaml"}, "")
	require.NoError(t, err)
	assert.Contains(t, stderr, "warning: apps/job.yaml: document 2 (line 12): FLApp follower/job: spec.flReplicaSpecs[Worker].replicas")

	// The drift is the error Main prints, diff and all.
	out, stderr, err := runRenderTest(t, RenderOptions{Paths: []string{"apps"}, Check: "stale.yaml"}, "")
	require.Error(t, err)
	assert.Empty(t, out)
	assert.Contains(t, stderr, "warning: apps/job.yaml: document 2 (line 12): FLApp follower/job: spec.flReplicaSpecs[Worker].replicas")
	assert.Contains(t, err.Error(), "stale.yaml is out of date")
	assert.Contains(t, err.Error(), "-  name: job-leader-worker-9")
	assert.Contains(t, err.Error(), "+  name: job-leader-worker-1")
}

// --strict makes every warning a failure: Argo CD discards a successful
// plugin's stderr, so a warning would never be seen there.
func TestStrictFailsOnWarnings(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	app := func(role string, workers int) string {
		return "apiVersion: fedlearner.k8s.io/v1alpha1\nkind: FLApp\nmetadata: {name: job, namespace: " + strings.ToLower(role) +
			"}\nspec:\n  role: " + role + "\n  flReplicaSpecs:\n    Worker:\n      pair: true\n      replicas: " + string(rune('0'+workers)) +
			"\n      template: {spec: {containers: [{name: tensorflow}]}}\n"
	}
	require.NoError(t, os.WriteFile("mismatch.yaml", []byte(app("Leader", 2)+"---\n"+app("Follower", 1)), 0o644))
	out, stderr, err := runRenderTest(t, RenderOptions{Paths: []string{"mismatch.yaml"}, Strict: true}, "")
	require.ErrorIs(t, err, ErrFailed)
	assert.Empty(t, out)
	assert.Contains(t, stderr, "warning: mismatch.yaml: document 2 (line 12): FLApp follower/job")
	assert.Contains(t, stderr, "error: 1 warning(s) above, and --strict makes every warning a failure")

	require.NoError(t, os.WriteFile("matched.yaml", []byte(app("Leader", 2)+"---\n"+app("Follower", 2)), 0o644))
	out, stderr, err = runRenderTest(t, RenderOptions{Paths: []string{"matched.yaml"}, Strict: true}, "")
	require.NoError(t, err, stderr)
	assert.Contains(t, out, "kind: Service")
	assert.Empty(t, stderr)
}
