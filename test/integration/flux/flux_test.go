// Package flux checks examples/flux: the committed render, the CI workflow's
// steps, the drift check (`render --check`) and the build of the rendered
// folder with Flux's own build code, as kustomize-controller runs it
// (github.com/fluxcd/pkg/kustomize: generated kustomization.yaml, SecureBuild
// rooted at the source's work dir, plugins disabled).
package flux

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fluxcd/pkg/kustomize"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	h "github.com/fedlearner/flapp-services/test/integration/internal/harness"
)

const (
	renderedFile = "examples/flux/rendered/flapps.yaml"
	flappsDir    = "examples/flux/flapps"
)

func TestMain(m *testing.M) { os.Exit(h.Main(m)) }

var (
	flappPort = h.Port{Name: "flapp-port", Port: 50051}
	tfPort    = h.Port{Name: "tf-port", Port: 50052}
)

func expectedServices() []h.ServiceSpec {
	var s []h.ServiceSpec
	s = append(s, h.Replicas("mnist", "fl-follower", "Follower", "Master", 1, flappPort)...)
	s = append(s, h.Replicas("mnist", "fl-follower", "Follower", "Worker", 2, flappPort, tfPort)...)
	s = append(s, h.Replicas("mnist", "fl-leader", "Leader", "Master", 1, flappPort)...)
	s = append(s, h.Replicas("mnist", "fl-leader", "Leader", "Worker", 2, flappPort, tfPort)...)
	return s
}

// fluxObjects reads the multi-document files of a Flux cluster folder.
func fluxObjects(t *testing.T, rel string) map[string]*unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(h.RepoRoot(), rel))
	require.NoError(t, err)
	out := map[string]*unstructured.Unstructured{}
	for _, o := range h.MustParseObjects(t, b) {
		u := unstructured.Unstructured{Object: o}
		out[u.GetKind()] = &u
	}
	return out
}

// fluxBuild does what kustomize-controller does with a Kustomization whose
// source artifact is unpacked in workDir: generate kustomization.yaml in
// spec.path when there is none, then SecureBuild with plugins disabled.
func fluxBuild(t *testing.T, workDir string, ks unstructured.Unstructured) ([]h.Object, error) {
	t.Helper()
	p, _, _ := unstructured.NestedString(ks.Object, "spec", "path")
	dirPath := filepath.Join(workDir, p)
	gen := kustomize.NewGenerator(workDir, ks)
	action, err := gen.WriteFile(dirPath, kustomize.WithSaveOriginalKustomization())
	if err != nil {
		return nil, err
	}
	defer func() { _ = kustomize.CleanDirectory(dirPath, action) }()
	resMap, err := kustomize.SecureBuild(workDir, dirPath, false)
	if err != nil {
		return nil, err
	}
	b, err := resMap.AsYaml()
	if err != nil {
		return nil, err
	}
	return h.MustParseObjects(t, b), nil
}

func checkRendered(t *testing.T, objs []h.Object) {
	t.Helper()
	assert.Equal(t, []string{"fl-follower/mnist", "fl-leader/mnist"}, h.Keys(h.OfKind(objs, "FLApp")))
	h.CheckServices(t, objs, expectedServices(), nil)
	assert.Len(t, objs, 2+len(expectedServices()))
	assert.Empty(t, h.LeakedAnnotations(objs))
	for _, o := range objs {
		u := unstructured.Unstructured{Object: o}
		for k := range u.GetLabels() {
			assert.False(t, strings.HasPrefix(k, "kustomize.toolkit.fluxcd.io/"), "%s: the render must not write Flux's label %s", h.Key(o), k)
		}
	}
}

