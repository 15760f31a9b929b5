package cli

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/fedlearner/flapp-services/internal/repofs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The entry of overlayRepo's kustomizations: an exec path that does not
// exist, for the function is never executed.
const overlayEntry = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: flapp-services\n  annotations:\n" +
	"    config.kubernetes.io/function: |\n      exec:\n        path: /nonexistent/flapp-services\ndata:\n  ownerReferences: Never\n"

// A repository of kustomize overlays: a base FLApp with 2 Workers and
// flapp-services as its transformer, a staging overlay that keeps them,
// a prod overlay in another namespace that scales them to 4 and runs the
// function again.
func overlayRepo(t *testing.T, extra map[string]string) string {
	t.Helper()
	files := map[string]string{
		"base/kustomization.yaml":             "resources: [flapp.yaml]\ntransformers: [flapp-services.yaml]\n",
		"base/flapp.yaml":                     strings.Replace(goodFLApp, "  namespace: default\n", "", 1),
		"base/flapp-services.yaml":            overlayEntry,
		"overlays/staging/kustomization.yaml": "namespace: staging\nresources: [../../base]\n",
		"overlays/prod/kustomization.yaml": "namespace: prod\nresources: [../../base]\npatches:\n- target: {kind: FLApp, name: normal}\n" +
			"  patch: |-\n    - op: replace\n      path: /spec/flReplicaSpecs/Worker/replicas\n      value: 4\ntransformers: [flapp-services.yaml]\n",
		"overlays/prod/flapp-services.yaml": overlayEntry,
	}
	for k, v := range extra {
		files[k] = v
	}
	dir := writeFiles(t, files)
	t.Chdir(dir)
	return dir
}

// render builds a kustomization root as kustomize does, each entry run
// in process at its place, never executed (its exec path does not exist):
// the base's Services follow the overlay's namespace, and the overlay that
// scales the FLApp runs the function again. kustomize's order: Services
// before the FLApp.
func TestRenderBuildsKustomizationOverlays(t *testing.T) {
	overlayRepo(t, nil)
	for dir, want := range map[string][]string{
		"overlays/staging": {"Service/staging/normal-leader-worker-0", "Service/staging/normal-leader-worker-1", "FLApp/staging/normal"},
		"overlays/prod": {"Service/prod/normal-leader-worker-0", "Service/prod/normal-leader-worker-1",
			"Service/prod/normal-leader-worker-2", "Service/prod/normal-leader-worker-3", "FLApp/prod/normal"},
		"base": {"Service//normal-leader-worker-0", "Service//normal-leader-worker-1", "FLApp//normal"},
	} {
		out, stderr, err := runRender(t, RenderOptions{Paths: []string{dir}}, "")
		require.NoError(t, err, stderr)
		assert.Equal(t, want, objects(t, out), dir)
		assert.NotContains(t, out, "kind: Kustomization", "a kustomization is built, never printed")
		assert.NotContains(t, out, "config.kubernetes.io/origin", "the origins the build recorded stay out of the render")
		assert.NotContains(t, out, "flapp-services.yaml", "the function's entry is configuration, not a manifest")
	}
}

// The entry is the render's configuration; the flags override it, and a
// --config beside it is an error.
func TestRenderBuildUsesTheTransformerEntryAsConfig(t *testing.T) {
	overlayRepo(t, map[string]string{"base/flapp.yaml": strings.Replace(goodFLApp, "  namespace: default\n", "  uid: 6f4d3c2b-1a09-4e8f-9d7c-5b3a2f1e0d9c\n", 1)})
	out, stderr, err := runRender(t, RenderOptions{Paths: []string{"base"}}, "")
	require.NoError(t, err, stderr)
	assert.NotContains(t, out, "ownerReferences", "the entry says Never")
	out, stderr, err = runRender(t, RenderOptions{Paths: []string{"base"}, OwnerReferences: "IfKnown"}, "")
	require.NoError(t, err, stderr)
	assert.Contains(t, out, "ownerReferences", "--owner-references overrides the entry")

	require.NoError(t, os.WriteFile("cfg.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"), 0o644))
	_, stderr, err = runRender(t, RenderOptions{Paths: []string{"base"}, Config: "cfg.yaml"}, "")
	require.ErrorIs(t, err, ErrFailed)
	assert.Contains(t, stderr, "both --config cfg.yaml and flapp-services' entry base/flapp-services.yaml (in base/kustomization.yaml) configure the render")
}

