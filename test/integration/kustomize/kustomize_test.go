// Package kustomize runs examples/kustomize with the real kustomize
// (v5.8.1, installed by the test itself) and the freshly built binary, in the
// exec form the README gives for development. The committed container form
// runs through podman in test/e2e/clients/kustomize.
package kustomize

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	h "github.com/fedlearner/flapp-services/test/integration/internal/harness"
)

var kustomizeBin string

func TestMain(m *testing.M) { os.Exit(h.Main(m)) }

func kustomize(t *testing.T) string {
	t.Helper()
	if kustomizeBin == "" {
		kustomizeBin = h.Kustomize(t)
	}
	return kustomizeBin
}

// build runs `kustomize build --enable-alpha-plugins --enable-exec DIR` from
// root, exactly as the README says (DIR relative to the repo root).
func build(t *testing.T, root, dir string) h.Result {
	t.Helper()
	return h.Run(t, root, nil, kustomize(t), "build", "--enable-alpha-plugins", "--enable-exec", dir)
}

// execForm is the README's "Development: exec" command, the one line that
// switches every example from the image to bin/flapp-services.
func execForm(t *testing.T) string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join(h.RepoRoot(), "examples/kustomize/README.md"))
	require.NoError(t, err)
	for _, line := range strings.Split(string(readme), "\n") {
		if strings.HasPrefix(line, "perl -pi -e ") && strings.HasSuffix(line, "examples/kustomize/*/flapp-services.yaml") {
			return line
		}
	}
	t.Fatal(`examples/kustomize/README.md: no "perl -pi -e ... examples/kustomize/*/flapp-services.yaml" line`)
	return ""
}