// The committed render is exactly what the binary renders now.
func TestCommittedRenderIsUpToDate(t *testing.T) {
	res := h.Run(t, h.RepoRoot(), nil, h.Binary(t), "render", flappsDir)
	require.Equal(t, 0, res.ExitCode, res.Stderr)
	committed, err := os.ReadFile(filepath.Join(h.RepoRoot(), renderedFile))
	require.NoError(t, err)
	assert.Equal(t, string(committed), res.Stdout,
		"%s is stale: run `bin/flapp-services render %s > %s`", renderedFile, flappsDir, renderedFile)
	checkRendered(t, h.MustParseObjects(t, committed))

	// The render is a fixed point: rendering the rendered file again gives
	// the same bytes (its own Services are recognised and replaced).
	again := h.Run(t, h.RepoRoot(), nil, h.Binary(t), "render", renderedFile)
	require.Equal(t, 0, again.ExitCode, again.Stderr)
	assert.Equal(t, string(committed), again.Stdout, "render(render(x)) != render(x)")
}

// Flux builds the committed rendered folder from a GitRepository artifact.
func TestFluxBuildsRenderedFolderFromGit(t *testing.T) {
	objs := fluxObjects(t, "examples/flux/clusters/git/flapps.yaml")
	src, ks := objs["GitRepository"], objs["Kustomization"]
	require.Equal(t, "source.toolkit.fluxcd.io/v1", src.GetAPIVersion())
	require.Equal(t, "kustomize.toolkit.fluxcd.io/v1", ks.GetAPIVersion())
	prune, _, _ := unstructured.NestedBool(ks.Object, "spec", "prune")
	assert.True(t, prune, "prune: true, so Services that fall out of the render are deleted")
	ref, _, _ := unstructured.NestedString(ks.Object, "spec", "sourceRef", "name")
	assert.Equal(t, src.GetName(), ref)

	// The artifact of a GitRepository is the repository; copy what matters.
	workDir := h.Sandbox(t, "examples/flux")
	built, err := fluxBuild(t, workDir, *ks)
	require.NoError(t, err)
	checkRendered(t, built)
}

// The workflow's Render step produces the folder pushed with `flux push
// artifact`; Flux builds it from an OCIRepository at path ./.
func TestFluxBuildsPushedArtifact(t *testing.T) {
	root := h.Sandbox(t, "examples/flux")
	res := runStep(t, root, "push-artifact", "render")
	require.Equal(t, 0, res.ExitCode, res.Stderr)

	objs := fluxObjects(t, "examples/flux/clusters/oci/flapps.yaml")
	require.Equal(t, "source.toolkit.fluxcd.io/v1", objs["OCIRepository"].GetAPIVersion())
	// The OCI artifact's content is unpacked as the work dir.
	built, err := fluxBuild(t, filepath.Join(root, "out"), *objs["Kustomization"])
	require.NoError(t, err)
	checkRendered(t, built)
}

// Why the render happens in CI: kustomize-controller refuses the exec
// transformer of examples/kustomize.
func TestFluxRefusesTheKRMFunction(t *testing.T) {
	workDir := h.Sandbox(t, "examples/kustomize")
	ks := unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
		"metadata": map[string]any{"name": "leader", "namespace": "flux-system"},
		"spec":     map[string]any{"path": "./examples/kustomize/leader", "prune": true},
	}}
	_, err := fluxBuild(t, workDir, ks)
	require.Error(t, err)
	assert.Contains(t, strings.ToLower(err.Error()), "plugin")
}

type workflow struct {
	Jobs map[string]struct {
		Steps []struct {
			ID    string `json:"id"`
			Run   string `json:"run"`
			Shell string `json:"shell"`
		} `json:"steps"`
	} `json:"jobs"`
}