// Each entry runs with its own configuration, as kustomize runs each: the
// overlay's Required fails where the base's Never did not.
func TestRenderBuildRunsEachEntryWithItsOwnConfig(t *testing.T) {
	overlayRepo(t, map[string]string{
		"overlays/prod/kustomization.yaml":    "resources: [../../base]\ntransformers: [fn.yaml]\n",
		"overlays/prod/fn.yaml":               "apiVersion: fn.fedlearner.k8s.io/v1alpha1\nkind: FLAppServices\nmetadata: {name: fn}\nspec: {ownerReferences: Required}\n",
		"overlays/staging/kustomization.yaml": "resources: [../../base]\ntransformers: [fn.yaml]\n",
		"overlays/staging/fn.yaml":            "apiVersion: fn.fedlearner.k8s.io/v1alpha1\nkind: FLAppServices\nmetadata: {name: fn}\nspec: {ownerReferences: Never}\n",
	})
	out, stderr, err := runRender(t, RenderOptions{Paths: []string{"overlays/prod"}}, "")
	require.ErrorIs(t, err, ErrFailed)
	assert.Empty(t, out)
	assert.Contains(t, stderr, "error: base/flapp.yaml (in the build of overlays/prod): FLApp normal: metadata.uid: Required value: ownerReferences is Required")
	out, stderr, err = runRender(t, RenderOptions{Paths: []string{"overlays/staging"}}, "")
	require.NoError(t, err, stderr)
	assert.Contains(t, out, "kind: Service")
}

