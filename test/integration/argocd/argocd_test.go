// Package argocd runs the Config Management Plugin of examples/argocd the
// way argocd-cmp-server does (cmpserver/plugin.runCommand): the plugin's
// generate command and args exec'd directly, in the Application's directory,
// with the sidecar's environment plus ARGOCD_APP_NAME, ARGOCD_APP_NAMESPACE,
// ARGOCD_ENV_* and PARAM_*; stdout (trailing newline trimmed) is split into
// YAML documents that must each be a Kubernetes object.
package argocd

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"sigs.k8s.io/yaml"

	h "github.com/fedlearner/flapp-services/test/integration/internal/harness"
)

func TestMain(m *testing.M) { os.Exit(h.Main(m)) }

// pluginConfig is the subset of Argo CD's cmpserver/plugin.PluginConfig we use.
type command struct {
	Command []string `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
}

type pluginConfig struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version  string  `json:"version"`
		Init     command `json:"init"`
		Generate command `json:"generate"`
		Discover struct {
			Find struct {
				command
				Glob string `json:"glob"`
			} `json:"find"`
			FileName string `json:"fileName"`
		} `json:"discover"`
		Parameters struct {
			// Argo CD's ParameterAnnouncement.
			Static []struct {
				Name           string            `json:"name"`
				Title          string            `json:"title"`
				Tooltip        string            `json:"tooltip"`
				Required       bool              `json:"required"`
				ItemType       string            `json:"itemType"`
				CollectionType string            `json:"collectionType"`
				String         string            `json:"string"`
				Array          []string          `json:"array"`
				Map            map[string]string `json:"map"`
			} `json:"static"`
			Dynamic command `json:"dynamic"`
		} `json:"parameters"`
	} `json:"spec"`
}

func readPlugin(t *testing.T) pluginConfig {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(h.RepoRoot(), "examples/argocd/plugin.yaml"))
	require.NoError(t, err)
	var pc pluginConfig
	require.NoError(t, yaml.UnmarshalStrict(b, &pc, yaml.DisallowUnknownFields), "plugin.yaml has a field Argo CD does not know")
	// Argo CD's ValidatePluginConfig.
	require.Equal(t, "ConfigManagementPlugin", pc.Kind)
	require.Equal(t, "argoproj.io/v1alpha1", pc.APIVersion)
	require.NotEmpty(t, pc.Metadata.Name)
	require.NotEmpty(t, pc.Spec.Generate.Command)
	return pc
}

// sidecar returns an environment like the plugin sidecar's: the test's own
// environment with the binary's directory first on PATH.
func sidecarEnv(t *testing.T) []string {
	t.Helper()
	binDir := t.TempDir()
	require.NoError(t, os.Symlink(h.Binary(t), filepath.Join(binDir, "flapp-services")))
	env := []string{}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PATH=") || strings.HasPrefix(kv, "ARGOCD_") || strings.HasPrefix(kv, "PARAM_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

type cmpResult struct {
	stdout, stderr string
	err            error
}

// runCommand mirrors argocd-cmp-server: exec(command[0], command[1:]+args),
// cwd = app path, env = sidecar env + request env.
func runCommand(t *testing.T, c command, dir string, env []string) cmpResult {
	t.Helper()
	require.NotEmpty(t, c.Command)
	cmd := exec.Command(c.Command[0], append(c.Command[1:], c.Args...)...)
	cmd.Dir = dir
	cmd.Env = env
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return cmpResult{stdout: stdout.String(), stderr: stderr.String(), err: err}
}

// appEnv is what the repo-server sends for an Application: its name and
// destination namespace, the plugin env prefixed with ARGOCD_ENV_, and the
// parameters as PARAM_<NAME>.
func appEnv(t *testing.T, pluginEnv map[string]string, params map[string]string) []string {
	env := append(sidecarEnv(t),
		"ARGOCD_APP_NAME=mnist-leader",
		"ARGOCD_APP_NAMESPACE=fl-leader",
		"ARGOCD_APP_REVISION=0123456789abcdef0123456789abcdef01234567",
		"ARGOCD_APP_SOURCE_PATH=examples/argocd/app",
		"ARGOCD_APP_SOURCE_REPO_URL=https://github.com/fedlearner/flapp-services.git",
		"ARGOCD_APP_SOURCE_TARGET_REVISION=main",
		"KUBE_VERSION=1.37.2",
	)
	for k, v := range pluginEnv {
		env = append(env, "ARGOCD_ENV_"+k+"="+v)
	}
	for k, v := range params {
		env = append(env, "PARAM_"+strings.ToUpper(strings.ReplaceAll(k, "-", "_"))+"="+v)
	}
	return env
}

func appDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "app")
	h.CopyTree(t, filepath.Join(h.RepoRoot(), "examples/argocd/app"), dir)
	return dir
}

var (
	flappPort = h.Port{Name: "flapp-port", Port: 50051}
	tfPort    = h.Port{Name: "tf-port", Port: 50052}
)

// Namespace-less FLApps, namespace-less Services: Argo CD puts both in the
// destination namespace. The render does not read ARGOCD_APP_NAMESPACE.
func expectedServices() []h.ServiceSpec {
	var s []h.ServiceSpec
	s = append(s, h.Replicas("mnist", "", "Leader", "Master", 1, flappPort)...)
	s = append(s, h.Replicas("mnist", "", "Leader", "PS", 2, flappPort, tfPort)...)
	s = append(s, h.Replicas("mnist", "", "Leader", "Worker", 2, flappPort, tfPort)...)
	s = append(s, h.Replicas("mnist-eval", "", "Leader", "Master", 1, flappPort)...)
	s = append(s, h.Replicas("mnist-eval", "", "Leader", "Worker", 1, flappPort, tfPort)...)
	return s
}

func generate(t *testing.T, dir string, env []string) ([]h.Object, cmpResult) {
	t.Helper()
	res := runCommand(t, readPlugin(t).Spec.Generate, dir, env)
	require.NoError(t, res.err, "generate failed; stderr:\n%s", res.stderr)
	objs := h.MustParseObjects(t, []byte(strings.TrimSuffix(res.stdout, "\n")))
	return objs, res
}

func TestGenerate(t *testing.T) {
	dir := appDir(t)
	objs, _ := generate(t, dir, appEnv(t, map[string]string{"FLAPP_OWNER_REFERENCES": "Never"}, nil))

	flapps := h.OfKind(objs, "FLApp")
	assert.Equal(t, []string{"/mnist", "/mnist-eval"}, h.Keys(flapps), "the FLApps pass through, still without namespace")
	h.CheckServices(t, objs, expectedServices(), nil)
	assert.Len(t, objs, 2+len(expectedServices()), "only FLApps and Services")
	assert.Empty(t, h.LeakedAnnotations(objs))
	for _, o := range objs {
		u := unstructured.Unstructured{Object: o}
		for k := range u.GetLabels() {
			assert.False(t, k == "app.kubernetes.io/instance" || strings.HasPrefix(k, "argocd.argoproj.io/"),
				"%s: the render must not write Argo CD's tracking label %s", h.Key(o), k)
		}
	}

	// Same input, same bytes: Argo CD compares renders.
	_, again := generate(t, dir, appEnv(t, map[string]string{"FLAPP_OWNER_REFERENCES": "Never"}, nil))
	first := runCommand(t, readPlugin(t).Spec.Generate, dir, appEnv(t, nil, nil))
	assert.Equal(t, first.stdout, again.stdout, "output differs between renders (or the default policy is not Never)")
}

// Decision: ARGOCD_APP_NAMESPACE is not injected. A namespace-less FLApp's
// Services have no namespace whatever the destination is.
func TestDestinationNamespaceIsNotInjected(t *testing.T) {
	dir := appDir(t)
	a, _ := generate(t, dir, appEnv(t, nil, nil))
	env := appEnv(t, nil, nil)
	env = append(env, "ARGOCD_APP_NAMESPACE=somewhere-else")
	b, _ := generate(t, dir, env)
	assert.Equal(t, a, b)
	for _, o := range a {
		u := unstructured.Unstructured{Object: o}
		assert.Empty(t, u.GetNamespace(), "%s", h.Key(o))
	}
}

// One bad FLApp among good ones: non-zero exit and NOTHING on stdout (an
// empty render with exit 0 would make Argo CD prune the whole application).
func TestBadFLAppFailsWithEmptyStdout(t *testing.T) {
	dir := appDir(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "zz-broken.yaml"), []byte(h.BrokenFLApp("")), 0o644))
	res := runCommand(t, readPlugin(t).Spec.Generate, dir, appEnv(t, nil, nil))
	require.Error(t, res.err, "generate must fail")
	var ee *exec.ExitError
	require.ErrorAs(t, res.err, &ee)
	assert.NotEqual(t, 0, ee.ExitCode())
	assert.Empty(t, res.stdout, "stdout must be empty on failure")
	assert.Contains(t, res.stderr, "no-tf", "stderr (shown by Argo CD in the sync error) names the bad FLApp")
}

// The owner-reference policy reaches the render: from the Application's
// plugin env, overridden by the plugin parameter; an invalid value fails.
func TestOwnerReferencePolicyParameter(t *testing.T) {
	dir := appDir(t)
	// A live export: the FLApp's uid is known.
	const uid = "0c8a4d62-2f0e-4c2b-9a57-3c1d4b2e9f10"
	p := filepath.Join(dir, "mnist.yaml")
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(b), "  name: mnist\n", "  name: mnist\n  uid: "+uid+"\n", 1)), 0o644))

	owners := func(objs []h.Object) map[string]int {
		out := map[string]int{}
		for k, svc := range h.OfKind(objs, "Service") {
			refs, _, _ := unstructured.NestedSlice(svc, "metadata", "ownerReferences")
			out[k] = len(refs)
		}
		return out
	}

	// Default (nothing set): Never.
	objs, _ := generate(t, dir, appEnv(t, nil, nil))
	for k, n := range owners(objs) {
		assert.Zero(t, n, "%s: default policy must be Never", k)
	}

	// Plugin env IfKnown: the FLApp with a uid gets owner references.
	objs, _ = generate(t, dir, appEnv(t, map[string]string{"FLAPP_OWNER_REFERENCES": "IfKnown"}, nil))
	for k, svc := range h.OfKind(objs, "Service") {
		refs, _, _ := unstructured.NestedSlice(svc, "metadata", "ownerReferences")
		if strings.HasPrefix(k, "/mnist-eval-") {
			assert.Empty(t, refs, "%s: no uid, no owner reference", k)
			continue
		}
		require.Len(t, refs, 1, "%s", k)
		assert.Equal(t, map[string]any{
			"apiVersion": "fedlearner.k8s.io/v1alpha1", "kind": "FLApp", "name": "mnist", "uid": uid,
			"controller": true, "blockOwnerDeletion": true,
		}, refs[0], "%s", k)
	}

	// The parameter beats the env.
	objs, _ = generate(t, dir, appEnv(t, map[string]string{"FLAPP_OWNER_REFERENCES": "IfKnown"}, map[string]string{"owner-references": "Never"}))
	for k, n := range owners(objs) {
		assert.Zero(t, n, "%s: parameter Never must win over env IfKnown", k)
	}

	// Required with an FLApp lacking a uid (mnist-eval) fails, stdout empty.
	res := runCommand(t, readPlugin(t).Spec.Generate, dir, appEnv(t, map[string]string{"FLAPP_OWNER_REFERENCES": "Required"}, nil))
	assert.Error(t, res.err)
	assert.Empty(t, res.stdout)

	// A typo fails the sync instead of silently falling back.
	res = runCommand(t, readPlugin(t).Spec.Generate, dir, appEnv(t, map[string]string{"FLAPP_OWNER_REFERENCES": "sometimes"}, nil))
	assert.Error(t, res.err)
	assert.Empty(t, res.stdout)
}

// ARGOCD_ENV_FLAPP_CONFIG names a function config file in the app directory;
// the file itself is not emitted.
func TestConfigFileFromEnv(t *testing.T) {
	dir := appDir(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "flapp-services.yaml"), []byte(`apiVersion: fn.fedlearner.k8s.io/v1alpha1
kind: FLAppServices
metadata:
  name: flapp-services
spec:
  maxServicesPerFLApp: 3
`), 0o644))
	// mnist has 5 Services > 3: the config is applied, so the render fails.
	res := runCommand(t, readPlugin(t).Spec.Generate, dir, appEnv(t, map[string]string{"FLAPP_CONFIG": "flapp-services.yaml"}, nil))
	assert.Error(t, res.err, "maxServicesPerFLApp: 3 must reject mnist (5 Services)")
	assert.Empty(t, res.stdout)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "flapp-services.yaml"), []byte(`apiVersion: fn.fedlearner.k8s.io/v1alpha1
kind: FLAppServices
metadata:
  name: flapp-services
spec:
  maxServicesPerFLApp: 100
`), 0o644))
	objs, _ := generate(t, dir, appEnv(t, map[string]string{"FLAPP_CONFIG": "flapp-services.yaml"}, nil))
	assert.Empty(t, h.OfKind(objs, "FLAppServices"), "the config file is not a cluster object")
	h.CheckServices(t, objs, expectedServices(), nil)
}

// discover.find prints something in a directory with FLApps and nothing (exit
// 0) elsewhere. argocd-cmp-server runs it with the sidecar env only.
func TestDiscover(t *testing.T) {
	find := readPlugin(t).Spec.Discover.Find.command
	res := runCommand(t, find, appDir(t), sidecarEnv(t))
	require.NoError(t, res.err, res.stderr)
	assert.NotEmpty(t, strings.TrimSpace(res.stdout))

	other := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(other, "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"), 0o644))
	res = runCommand(t, find, other, sidecarEnv(t))
	require.NoError(t, res.err, res.stderr)
	assert.Empty(t, strings.TrimSpace(res.stdout))
}

// The Application refers to the plugin by its name, at the example app path,
// with env names the plugin reads.
func TestApplication(t *testing.T) {
	pc := readPlugin(t)
	b, err := os.ReadFile(filepath.Join(h.RepoRoot(), "examples/argocd/application.yaml"))
	require.NoError(t, err)
	var app struct {
		Kind string `json:"kind"`
		Spec struct {
			Source struct {
				Path   string `json:"path"`
				Plugin struct {
					Name string `json:"name"`
					Env  []struct{ Name, Value string }
				} `json:"plugin"`
			} `json:"source"`
			Destination struct {
				Namespace string `json:"namespace"`
			} `json:"destination"`
		} `json:"spec"`
	}
	require.NoError(t, yaml.Unmarshal(b, &app))
	assert.Equal(t, "Application", app.Kind)
	name := pc.Metadata.Name
	if pc.Spec.Version != "" {
		name += "-" + pc.Spec.Version
	}
	assert.Equal(t, name, app.Spec.Source.Plugin.Name)
	assert.DirExists(t, filepath.Join(h.RepoRoot(), app.Spec.Source.Path))
	assert.NotEmpty(t, app.Spec.Destination.Namespace)
	script := strings.Join(pc.Spec.Generate.Args, "\n")
	for _, e := range app.Spec.Source.Plugin.Env {
		assert.Contains(t, script, "ARGOCD_ENV_"+e.Name, "plugin.yaml does not read env %s", e.Name)
	}
}

// kubectl patch --patch-file (strategic merge) on a stock repo-server adds the
// sidecar next to the repo-server container, with Argo CD's requirements.
func TestRepoServerPatch(t *testing.T) {
	patchYAML, err := os.ReadFile(filepath.Join(h.RepoRoot(), "examples/argocd/argocd-repo-server-patch.yaml"))
	require.NoError(t, err)
	patch, err := yaml.YAMLToJSON(patchYAML)
	require.NoError(t, err)
	stock := []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"argocd-repo-server","namespace":"argocd"},
"spec":{"selector":{"matchLabels":{"app.kubernetes.io/name":"argocd-repo-server"}},"template":{"metadata":{"labels":{"app.kubernetes.io/name":"argocd-repo-server"}},
"spec":{"containers":[{"name":"argocd-repo-server","image":"quay.io/argoproj/argocd:v3.2.0","volumeMounts":[{"name":"var-files","mountPath":"/var/run/argocd"},{"name":"plugins","mountPath":"/home/argocd/cmp-server/plugins"},{"name":"tmp","mountPath":"/tmp"}]}],
"volumes":[{"name":"var-files","emptyDir":{}},{"name":"plugins","emptyDir":{}},{"name":"tmp","emptyDir":{}}]}}}}`)
	merged, err := strategicpatch.StrategicMergePatch(stock, patch, appsv1.Deployment{})
	require.NoError(t, err)
	var d appsv1.Deployment
	require.NoError(t, json.Unmarshal(merged, &d))

	pod := d.Spec.Template.Spec
	require.Len(t, pod.Containers, 2, "the repo-server container stays, the sidecar is added")
	byName := map[string]int{}
	for i, c := range pod.Containers {
		byName[c.Name] = i
	}
	require.Contains(t, byName, "argocd-repo-server")
	require.Contains(t, byName, "flapp-services")
	assert.Equal(t, "quay.io/argoproj/argocd:v3.2.0", pod.Containers[byName["argocd-repo-server"]].Image, "repo-server untouched")
	c := pod.Containers[byName["flapp-services"]]
	assert.Equal(t, []string{"/var/run/argocd/argocd-cmp-server"}, c.Command)
	require.NotNil(t, c.SecurityContext)
	require.NotNil(t, c.SecurityContext.RunAsUser)
	assert.Equal(t, int64(999), *c.SecurityContext.RunAsUser)

	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m.Name
		if m.MountPath == "/home/argocd/cmp-server/config/plugin.yaml" {
			assert.Equal(t, "plugin.yaml", m.SubPath)
		}
	}
	assert.Equal(t, "var-files", mounts["/var/run/argocd"])
	assert.Equal(t, "plugins", mounts["/home/argocd/cmp-server/plugins"])
	volumes := map[string]int{}
	for i, v := range pod.Volumes {
		volumes[v.Name] = i
	}
	cfg := pod.Volumes[volumes[mounts["/home/argocd/cmp-server/config/plugin.yaml"]]]
	require.NotNil(t, cfg.ConfigMap, "plugin.yaml comes from a ConfigMap")
	tmp := pod.Volumes[volumes[mounts["/tmp"]]]
	require.NotNil(t, tmp.EmptyDir, "/tmp is an emptyDir")
	assert.NotEqual(t, "tmp", tmp.Name, "the sidecar has its own /tmp, not the repo-server's")

	readme, err := os.ReadFile(filepath.Join(h.RepoRoot(), "examples/argocd/README.md"))
	require.NoError(t, err)
	assert.Contains(t, string(readme), "create configmap "+cfg.ConfigMap.Name, "README creates the ConfigMap the patch mounts")
}