// runStep runs the `run:` script of step id of job in the example workflow,
// verbatim, as GitHub Actions runs `shell: bash` (bash --noprofile --norc
// -eo pipefail), from root (the checkout), with flapp-services on PATH.
func runStep(t *testing.T, root, job, id string) h.Result {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(h.RepoRoot(), "examples/flux/github-actions/flapp-services.yaml"))
	require.NoError(t, err)
	var wf workflow
	require.NoError(t, yaml.Unmarshal(b, &wf))
	j, ok := wf.Jobs[job]
	require.True(t, ok, "job %s", job)
	for _, s := range j.Steps {
		if s.ID != id {
			continue
		}
		require.Equal(t, "bash", s.Shell, "step %s should use shell: bash (pipefail)", id)
		script := filepath.Join(t.TempDir(), "step.sh")
		require.NoError(t, os.WriteFile(script, []byte(s.Run), 0o644))
		binDir := filepath.Join(root, "bin")
		return h.Run(t, root, []string{"PATH=" + binDir + string(os.PathListSeparator) + os.Getenv("PATH")},
			"bash", "--noprofile", "--norc", "-eo", "pipefail", script)
	}
	t.Fatalf("no step %s in job %s", id, job)
	return h.Result{}
}

// The drift check: silent exit 0 on the committed render; exit 1 with a
// readable unified diff on stderr (stdout empty) when the committed file was
// edited or the FLApps changed without a re-render.
func TestDriftCheck(t *testing.T) {
	t.Run("up to date", func(t *testing.T) {
		root := h.Sandbox(t, "examples/flux")
		res := runStep(t, root, "drift-check", "drift-check")
		assert.Equal(t, 0, res.ExitCode, "stderr:\n%s", res.Stderr)
		assert.Empty(t, res.Stdout)
		assert.Empty(t, res.Stderr)
	})
	t.Run("rendered file edited", func(t *testing.T) {
		root := h.Sandbox(t, "examples/flux")
		p := filepath.Join(root, renderedFile)
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		require.Contains(t, string(b), "port: 50052")
		require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(b), "port: 50052", "port: 50099", 1)), 0o644))
		res := runStep(t, root, "drift-check", "drift-check")
		assert.Equal(t, 1, res.ExitCode)
		assert.Empty(t, res.Stdout)
		assertUnifiedDiff(t, res.Stderr)
		assert.Contains(t, res.Stderr, "-    port: 50099", "the committed (stale) line is shown as removed")
		assert.Contains(t, res.Stderr, "+    port: 50052", "the fresh line is shown as added")
	})
	t.Run("FLApp scaled up without re-render", func(t *testing.T) {
		root := h.Sandbox(t, "examples/flux")
		p := filepath.Join(root, flappsDir, "mnist-leader.yaml")
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(b), "replicas: 2", "replicas: 3", 1)), 0o644))
		res := runStep(t, root, "drift-check", "drift-check")
		assert.Equal(t, 1, res.ExitCode)
		assert.Empty(t, res.Stdout)
		assertUnifiedDiff(t, res.Stderr)
		assert.Contains(t, res.Stderr, "+  name: mnist-leader-worker-2")
	})
	t.Run("rendered file missing", func(t *testing.T) {
		root := h.Sandbox(t, "examples/flux")
		require.NoError(t, os.Remove(filepath.Join(root, renderedFile)))
		res := runStep(t, root, "drift-check", "drift-check")
		assert.NotEqual(t, 0, res.ExitCode)
		assert.Empty(t, res.Stdout)
		assert.NotEmpty(t, res.Stderr)
	})
}

func assertUnifiedDiff(t *testing.T, s string) {
	t.Helper()
	assert.Contains(t, s, "--- ", "unified diff header")
	assert.Contains(t, s, "+++ ", "unified diff header")
	assert.Contains(t, s, "@@ ", "unified diff hunk")
}

// The README's local re-render command reproduces the committed file.
func TestReadmeRenderCommand(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(h.RepoRoot(), "examples/flux/README.md"))
	require.NoError(t, err)
	const cmd = "bin/flapp-services render examples/flux/flapps > examples/flux/rendered/flapps.yaml"
	require.Contains(t, string(b), cmd)
	root := h.Sandbox(t, "examples/flux")
	c := exec.Command("bash", "-eo", "pipefail", "-c", cmd)
	c.Dir = root
	out, err := c.CombinedOutput()
	require.NoError(t, err, string(out))
	got, err := os.ReadFile(filepath.Join(root, renderedFile))
	require.NoError(t, err)
	want, err := os.ReadFile(filepath.Join(h.RepoRoot(), renderedFile))
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
}