// Every Service a build outputs must be one the fedlearner operator, given
// the FLApps of the same output, would make and claim (the output's
// invariant, fn/fit.go): an overlay that changes the FLApp or its Services
// after the base's entry ran is refused, naming the Service or FLApp, the
// field, and the overlay's transformation; one that leaves them fitting
// renders. Expectations are the operator's rules (README.md, Beside the operator): its
// pods are labelled app-name: <the FLApp's name>, role, fl-replica-type,
// fl-replica-index; it claims Services by app-name and role.
func TestRenderBuildServicesFitTheOperator(t *testing.T) {
	const scale = "patches:\n- target: {kind: FLApp, name: normal}\n  patch: |-\n    - op: replace\n      path: /spec/flReplicaSpecs/Worker/replicas\n      value: 4\n"
	other := strings.Replace(strings.Replace(goodFLApp, "  namespace: default\n", "", 1), "name: normal", "name: other", 1)
	for name, tc := range map[string]struct {
		kustomization string
		extra         map[string]string
		want          []string // in stderr; none: it renders
		out           []string // in stdout when it renders
	}{
		"namePrefix": {kustomization: "resources: [../../base]\nnamePrefix: team-\n", want: []string{
			"Service team-normal-leader-worker-0: metadata.labels[app-name]: \"normal\", a Service of FLApp team-normal, would not work beside the fedlearner operator: the operator claims only Services labelled app-name: team-normal, role: leader; changed after the flapp-services entry that made it, by namePrefix in overlays/prod/kustomization.yaml: list the flapp-services entry in the transformers of overlays/prod/kustomization.yaml, after that change",
			"Service team-normal-leader-worker-1: spec.selector[app-name]: \"normal\", a Service of FLApp team-normal",
		}},
		"nameSuffix": {kustomization: "resources: [../../base]\nnameSuffix: -x\n", want: []string{
			// The operator names FLApp normal-x's Services normal-x-leader-worker-<i>: the base's are not its.
			"FLApp normal-x: FLApp normal-x needs Service normal-x-leader-worker-0, which the build's output lacks; changed after the flapp-services entry that made it, by nameSuffix in overlays/prod/kustomization.yaml",
			"Service normal-leader-worker-0-x: metadata.name: Service normal-leader-worker-0-x was generated by flapp-services, but no FLApp of the output would make it: its FLApp normal is not in the output",
		}},
		"commonLabels": {kustomization: "resources: [../../base]\ncommonLabels: {team: ml}\n", want: []string{
			"Service normal-leader-worker-0: spec.selector[team]: \"ml\", a Service of FLApp normal, would not work beside the fedlearner operator: the operator labels this replica's pod {app-name: normal, fl-replica-index: 0, fl-replica-type: worker, role: leader}: the Service selects no pod; changed after the flapp-services entry that made it, by commonLabels in overlays/prod/kustomization.yaml",
		}},
		"labels with selectors": {kustomization: "resources: [../../base]\nlabels: [{pairs: {team: ml}, includeSelectors: true}]\n", want: []string{
			"Service normal-leader-worker-1: spec.selector[team]: \"ml\"", "by labels in overlays/prod/kustomization.yaml",
		}},
		"a patch to a Service's selector": {kustomization: "resources: [../../base]\npatches:\n- target: {kind: Service}\n  patch: |-\n    - op: remove\n      path: /spec/selector/fl-replica-index\n", want: []string{
			"Service normal-leader-worker-0: spec.selector[fl-replica-index]: missing, a Service of FLApp normal, would not work beside the fedlearner operator: without it the Service selects other replicas' pods too",
			"by patches in overlays/prod/kustomization.yaml",
		}},
		"a patch to a Service's ports": {kustomization: "resources: [../../base]\npatches:\n- target: {kind: Service}\n  patch: |-\n    - op: replace\n      path: /spec/ports/0/port\n      value: 9999\n", want: []string{
			"Service normal-leader-worker-0: spec.ports: \"[flapp-port 9999/TCP -> flapp-port]\", a Service of FLApp normal, would not work beside the fedlearner operator: the tensorflow container's ports make [flapp-port 50051/TCP -> flapp-port]; changed after",
		}},
		"a scale after the entry": {kustomization: "namespace: prod\nresources: [../../base]\n" + scale, want: []string{
			"FLApp prod/normal needs Service prod/normal-leader-worker-2, which the build's output lacks; changed after the flapp-services entry that made it, by patches in overlays/prod/kustomization.yaml",
		}},
		"a scale down after the entry": {kustomization: "resources: [../../base]\npatches:\n- target: {kind: FLApp, name: normal}\n  patch: |-\n    - op: replace\n      path: /spec/flReplicaSpecs/Worker/replicas\n      value: 1\n", want: []string{
			"Service normal-leader-worker-1: metadata.name: Service normal-leader-worker-1 was generated by flapp-services, but no FLApp of the output would make it: FLApp normal makes no Service of that name",
		}},
		"an FLApp no entry saw": {kustomization: "namespace: prod\nresources: [../../base, more.yaml]\n", extra: map[string]string{"overlays/prod/more.yaml": other}, want: []string{
			"FLApp prod/other needs Service prod/other-leader-worker-0, which the build's output lacks",
		}},

		"a namespace":                          {kustomization: "namespace: prod\nresources: [../../base]\n", out: []string{"name: normal-leader-worker-1\n  namespace: prod\n"}},
		"labels without selectors":             {kustomization: "resources: [../../base]\nlabels: [{pairs: {team: ml}}]\n", out: []string{"team: ml"}},
		"a patch to the pod template's labels": {kustomization: "resources: [../../base]\npatches:\n- target: {kind: FLApp}\n  patch: |-\n    - op: add\n      path: /spec/flReplicaSpecs/Worker/template/metadata\n      value: {labels: {team: ml}}\n", out: []string{"team: ml"}},
		"a selector on a template label":       {kustomization: "resources: [../../base]\npatches:\n- target: {kind: FLApp}\n  patch: |-\n    - op: add\n      path: /spec/flReplicaSpecs/Worker/template/metadata\n      value: {labels: {team: ml}}\n- target: {kind: Service}\n  patch: |-\n    - op: add\n      path: /spec/selector/team\n      value: ml\n", out: []string{"team: ml"}},
		"the entry again after a rename":       {kustomization: "resources: [../../base]\nnamePrefix: team-\ntransformers: [flapp-services.yaml]\n", out: []string{"name: team-normal-leader-worker-1\n", "app-name: team-normal\n"}},
		"the entry again after a scale":        {kustomization: "namespace: prod\nresources: [../../base]\n" + scale + "transformers: [flapp-services.yaml]\n", out: []string{"name: normal-leader-worker-3\n"}},
	} {
		t.Run(name, func(t *testing.T) {
			extra := map[string]string{"overlays/prod/kustomization.yaml": tc.kustomization}
			for k, v := range tc.extra {
				extra[k] = v
			}
			overlayRepo(t, extra)
			out, stderr, err := runRender(t, RenderOptions{Paths: []string{"overlays/prod"}}, "")
			if len(tc.want) == 0 {
				require.NoError(t, err, stderr)
				for _, w := range tc.out {
					assert.Contains(t, out, w)
				}
				return
			}
			require.ErrorIs(t, err, ErrFailed)
			assert.Empty(t, out, "nothing is printed when the render fails")
			for _, w := range tc.want {
				assert.Contains(t, stderr, w)
			}
		})
	}
}