// sandbox copies examples/kustomize into a temporary repository root (binary
// at bin/flapp-services) and switches it to the exec form, verbatim as the
// README says.
func sandbox(t *testing.T) string {
	t.Helper()
	root := h.Sandbox(t, "examples/kustomize")
	res := h.Run(t, root, nil, "bash", "-eo", "pipefail", "-c", execForm(t))
	require.Equal(t, 0, res.ExitCode, "README exec-form command: %s", res.Stderr)
	files, err := filepath.Glob(filepath.Join(root, "examples/kustomize/*/flapp-services.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		assert.Contains(t, string(b), "exec:\n        path: ../../../bin/flapp-services\n", f)
		assert.NotContains(t, string(b), "container:", f)
	}
	return root
}

func mustBuild(t *testing.T, root, dir string) []h.Object {
	t.Helper()
	res := build(t, root, dir)
	require.Equal(t, 0, res.ExitCode, "kustomize build %s failed:\n%s", dir, res.Stderr)
	objs := h.MustParseObjects(t, []byte(res.Stdout))
	assert.Empty(t, h.LeakedAnnotations(objs), "KRM function annotations leaked into the build output")
	return objs
}

var (
	flappPort = h.Port{Name: "flapp-port", Port: 50051}
	tfPort    = h.Port{Name: "tf-port", Port: 50052}
)

func leaderServices(ns string) []h.ServiceSpec {
	var s []h.ServiceSpec
	s = append(s, h.Replicas("mnist", ns, "Leader", "Master", 1, flappPort)...)
	s = append(s, h.Replicas("mnist", ns, "Leader", "PS", 1, flappPort, tfPort)...)
	s = append(s, h.Replicas("mnist", ns, "Leader", "Worker", 2, flappPort, tfPort)...)
	return s
}

func flapp(t *testing.T, objs []h.Object, key string) *unstructured.Unstructured {
	t.Helper()
	o, ok := h.OfKind(objs, "FLApp")[key]
	require.True(t, ok, "FLApp %s missing from the output; have %v", key, h.Keys(h.OfKind(objs, "FLApp")))
	return &unstructured.Unstructured{Object: o}
}

// The ConfigMap-configured leader: builtin namespace/labels run before the
// function, so the Services are generated straight into fl-leader and do not
// carry the kustomization's labels.
func TestLeaderConfigMap(t *testing.T) {
	root := sandbox(t)
	objs := mustBuild(t, root, "examples/kustomize/leader")

	app := flapp(t, objs, "fl-leader/mnist")
	assert.Equal(t, "mnist-federation", app.GetLabels()["app.kubernetes.io/part-of"])
	h.CheckServices(t, objs, leaderServices("fl-leader"), nil)
	assert.Len(t, objs, 5, "the FLApp and its 4 Services, nothing else (the function config is not emitted)")

	// Deterministic: a second build gives the same bytes.
	first := build(t, root, "examples/kustomize/leader").Stdout
	second := build(t, root, "examples/kustomize/leader").Stdout
	assert.Equal(t, first, second, "kustomize build is not deterministic")
}

// The follower, configured by the typed FLAppServices kind.
func TestFollowerTypedConfig(t *testing.T) {
	root := sandbox(t)
	objs := mustBuild(t, root, "examples/kustomize/follower")

	flapp(t, objs, "fl-follower/mnist")
	var want []h.ServiceSpec
	want = append(want, h.Replicas("mnist", "fl-follower", "Follower", "Master", 1, flappPort)...)
	want = append(want, h.Replicas("mnist", "fl-follower", "Follower", "Worker", 2, flappPort, tfPort)...)
	h.CheckServices(t, objs, want, nil)
	assert.Len(t, objs, 4)
}

// An overlay above the kustomization that ran the function moves FLApp and
// Services together and may add metadata labels; selectors are untouched.
func TestStagingOverlay(t *testing.T) {
	root := sandbox(t)
	objs := mustBuild(t, root, "examples/kustomize/staging")

	app := flapp(t, objs, "fl-leader-staging/mnist")
	assert.Equal(t, "staging", app.GetLabels()["environment"])
	h.CheckServices(t, objs, leaderServices("fl-leader-staging"), map[string]string{"environment": "staging"})
	assert.Len(t, objs, 5)
}

// commonLabels, namePrefix and namespace in the SAME kustomization as the
// function run before it: the function sees the final FLApp name and
// namespace, the Services follow them, and their selector stays the four
// operator labels (the operator labels pods with the final FLApp name).
func TestBuiltinsInSameKustomizationRunFirst(t *testing.T) {
	root := sandbox(t)
	dir := filepath.Join(root, "examples/kustomize/leader")
	writeFile(t, filepath.Join(dir, "kustomization.yaml"), `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: fl-team-a
namePrefix: team-a-
commonLabels:
  team: a
resources:
  - mnist-leader.yaml
transformers:
  - flapp-services.yaml
`)
	objs := mustBuild(t, root, "examples/kustomize/leader")
	app := flapp(t, objs, "fl-team-a/team-a-mnist")
	assert.Equal(t, "a", app.GetLabels()["team"])
	var want []h.ServiceSpec
	for _, s := range leaderServices("fl-team-a") {
		s.App = "team-a-mnist"
		want = append(want, s)
	}
	h.CheckServices(t, objs, want, nil)
}

// The pitfall the README warns about, pinned down: commonLabels in an overlay
// ABOVE the function also rewrites the Services' selectors, which then no
// longer match the operator's pods. If kustomize ever changes this, the
// README must change too. flapp-services render, the check the README tells
// kustomize users to run in CI, refuses that very overlay, naming the label
// and the overlay's field.
func TestCommonLabelsInOverlayRewritesSelectors(t *testing.T) {
	for name, labels := range map[string]string{
		"commonLabels":                 "commonLabels:\n  team: a\n",
		"labels with includeSelectors": "labels:\n  - pairs:\n      team: a\n    includeSelectors: true\n",
	} {
		t.Run(name, func(t *testing.T) {
			root := sandbox(t)
			dir := filepath.Join(root, "examples/kustomize/pitfall")
			require.NoError(t, os.MkdirAll(dir, 0o755))
			writeFile(t, filepath.Join(dir, "kustomization.yaml"), `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ../leader
`+labels)
			objs := mustBuild(t, root, "examples/kustomize/pitfall")
			require.Len(t, h.OfKind(objs, "Service"), 4)
			for key, svc := range h.OfKind(objs, "Service") {
				sel, _, _ := unstructured.NestedStringMap(svc, "spec", "selector")
				assert.Equal(t, "a", sel["team"], "%s: kustomize no longer adds %s to selectors; update the README", key, name)
			}
			res := h.Run(t, root, nil, h.Binary(t), "render", "examples/kustomize/pitfall")
			assert.Equal(t, 1, res.ExitCode, res.Stderr)
			assert.Empty(t, res.Stdout)
			field := map[string]string{"commonLabels": "commonLabels", "labels with includeSelectors": "labels"}[name]
			assert.Contains(t, res.Stderr, `spec.selector[team]: "a", a Service of FLApp fl-leader/mnist, would not work beside the fedlearner operator`)
			assert.Contains(t, res.Stderr, "by "+field+" in examples/kustomize/pitfall/kustomization.yaml: list the flapp-services entry in the transformers of examples/kustomize/pitfall/kustomization.yaml, after that change")
		})
	}
}

// A bad FLApp fails the whole build, and the function's own message is
// visible in kustomize's error output.
func TestBadFLAppFailsBuild(t *testing.T) {
	root := sandbox(t)
	dir := filepath.Join(root, "examples/kustomize/leader")
	writeFile(t, filepath.Join(dir, "broken.yaml"), h.BrokenFLApp(""))
	writeFile(t, filepath.Join(dir, "kustomization.yaml"), `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: fl-leader
resources:
  - mnist-leader.yaml
  - broken.yaml
transformers:
  - flapp-services.yaml
`)
	res := build(t, root, "examples/kustomize/leader")
	assert.NotEqual(t, 0, res.ExitCode, "kustomize build must fail on a bad FLApp")
	assert.Empty(t, strings.TrimSpace(res.Stdout), "nothing may be printed on stdout when the build fails")
	assert.Contains(t, res.Stderr, "no-tf", "the error names the bad FLApp")
	assert.Contains(t, res.Stderr, "tensorflow", "the function's message (no tensorflow container) is visible")
}

// The committed examples show the image first: every function config is a
// `container:` entry naming the published image (run for real through podman
// by test/e2e/clients/kustomize).
func TestExamplesUseTheImage(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(h.RepoRoot(), "examples/kustomize/*/flapp-services.yaml"))
	require.NoError(t, err)
	require.Len(t, files, 3, "leader, follower, scale-up")
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		objs := h.MustParseObjects(t, b)
		require.Len(t, objs, 1, f)
		u := unstructured.Unstructured{Object: objs[0]}
		fn := u.GetAnnotations()["config.kubernetes.io/function"]
		assert.Regexp(t, `^container:\n  image: ghcr\.io/fedlearner/flapp-services:v\d+\.\d+\.\d+\n$`, fn, f)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

// Every `.cache/bin/kustomize build --enable-alpha-plugins --enable-exec ...`
// line of the README (the development form) runs verbatim from the repository
// root and succeeds.
func TestReadmeCommands(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(h.RepoRoot(), "examples/kustomize/README.md"))
	require.NoError(t, err)
	assert.Contains(t, string(readme), "GOBIN=$PWD/.cache/bin go install sigs.k8s.io/kustomize/kustomize/v5@"+h.KustomizeVersion)
	root := sandbox(t)
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".cache/bin"), 0o755))
	require.NoError(t, os.Symlink(kustomize(t), filepath.Join(root, ".cache/bin/kustomize")))
	var ran int
	for _, line := range strings.Split(string(readme), "\n") {
		if !strings.HasPrefix(line, ".cache/bin/kustomize build --enable-alpha-plugins --enable-exec ") {
			continue
		}
		ran++
		res := h.Run(t, root, nil, "bash", "-eo", "pipefail", "-c", line)
		require.Equal(t, 0, res.ExitCode, "%s\n%s", line, res.Stderr)
		objs := h.MustParseObjects(t, []byte(res.Stdout))
		assert.NotEmpty(t, h.OfKind(objs, "Service"), line)
	}
	assert.Equal(t, 4, ran, "README build commands")
}