// spec.targetNamespace of the Flux Kustomization moves FLApps and Services
// together; selectors stay the operator's four labels. spec.namePrefix does
// not (it renames, but app-name in the selectors stays): the README says to
// rename before rendering instead.
func TestFluxKustomizationOptions(t *testing.T) {
	objs := fluxObjects(t, "examples/flux/clusters/git/flapps.yaml")
	ks := objs["Kustomization"].DeepCopy()
	workDir := h.Sandbox(t, "examples/flux")

	// Only the leader, so that one target namespace makes sense.
	require.NoError(t, os.Remove(filepath.Join(workDir, renderedFile)))
	res := h.Run(t, workDir, nil, filepath.Join(workDir, "bin/flapp-services"), "render", filepath.Join(flappsDir, "mnist-leader.yaml"))
	require.Equal(t, 0, res.ExitCode, res.Stderr)
	require.NoError(t, os.WriteFile(filepath.Join(workDir, renderedFile), []byte(res.Stdout), 0o644))

	require.NoError(t, unstructured.SetNestedField(ks.Object, "fl-leader-prod", "spec", "targetNamespace"))
	built, err := fluxBuild(t, workDir, *ks)
	require.NoError(t, err)
	var want []h.ServiceSpec
	want = append(want, h.Replicas("mnist", "fl-leader-prod", "Leader", "Master", 1, flappPort)...)
	want = append(want, h.Replicas("mnist", "fl-leader-prod", "Leader", "Worker", 2, flappPort, tfPort)...)
	h.CheckServices(t, built, want, nil)
	assert.Contains(t, h.OfKind(built, "FLApp"), "fl-leader-prod/mnist")

	require.NoError(t, unstructured.SetNestedField(ks.Object, "x-", "spec", "namePrefix"))
	built, err = fluxBuild(t, workDir, *ks)
	require.NoError(t, err)
	svc, ok := h.OfKind(built, "Service")["fl-leader-prod/x-mnist-leader-master-0"]
	require.True(t, ok)
	sel, _, _ := unstructured.NestedStringMap(svc, "spec", "selector")
	assert.Equal(t, "mnist", sel["app-name"], "Flux's namePrefix now rewrites selectors; update the README")
}

// TestBothVariantsCheckFLAppHealth: the Git and the OCI Kustomization share
// the FLApp health checks and the settings that give them effect (the e2e
// suite runs the Git one with the real controller).
func TestBothVariantsCheckFLAppHealth(t *testing.T) {
	git := fluxObjects(t, "examples/flux/clusters/git/flapps.yaml")["Kustomization"]
	oci := fluxObjects(t, "examples/flux/clusters/oci/flapps.yaml")["Kustomization"]
	require.NotNil(t, git)
	require.NotNil(t, oci)
	exprs, _, _ := unstructured.NestedSlice(git.Object, "spec", "healthCheckExprs")
	require.Len(t, exprs, 1)
	hc, _ := exprs[0].(map[string]any)
	assert.Equal(t, "fedlearner.k8s.io/v1alpha1", hc["apiVersion"])
	assert.Equal(t, "FLApp", hc["kind"])
	for _, field := range [][]string{{"spec", "healthCheckExprs"}, {"spec", "wait"}, {"spec", "timeout"}, {"spec", "prune"}} {
		g, _, _ := unstructured.NestedFieldNoCopy(git.Object, field...)
		o, _, _ := unstructured.NestedFieldNoCopy(oci.Object, field...)
		assert.Equal(t, g, o, "%s", strings.Join(field, "."))
	}
}