// Nothing from the repository is executed and nothing is fetched: every
// other function, plugin, Helm chart and remote resource is refused, naming
// the kustomization file, before anything is built.
func TestRenderBuildRefusesWhatWouldRunOrFetch(t *testing.T) {
	for name, tc := range map[string]struct {
		kustomization string
		extra         map[string]string
		want          string
	}{
		"another function image": {"resources: [../../base]\ntransformers: [fn.yaml]\n",
			map[string]string{"overlays/prod/fn.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  annotations:\n    config.kubernetes.io/function: |\n      container:\n        image: example.com/set-labels:v1\n"},
			"overlays/prod/kustomization.yaml: transformers[0]: overlays/prod/fn.yaml runs the function image example.com/set-labels:v1"},
		"an exec function": {"resources: [../../base]\ntransformers:\n- |\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: x\n    annotations:\n      config.kubernetes.io/function: |\n        exec:\n          path: ./run.sh\n",
			nil, "overlays/prod/kustomization.yaml: transformers[0]: the inline entry runs the exec function ./run.sh"},
		"a plugin": {"resources: [../../base]\ngenerators: [gen.yaml]\n",
			map[string]string{"overlays/prod/gen.yaml": "apiVersion: someteam.example.com/v1\nkind: SecretsFromVault\nmetadata: {name: x}\n"},
			"configures the kustomize plugin someteam.example.com/v1 SecretsFromVault"},
		"a Helm chart": {"helmCharts:\n- name: minecraft\n  repo: https://itzg.github.io/minecraft-server-charts\n  version: 3.1.3\n", nil,
			"overlays/prod/kustomization.yaml: helmCharts[0]: Helm chart inflation runs the helm program"},
		"a remote base": {"resources:\n- github.com/kubernetes-sigs/kustomize/examples/multibases?ref=v3.3.1\n", nil,
			"overlays/prod/kustomization.yaml: resources[0]: github.com/kubernetes-sigs/kustomize/examples/multibases?ref=v3.3.1 is remote"},
		"a remote file":     {"resources:\n- https://raw.githubusercontent.com/x/y/main/flapp.yaml\n", nil, "resources[0]: https://raw.githubusercontent.com/x/y/main/flapp.yaml is remote"},
		"an SCP-style base": {"resources:\n- git@github.com:x/y.git//base\n", nil, "resources[0]: git@github.com:x/y.git//base is remote"},
		"a remote patch":    {"resources: [../../base]\npatches:\n- path: https://example.com/p.yaml\n", nil, "overlays/prod/kustomization.yaml: patches[0].path: https://example.com/p.yaml is remote"},
		"a base's remote resource": {"resources: [../../base]\n",
			map[string]string{"base/kustomization.yaml": "resources: [flapp.yaml, 'https://example.com/x.yaml']\n"},
			"overlays/prod/kustomization.yaml (resources[0]) → ../../base/kustomization.yaml: resources[1]: https://example.com/x.yaml is remote"},
		"the function as a generator": {"resources: [../../base]\ngenerators: [fn.yaml]\n",
			map[string]string{"overlays/prod/fn.yaml": "apiVersion: fn.fedlearner.k8s.io/v1alpha1\nkind: FLAppServices\nmetadata: {name: fn}\n"},
			"overlays/prod/kustomization.yaml: generators[0]: overlays/prod/fn.yaml lists flapp-services, a transformer: list it under transformers"},
	} {
		t.Run(name, func(t *testing.T) {
			extra := map[string]string{"overlays/prod/kustomization.yaml": tc.kustomization}
			for k, v := range tc.extra {
				extra[k] = v
			}
			overlayRepo(t, extra)
			out, stderr, err := runRender(t, RenderOptions{Paths: []string{"overlays/prod"}}, "")
			require.ErrorIs(t, err, ErrFailed)
			assert.Empty(t, out)
			assert.Contains(t, stderr, tc.want)
		})
	}
}