// The README's local command prints exactly what the plugin prints.
func TestReadmeLocalRender(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(h.RepoRoot(), "examples/argocd/README.md"))
	require.NoError(t, err)
	const cmd = "bin/flapp-services render --owner-references Never examples/argocd/app"
	require.Contains(t, string(readme), cmd)
	root := h.Sandbox(t, "examples/argocd/app")
	args := strings.Fields(cmd)
	res := h.Run(t, root, nil, filepath.Join(root, args[0]), args[1:]...)
	require.Equal(t, 0, res.ExitCode, res.Stderr)
	_, plugin := generate(t, filepath.Join(root, "examples/argocd/app"), appEnv(t, nil, nil))
	assert.Equal(t, plugin.stdout, res.Stdout)
}

// An app directory without any object (emptied by mistake, wrong path) must
// fail the sync rather than print nothing with exit 0, which Argo CD would
// take as "prune everything".
func TestEmptyAppDirFails(t *testing.T) {
	dir := t.TempDir()
	res := runCommand(t, readPlugin(t).Spec.Generate, dir, appEnv(t, nil, nil))
	assert.Error(t, res.err)
	assert.Empty(t, res.stdout)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.yaml"), []byte("# nothing here yet\n"), 0o644))
	res = runCommand(t, readPlugin(t).Spec.Generate, dir, appEnv(t, nil, nil))
	assert.Error(t, res.err)
	assert.Empty(t, res.stdout)
	assert.NotEmpty(t, res.stderr)
}