// An overlay that patches the FLApp re-runs the function: it replaces the
// base's Services and adds the missing ones.
func TestScaleUpOverlayReRunsFunction(t *testing.T) {
	root := sandbox(t)
	objs := mustBuild(t, root, "examples/kustomize/scale-up")
	var want []h.ServiceSpec
	want = append(want, h.Replicas("mnist", "fl-leader", "Leader", "Master", 1, flappPort)...)
	want = append(want, h.Replicas("mnist", "fl-leader", "Leader", "PS", 1, flappPort, tfPort)...)
	want = append(want, h.Replicas("mnist", "fl-leader", "Leader", "Worker", 4, flappPort, tfPort)...)
	h.CheckServices(t, objs, want, nil)
	assert.Len(t, objs, 7)
}

// Scaling down in an overlay that re-runs the function prunes the base's
// Services above the new replica count; without re-running, they stay stale
// (the pitfall the scale-up README section warns about).
func TestScaleDownOverlay(t *testing.T) {
	root := sandbox(t)
	dir := filepath.Join(root, "examples/kustomize/scale-up")
	b, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	require.NoError(t, err)
	require.Contains(t, string(b), "value: 4")
	down := strings.Replace(string(b), "value: 4", "value: 1", 1)
	writeFile(t, filepath.Join(dir, "kustomization.yaml"), down)

	objs := mustBuild(t, root, "examples/kustomize/scale-up")
	var want []h.ServiceSpec
	want = append(want, h.Replicas("mnist", "fl-leader", "Leader", "Master", 1, flappPort)...)
	want = append(want, h.Replicas("mnist", "fl-leader", "Leader", "PS", 1, flappPort, tfPort)...)
	want = append(want, h.Replicas("mnist", "fl-leader", "Leader", "Worker", 1, flappPort, tfPort)...)
	h.CheckServices(t, objs, want, nil)

	// Same overlay without the transformers: entry: mnist-leader-worker-1 stays.
	writeFile(t, filepath.Join(dir, "kustomization.yaml"), strings.Replace(down, "transformers:\n  - flapp-services.yaml\n", "", 1))
	objs = mustBuild(t, root, "examples/kustomize/scale-up")
	assert.Contains(t, h.OfKind(objs, "Service"), "fl-leader/mnist-leader-worker-1",
		"kustomize no longer keeps base-generated Services in an overlay; update the README")
}

// namePrefix in an overlay above the function renames FLApp and Services but
// leaves app-name in the selectors: the README says never to do that.
func TestNamePrefixInOverlayKeepsOldSelector(t *testing.T) {
	root := sandbox(t)
	dir := filepath.Join(root, "examples/kustomize/pitfall")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	writeFile(t, filepath.Join(dir, "kustomization.yaml"), "resources:\n  - ../leader\nnamePrefix: x-\n")
	objs := mustBuild(t, root, "examples/kustomize/pitfall")
	flapp(t, objs, "fl-leader/x-mnist")
	svc, ok := h.OfKind(objs, "Service")["fl-leader/x-mnist-leader-master-0"]
	require.True(t, ok)
	sel, _, _ := unstructured.NestedStringMap(svc, "spec", "selector")
	assert.Equal(t, "mnist", sel["app-name"], "kustomize now rewrites app-name too; update the README")
}