// The build reads only inside the repository (here the current
// directory): an overlay's ../../base is fine, a file or a base above it,
// or a symlink leading out, is not.
func TestRenderBuildStaysInTheRepository(t *testing.T) {
	dir := overlayRepo(t, nil)
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.yaml"), []byte("apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "kustomization.yaml"), []byte("resources: [secret.yaml]\n"), 0o644))

	rel, err := filepath.Rel(filepath.Join(dir, "overlays/prod"), outside)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile("overlays/prod/kustomization.yaml", []byte("resources: [../../base, "+rel+"]\n"), 0o644))
	_, stderr, err := runRender(t, RenderOptions{Paths: []string{"overlays/prod"}}, "")
	require.ErrorIs(t, err, ErrFailed)
	assert.Contains(t, stderr, "outside the current directory")
	assert.NotContains(t, stderr, "Secret")

	require.NoError(t, os.Symlink(filepath.Join(outside, "secret.yaml"), "overlays/prod/secret.yaml"))
	require.NoError(t, os.WriteFile("overlays/prod/kustomization.yaml", []byte("resources: [../../base, secret.yaml]\n"), 0o644))
	_, stderr, err = runRender(t, RenderOptions{Paths: []string{"overlays/prod"}}, "")
	require.ErrorIs(t, err, ErrFailed)
	assert.Contains(t, stderr, "overlays/prod/secret.yaml is a symlink to "+filepath.Join(outside, "secret.yaml"))

	out, stderr, err := runRender(t, RenderOptions{Paths: []string{"overlays/prod"}, LoadRestrictor: "LoadRestrictionsNone"}, "")
	require.NoError(t, err, "LoadRestrictionsNone lifts it for a tree you trust: %s", stderr)
	assert.Contains(t, out, "kind: Secret")
}

// Under Argo CD the repository root lies above the Application's
// directory (the current directory): the base is read from there.
func TestRenderBuildFromTheApplicationsDirectory(t *testing.T) {
	dir := overlayRepo(t, nil)
	t.Chdir(filepath.Join(dir, "overlays/prod"))
	_, stderr, err := runRender(t, RenderOptions{Paths: []string{"."}}, "")
	require.ErrorIs(t, err, ErrFailed, "without the repository root, ../../base is outside the current directory")
	assert.Contains(t, stderr, "outside the current directory")

	out, stderr, err := runRender(t, RenderOptions{Paths: []string{"."}, Root: dir}, "")
	require.NoError(t, err, stderr)
	assert.Contains(t, out, "name: normal-leader-worker-3")
}

// The file sizes are the render's ceilings, also for what only the build
// reads (the FLApp file; the kustomizations and the entry are smaller).
func TestRenderBuildKeepsTheCeilings(t *testing.T) {
	overlayRepo(t, nil)
	flapp, err := os.Stat("base/flapp.yaml")
	require.NoError(t, err)
	entry, err := os.Stat("base/flapp-services.yaml")
	require.NoError(t, err)
	overlay, err := os.Stat("overlays/prod/kustomization.yaml")
	require.NoError(t, err)
	require.Greater(t, flapp.Size(), max(entry.Size(), overlay.Size()))
	_, stderr, err := runRender(t, RenderOptions{Paths: []string{"overlays/prod"}, Limits: limitsOf(max(entry.Size(), overlay.Size()), 0)}, "")
	require.ErrorIs(t, err, ErrFailed)
	assert.Contains(t, stderr, "base/flapp.yaml is")
	assert.Contains(t, stderr, "per file (--max-file-size)")

	_, stderr, err = runRender(t, RenderOptions{Paths: []string{"overlays/prod"}, Limits: limitsOf(0, flapp.Size()+entry.Size())}, "")
	require.ErrorIs(t, err, ErrFailed)
	assert.Contains(t, stderr, "in total (--max-input-size)", "every file the build reads counts")
}

// A kustomization met while walking a PATH is an error naming it: it is
// never read as a manifest.
func TestRenderRefusesANestedKustomization(t *testing.T) {
	overlayRepo(t, nil)
	_, stderr, err := runRender(t, RenderOptions{Paths: []string{"."}}, "")
	require.ErrorIs(t, err, ErrFailed)
	assert.Contains(t, stderr, "base/kustomization.yaml: a kustomization inside . is not a manifest: render its directory as a PATH of its own (flapp-services render base)")
}

// A kustomization that does not run the function builds too (CI, and
// Applications that name the plugin without discover): the render's own
// entry runs after the root's transformers.
func TestRenderBuildsAnyKustomization(t *testing.T) {
	overlayRepo(t, map[string]string{"base/kustomization.yaml": "resources: [flapp.yaml]\n",
		"overlays/prod/kustomization.yaml": "namespace: prod\nresources: [../../base]\npatches:\n- target: {kind: FLApp, name: normal}\n" +
			"  patch: |-\n    - op: replace\n      path: /spec/flReplicaSpecs/Worker/replicas\n      value: 4\n"})
	out, stderr, err := runRender(t, RenderOptions{Paths: []string{"overlays/prod"}}, "")
	require.NoError(t, err, stderr)
	assert.Contains(t, out, "name: normal-leader-worker-3")
}

// An error about a built object names the file the build read it from.
func TestRenderBuildErrorsNameTheSourceFile(t *testing.T) {
	overlayRepo(t, map[string]string{"base/flapp.yaml": strings.Replace(strings.Replace(goodFLApp, "  namespace: default\n", "", 1), "Leader", "Boss", 1)})
	_, stderr, err := runRender(t, RenderOptions{Paths: []string{"overlays/prod"}}, "")
	require.ErrorIs(t, err, ErrFailed)
	assert.Contains(t, stderr, "error: base/flapp.yaml (in the build of overlays/prod): FLApp normal: spec.role: Invalid value: \"Boss\"", "the base's entry sees it before the overlay's namespace")
}

func limitsOf(file, input int64) repofs.Limits {
	return repofs.Limits{MaxFileSize: file, MaxInputSize: input}
}

// The build runs under a soft heap limit of its own (BENCHMARKS.md measures
// what that saves); render mode's is back for the documents the build
// yields, and afterwards: RunRender leaves the process's limit as it found
// it, and the render command sets render mode's.
func TestRenderBuildRestoresTheHeapLimit(t *testing.T) {
	overlayRepo(t, nil)
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	t.Setenv("GOMEMLIMIT", "")
	debug.SetMemoryLimit(math.MaxInt64)
	_, stderr, err := runRender(t, RenderOptions{Paths: []string{"overlays/prod"}}, "")
	require.NoError(t, err, stderr)
	assert.Equal(t, int64(math.MaxInt64), debug.SetMemoryLimit(-1), "RunRender")
	assert.Equal(t, 0, Main("test", []string{"render", "overlays/prod"}, strings.NewReader(""), io.Discard, io.Discard))
	assert.Equal(t, int64(renderMemoryLimit), debug.SetMemoryLimit(-1), "the render command")
}

// An entry before the root's last puts its Services into kustomize's
// resource map, which holds each as a tree: a few kilobytes of FLApps in a
// base fill it up to maxServicesInPlace, not past it. The same FLApps with
// the entry last in the root render.
func TestRenderBuildBoundsTheServicesInPlace(t *testing.T) {
	atCeiling := strings.Replace(strings.Replace(goodFLApp, "  namespace: default\n", "", 1), "replicas: 2", fmt.Sprintf("replicas: %d", maxServicesInPlace/2), 1)
	overlayRepo(t, map[string]string{"base/flapp.yaml": atCeiling + "---\n" + strings.Replace(atCeiling, "name: normal", "name: other", 1)})
	out, stderr, err := runRender(t, RenderOptions{Paths: []string{"overlays/staging"}}, "")
	require.NoError(t, err, stderr)
	assert.Equal(t, maxServicesInPlace, strings.Count(out, "kind: Service\n"), "the ceiling itself")

	half := strings.Replace(strings.Replace(goodFLApp, "  namespace: default\n", "", 1), "replicas: 2", fmt.Sprintf("replicas: %d", maxServicesInPlace/2+1), 1)
	require.Contains(t, half, fmt.Sprintf("replicas: %d", maxServicesInPlace/2+1))
	big := half + "---\n" + strings.Replace(half, "name: normal", "name: other", 1)
	overlayRepo(t, map[string]string{"base/flapp.yaml": big})
	out, stderr, err = runRender(t, RenderOptions{Paths: []string{"overlays/staging"}}, "")
	require.ErrorIs(t, err, ErrFailed)
	assert.Empty(t, out)
	assert.Contains(t, stderr, fmt.Sprintf("brings the Services its build holds to %d, over the ceiling of %d", maxServicesInPlace+2, maxServicesInPlace))

	overlayRepo(t, map[string]string{"base/flapp.yaml": big, "base/kustomization.yaml": "resources: [flapp.yaml]\n",
		"overlays/staging/kustomization.yaml":  "namespace: staging\nresources: [../../base]\ntransformers: [flapp-services.yaml]\n",
		"overlays/staging/flapp-services.yaml": overlayEntry})
	out, stderr, err = runRender(t, RenderOptions{Paths: []string{"overlays/staging"}}, "")
	require.NoError(t, err, stderr)
	assert.Equal(t, maxServicesInPlace+2, strings.Count(out, "kind: Service\n"))
}

// Git's metadata is never read, however it is named: it holds the token
// actions/checkout persists, which a generator would print (base64 through
// secretGenerator, past log masking) and render --check's diff would put in
// the CI log.
func TestRenderNeverReadsGitMetadata(t *testing.T) {
	const token = "AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46Z2hzX3NlY3JldA=="
	for name, tc := range map[string]struct {
		files map[string]string
		link  [2]string // a symlink to make: name, target
		opts  RenderOptions
		want  string
	}{
		"configMapGenerator": {files: map[string]string{"kustomization.yaml": "resources: [flapp.yaml]\nconfigMapGenerator: [{name: leak, files: [.git/config]}]\n"},
			opts: RenderOptions{Paths: []string{"."}}, want: ".git/config lies inside a .git directory"},
		"secretGenerator": {files: map[string]string{"kustomization.yaml": "resources: [flapp.yaml]\nsecretGenerator: [{name: leak, files: [c=.git/config]}]\n"},
			opts: RenderOptions{Paths: []string{"."}}, want: ".git/config lies inside a .git directory"},
		"a symlink a generator reads": {files: map[string]string{"kustomization.yaml": "resources: [flapp.yaml]\nconfigMapGenerator: [{name: leak, files: [settings]}]\n"},
			link: [2]string{"settings", ".git/config"}, opts: RenderOptions{Paths: []string{"."}}, want: "lies inside a .git directory"},
		"a symlinked manifest": {link: [2]string{"apps/leak.yaml", "../.git/config"}, opts: RenderOptions{Paths: []string{"."}}, want: "lies inside a .git directory"},
		"--config":             {opts: RenderOptions{Paths: []string{"flapp.yaml"}, Config: ".git/config"}, want: "--config: .git/config lies inside a .git directory"},
		"--check":              {opts: RenderOptions{Paths: []string{"flapp.yaml"}, Check: ".git/config"}, want: ".git/config lies inside a .git directory"},
		"a PATH":               {opts: RenderOptions{Paths: []string{".git"}}, want: ".git lies inside a .git directory"},
		"Mercurial's":          {files: map[string]string{".hg/hgrc": "[auth]\nx.password = eC1hY2Nlc3M\n"}, opts: RenderOptions{Paths: []string{"flapp.yaml"}, Config: ".hg/hgrc"}, want: ".hg/hgrc lies inside a .hg directory"},
		"Subversion's":         {files: map[string]string{"kustomization.yaml": "resources: [flapp.yaml]\nconfigMapGenerator: [{name: leak, files: [.svn/wc.db]}]\n", ".svn/wc.db": "eC1hY2Nlc3M"}, opts: RenderOptions{Paths: []string{"."}}, want: ".svn/wc.db lies inside a .svn directory"},
	} {
		t.Run(name, func(t *testing.T) {
			files := map[string]string{".git/config": "[http \"https://github.com/\"]\n\textraheader = " + token + "\n", "flapp.yaml": goodFLApp, "apps/a.yaml": goodFLApp}
			for k, v := range tc.files {
				files[k] = v
			}
			dir := writeFiles(t, files)
			t.Chdir(dir)
			if tc.link[0] != "" {
				require.NoError(t, os.Symlink(tc.link[1], tc.link[0]))
			}
			out, stderr, err := runRender(t, tc.opts, "")
			require.Error(t, err)
			assert.Empty(t, out)
			assert.Contains(t, stderr, tc.want)
			assert.NotContains(t, stderr, "eC1hY2Nlc3M", "the token")
		})
	}
}

// What made kustomize panic is a refusal naming the
// kustomization: exit 1, nothing on stdout, no stack trace.
func TestRenderBuildPanicsAreRefusals(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"an empty crds: file":    {"kustomization.yaml": "resources: [flapp.yaml]\ncrds: [crd.json]\n", "crd.json": ""},
		"an empty openapi: file": {"kustomization.yaml": "resources: [flapp.yaml]\nopenapi: {path: schema.json}\n", "schema.json": ""},
		"openapi: definitions not a map": {"kustomization.yaml": "resources: [flapp.yaml]\nopenapi: {path: schema.json}\n",
			"schema.json": `{"definitions": "not a map"}`},
		// Refused before the build: kustomize would recurse until the
		// stack overflows, which no recover catches.
		"a crds: type that refers to itself": {"kustomization.yaml": "resources: [flapp.yaml]\ncrds: [crd.json]\n",
			"crd.json": `{"T": {"Schema": {"properties": {"kind": {}, "apiVersion": {}, "metadata": {}, "x": {"$ref": "T"}}}}}`},
		"a crds: cycle of two, in YAML": {"kustomization.yaml": "resources: [flapp.yaml]\ncrds: [crd.yaml]\n",
			"crd.yaml": "A:\n  Schema:\n    properties: {kind: {}, apiVersion: {}, metadata: {}, b: {$ref: B}}\nB:\n  Schema:\n    properties: {a: {$ref: A}}\n"},
	} {
		t.Run(name, func(t *testing.T) {
			files["flapp.yaml"] = goodFLApp
			t.Chdir(writeFiles(t, files))
			out, stderr, err := runRender(t, RenderOptions{Paths: []string{"."}}, "")
			require.ErrorIs(t, err, ErrFailed)
			assert.Empty(t, out)
			assert.Contains(t, stderr, "kustomization.yaml")
			assert.NotContains(t, stderr, "goroutine ", "no stack trace")
		})
	}
}

// kyaml's OpenAPI schema is process-wide: a kustomization's openapi: must
// not change how the next PATH's build merges. The first PATH's schema
// knows only Deployment; with it left in place, the second PATH's
// strategic-merge patch would replace the StatefulSet's containers (no
// merge key known) and drop the image. Flux's testdata/openapiPollution
// finds the same with its own files.
func TestRenderBuildsDoNotShareTheirOpenAPISchema(t *testing.T) {
	patch := func(kind, container string) string {
		return "patches:\n- patch: |-\n    apiVersion: apps/v1\n    kind: " + kind + "\n    metadata: {name: app}\n" +
			"    spec: {template: {spec: {containers: [{name: " + container + ", resources: {limits: {cpu: 500m}}}]}}}\n"
	}
	workload := func(kind, container string) string {
		return "apiVersion: apps/v1\nkind: " + kind + "\nmetadata: {name: app}\n" +
			"spec: {selector: {matchLabels: {app: a}}, template: {metadata: {labels: {app: a}}, spec: {containers: [{name: " + container + ", image: busybox:1.37}]}}}\n"
	}
	t.Chdir(writeFiles(t, map[string]string{
		"pollutor/kustomization.yaml": "openapi: {path: openapi.json}\nresources: [deployment.yaml]\n" + patch("Deployment", "nginx"),
		"pollutor/deployment.yaml":    workload("Deployment", "nginx"),
		"pollutor/openapi.json": `{"definitions": {"io.k8s.api.apps.v1.Deployment": {"type": "object",
			"x-kubernetes-group-version-kind": [{"group": "apps", "kind": "Deployment", "version": "v1"}]}}}`,
		"victim/kustomization.yaml": "resources: [statefulset.yaml]\n" + patch("StatefulSet", "busybox"),
		"victim/statefulset.yaml":   workload("StatefulSet", "busybox"),
	}))
	// pollutor's build first: a schema victim's build already looked
	// up is cached and would hide the pollution.
	both, stderr, err := runRender(t, RenderOptions{Paths: []string{"pollutor", "victim"}}, "")
	require.NoError(t, err, stderr)
	alone, stderr, err := runRender(t, RenderOptions{Paths: []string{"victim"}}, "")
	require.NoError(t, err, stderr)
	require.Contains(t, alone, "image: busybox:1.37", "the patch merges into the container by its name")
	assert.True(t, strings.HasSuffix(both, alone), "victim's output is the same after pollutor's build:\n%s", both)
}

// An openapi: schema whose types refer to themselves is legitimate (the
// API server's own JSONSchemaProps does) and kyaml resolves it field by
// field, so it is not refused, unlike a crds: cycle: a patch through it
// merges and the render ends.
func TestRenderBuildOpenAPISelfReference(t *testing.T) {
	t.Chdir(writeFiles(t, map[string]string{
		"kustomization.yaml": "openapi: {path: schema.json}\nresources: [foo.yaml]\npatches:\n- target: {kind: Foo}\n  patch: |\n" +
			"    apiVersion: example.com/v1\n    kind: Foo\n    metadata: {name: f}\n    spec: {a: {b: {c: 1}}}\n",
		"foo.yaml": "apiVersion: example.com/v1\nkind: Foo\nmetadata: {name: f}\nspec: {a: {b: {x: 1}}}\n",
		"schema.json": `{"definitions": {"com.example.v1.Foo": {"type": "object",
			"x-kubernetes-group-version-kind": [{"group": "example.com", "kind": "Foo", "version": "v1"}],
			"properties": {"spec": {"$ref": "#/definitions/com.example.v1.Foo"}, "a": {"$ref": "#/definitions/com.example.v1.Foo"},
				"b": {"$ref": "#/definitions/com.example.v1.Foo"}}}}}`,
	}))
	out, stderr, err := runRender(t, RenderOptions{Paths: []string{"."}}, "")
	require.NoError(t, err, stderr)
	assert.Contains(t, out, "    b:\n      c: 1\n      x: 1\n")
}
