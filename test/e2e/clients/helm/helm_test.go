// Package helm proves `flapp-services render -` as a post-renderer of the
// real Helm: Helm 3 v3.22.0 (`--post-renderer <executable>`) and Helm 4
// v4.3.1 (a `postrenderer/v1` plugin, examples/helm/plugin/flapp-services),
// both built from source by test/e2e/hack/build-helm.sh, running
// `helm template` on the examples/helm/flapp chart. See README.md.
package helm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/fedlearner/flapp-services/test/e2e/internal/testenv"
)

var flappGVR = schema.GroupVersionResource{Group: "fedlearner.k8s.io", Version: "v1alpha1", Resource: "flapps"}

var env struct {
	repo    string
	flapp   string // the binary under test
	binDir  string // a directory holding it as `flapp-services`, for PATH
	helm3   string
	helm4   string
	chart   string
	plugin  string
	helmEnv []string // isolated HELM_*_HOME dirs, PATH, KUBECONFIG
	cluster *testenv.Cluster
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ws, err := testenv.NewWorkspace("helm")
	if err != nil {
		testenv.Logf("%v", err)
		return 1
	}
	defer ws.Close()
	env.repo, env.flapp = ws.Repo, ws.Binary
	tmp := ws.Dir
	// Helm 4 runs the plugin's command by name from PATH, as a user's
	// install would: put the binary under test there as flapp-services.
	env.binDir = filepath.Join(tmp, "path")
	err = os.MkdirAll(env.binDir, 0o755)
	if err == nil {
		err = os.Symlink(env.flapp, filepath.Join(env.binDir, "flapp-services"))
	}
	if err != nil {
		testenv.Logf("%v", err)
		return 1
	}
	helmDir, err := testenv.Hack(env.repo, "build-helm.sh")
	if err != nil {
		testenv.Logf("building Helm: %v", err)
		return 1
	}
	env.helm3, env.helm4 = filepath.Join(helmDir, "helm3"), filepath.Join(helmDir, "helm4")
	env.chart = filepath.Join(env.repo, "examples", "helm", "flapp")
	env.plugin = filepath.Join(env.repo, "examples", "helm", "plugin", "flapp-services")
	env.helmEnv = []string{
		"PATH=" + env.binDir + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HELM_CONFIG_HOME=" + filepath.Join(tmp, "config"),
		"HELM_CACHE_HOME=" + filepath.Join(tmp, "cache"),
		"HELM_DATA_HOME=" + filepath.Join(tmp, "data"),
		"HELM_PLUGINS=" + filepath.Join(tmp, "data", "plugins"),
	}
	// helm install/upgrade/uninstall go to a real kube-apiserver with the
	// FLApp CRD (helm template never contacts it).
	c, err := testenv.StartCluster(context.Background(), env.repo)
	if err != nil {
		testenv.Logf("control plane: %v", err)
		return 1
	}
	defer c.Stop()
	env.cluster = c
	env.helmEnv = append(env.helmEnv, "KUBECONFIG="+c.Kubeconfig)
	return m.Run()
}

// result is one run of a helm binary.
type result struct {
	stdout, stderr string
	code           int
}

func helm(t *testing.T, bin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env.helmEnv...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		t.Fatalf("run %s: %v", bin, err)
	}
	return r
}

func mustHelm(t *testing.T, bin string, args ...string) string {
	t.Helper()
	r := helm(t, bin, args...)
	require.Zerof(t, r.code, "%s %s\nstderr:\n%s", filepath.Base(bin), strings.Join(args, " "), r.stderr)
	return r.stdout
}

// decode reads a multi-document YAML stream; documents holding only
// comments or nothing are skipped, as every Kubernetes client skips them.
func decode(t *testing.T, data string) []*unstructured.Unstructured {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err, "decode YAML stream:\n%s", data)
		if len(m) == 0 {
			continue
		}
		// Numbers as Kubernetes' JSON decoding gives them (int64, not float64).
		b, err := json.Marshal(m)
		require.NoError(t, err)
		u := &unstructured.Unstructured{}
		require.NoError(t, u.UnmarshalJSON(b))
		out = append(out, u)
	}
}

func byKind(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

// chartValues are the parts of examples/helm/flapp/values.yaml the
// expectations are computed from (the test never hard-codes a Service).
type chartValues struct {
	Role         string `json:"role"`
	ReplicaSpecs map[string]struct {
		Replicas int `json:"replicas"`
		Ports    []struct {
			Name          string `json:"name"`
			ContainerPort int64  `json:"containerPort"`
		} `json:"ports"`
	} `json:"replicaSpecs"`
}

func loadValues(t *testing.T) chartValues {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(env.chart, "values.yaml"))
	require.NoError(t, err)
	var v chartValues
	require.NoError(t, yaml.Unmarshal(b, &v))
	require.NotEmpty(t, v.ReplicaSpecs)
	return v
}

// wantService is a Service the fedlearner operator would create.
type wantService struct {
	name   string
	labels map[string]string
	ports  []any
}

// expectServices derives the operator's Services of FLApp name from the
// chart's values, with replica counts overridden by replicas (type -> n).
func expectServices(v chartValues, name string, replicas map[string]int) []wantService {
	var out []wantService
	types := make([]string, 0, len(v.ReplicaSpecs))
	for typ := range v.ReplicaSpecs {
		types = append(types, typ)
	}
	sort.Strings(types)
	role := strings.ToLower(v.Role)
	for _, typ := range types {
		spec := v.ReplicaSpecs[typ]
		n := spec.Replicas
		if r, ok := replicas[typ]; ok {
			n = r
		}
		var ports []any
		for _, p := range spec.Ports {
			ports = append(ports, map[string]any{"name": p.Name, "port": p.ContainerPort, "targetPort": p.Name})
		}
		for i := range n {
			out = append(out, wantService{
				name: fmt.Sprintf("%s-%s-%s-%d", name, role, strings.ToLower(typ), i),
				labels: map[string]string{
					"app-name": name, "role": role, "fl-replica-type": strings.ToLower(typ),
					"fl-replica-index": fmt.Sprint(i),
				},
				ports: ports,
			})
		}
	}
	return out
}

// checkServices requires exactly the wanted Services, in namespace ns.
func checkServices(t *testing.T, got []*unstructured.Unstructured, want []wantService, ns string) {
	t.Helper()
	var gotNames, wantNames []string
	for _, s := range got {
		gotNames = append(gotNames, s.GetName())
	}
	for _, w := range want {
		wantNames = append(wantNames, w.name)
	}
	sort.Strings(gotNames)
	sort.Strings(wantNames)
	require.Equal(t, wantNames, gotNames, "Service names")
	for _, w := range want {
		var s *unstructured.Unstructured
		for _, g := range got {
			if g.GetName() == w.name {
				s = g
			}
		}
		assert.Equal(t, "v1", s.GetAPIVersion(), w.name)
		assert.Equal(t, ns, s.GetNamespace(), w.name)
		sel, _, _ := unstructured.NestedStringMap(s.Object, "spec", "selector")
		assert.Equal(t, w.labels, sel, "%s selector", w.name)
		for k, v := range w.labels {
			assert.Equal(t, v, s.GetLabels()[k], "%s label %s", w.name, k)
		}
		ports, _, _ := unstructured.NestedSlice(s.Object, "spec", "ports")
		assert.Equal(t, w.ports, ports, "%s ports", w.name)
	}
}

// templateArgs are the `helm template` arguments of a release of the chart.
func templateArgs(release, ns string, extra ...string) []string {
	return append([]string{"template", release, env.chart, "--namespace", ns}, extra...)
}

// The post-renderer flags of each Helm: Helm 3 runs an executable with
// arguments, Helm 4 a postrenderer/v1 plugin by name.
func helm3PostRender() []string {
	return []string{"--post-renderer", env.flapp, "--post-renderer-args", "render", "--post-renderer-args", "-"}
}

func helm4PostRender() []string { return []string{"--post-renderer", "flapp-services"} }

// installPlugin installs examples/helm/plugin/flapp-services into Helm 4's
// (isolated) plugin directory, the way a user does, once per test binary.
func installPlugin(t *testing.T) {
	t.Helper()
	list := mustHelm(t, env.helm4, "plugin", "list")
	if !strings.Contains(list, "flapp-services") {
		out := mustHelm(t, env.helm4, "plugin", "install", env.plugin)
		t.Logf("helm4 plugin install: %s", strings.TrimSpace(out))
		list = mustHelm(t, env.helm4, "plugin", "list")
	}
	require.Regexp(t, `flapp-services\s+0\.1\.0\s+postrenderer/v1`, list, "helm4 plugin list")
}

type helmCase struct {
	name    string
	bin     func() string
	postArg func() []string
	setup   func(t *testing.T)
}

var helms = []helmCase{
	{name: "helm3", bin: func() string { return env.helm3 }, postArg: helm3PostRender, setup: func(*testing.T) {}},
	{name: "helm4", bin: func() string { return env.helm4 }, postArg: helm4PostRender, setup: installPlugin},
}

// TestPostRenderer: `helm template` of the example chart with flapp-services
// as post-renderer gives everything plain `helm template` gives (FLApps and
// the ConfigMap, unchanged) plus exactly the operator's Services, for the
// default values and for overridden replica counts.
func TestPostRenderer(t *testing.T) {
	v := loadValues(t)
	cases := []struct {
		name, release, ns string
		set               []string
		replicas          map[string]int
	}{
		{name: "defaults", release: "mnist", ns: "fl-leader"},
		{name: "scaled", release: "mnist-big", ns: "fl-leader",
			set: []string{"--set", "replicaSpecs.Worker.replicas=4", "--set", "replicaSpecs.PS.replicas=2"}, replicas: map[string]int{"Worker": 4, "PS": 2}},
		{name: "nameOverride", release: "r1", ns: "team-b",
			set: []string{"--set", "nameOverride=mnist-eval", "--set", "replicaSpecs.Master.replicas=0"}, replicas: map[string]int{"Master": 0}},
	}
	for _, h := range helms {
		t.Run(h.name, func(t *testing.T) {
			h.setup(t)
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					plain := decode(t, mustHelm(t, h.bin(), templateArgs(c.release, c.ns, c.set...)...))
					out := mustHelm(t, h.bin(), templateArgs(c.release, c.ns, append(c.set, h.postArg()...)...)...)
					objs := decode(t, out)

					flapps := byKind(plain, "FLApp")
					require.Len(t, flapps, 1, "plain helm template gives one FLApp")
					name := flapps[0].GetName()
					if c.name == "nameOverride" {
						require.Equal(t, "mnist-eval", name)
					}
					// Everything Helm rendered comes through unchanged.
					var passed []*unstructured.Unstructured
					for _, o := range objs {
						if o.GetKind() != "Service" {
							passed = append(passed, o)
						}
					}
					require.Equal(t, plain, passed, "non-Service objects after post-rendering")
					checkServices(t, byKind(objs, "Service"), expectServices(v, name, c.replicas), c.ns)
				})
			}
		})
	}
}

// TestHelmComments: what Helm 3 pipes into the post-renderer carries its
// `# Source:` comments, `---` separators and a comment-only document (the
// chart's flapp.yaml starts with a comment block and `---`); the render
// keeps each object's comment, drops the empty document and writes one
// `---` between objects, so Helm's output has no empty or broken document.
func TestHelmComments(t *testing.T) {
	in := mustHelm(t, env.helm3, templateArgs("mnist", "fl-leader")...)
	require.Contains(t, in, "---\n# Source: flapp/templates/flapp.yaml\n# The FLApp of this party.", "the chart yields a comment-only document")
	require.Contains(t, in, "---\n# Source: flapp/templates/flapp.yaml\napiVersion: fedlearner.k8s.io/v1alpha1", "the FLApp has Helm's Source comment")

	// The binary alone, on exactly what Helm 3 pipes into it.
	cmd := exec.Command(env.flapp, "render", "-")
	cmd.Stdin = strings.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "render - on helm template output:\n%s", stderr.String())
	direct := stdout.String()

	// Helm 3's output is the post-renderer's output as it is.
	out := mustHelm(t, env.helm3, templateArgs("mnist", "fl-leader", helm3PostRender()...)...)
	require.Equal(t, strings.TrimSpace(direct), strings.TrimSpace(out), "helm 3 prints the post-renderer's output")

	docs := strings.Split(strings.TrimPrefix(out, "---\n"), "\n---\n")
	objs := decode(t, out)
	require.Len(t, docs, len(objs), "one document per object, no empty or comment-only document")
	for i, d := range docs {
		require.Len(t, decode(t, d), 1, "document %d holds one object:\n%s", i, d)
	}
	assert.Contains(t, out, "# Source: flapp/templates/flapp.yaml\napiVersion: fedlearner.k8s.io/v1alpha1\nkind: FLApp", "the FLApp keeps Helm's Source comment")
	assert.Contains(t, out, "# Source: flapp/templates/configmap.yaml\napiVersion: v1\nkind: ConfigMap", "the ConfigMap keeps Helm's Source comment")
	assert.NotContains(t, out, "# The FLApp of this party.", "the comment-only document is dropped")
}

// TestBadFLApp: a release whose FLApp cannot give valid Service names (a `.`
// in the name is legal for Helm and for the FLApp, illegal in a Service
// name) fails `helm template`: non-zero exit and nothing on stdout. Helm 3
// shows the reason, naming the FLApp, on stderr. Helm 4.3.1 does not: its
// subprocess runtime collects a plugin's stderr in a buffer it never reads
// (it logs ExitError.Stderr, which exec only fills for Output()), even with
// --debug; the test pins that, and that piping the same `helm template`
// into `flapp-services render -` shows the reason, as the README advises.
func TestBadFLApp(t *testing.T) {
	for _, h := range helms {
		t.Run(h.name, func(t *testing.T) {
			h.setup(t)
			// Without the post-renderer Helm accepts the release name.
			plain := mustHelm(t, h.bin(), templateArgs("mnist.v2", "fl-leader")...)
			require.Contains(t, plain, "name: mnist.v2")

			r := helm(t, h.bin(), templateArgs("mnist.v2", "fl-leader", h.postArg()...)...)
			assert.NotZero(t, r.code, "exit code")
			assert.Empty(t, r.stdout, "no partial output")
			if h.name == "helm3" {
				assert.Contains(t, r.stderr, "FLApp fl-leader/mnist.v2")
				assert.Contains(t, r.stderr, "DNS-1035")
				return
			}
			assert.Contains(t, r.stderr, `failed to invoke post-renderer plugin "flapp-services": plugin "flapp-services" exited with error`)
			assert.NotContains(t, r.stderr, "DNS-1035", "Helm 4.3.1 drops the plugin's stderr; if this fails, Helm shows it now: update examples/helm/README.md")
			r = helm(t, h.bin(), templateArgs("mnist.v2", "fl-leader", "--debug", "--post-renderer", "flapp-services")...)
			assert.NotZero(t, r.code)
			assert.NotContains(t, r.stderr, "DNS-1035", "not even with --debug")

			cmd := exec.Command(env.flapp, "render", "-")
			cmd.Stdin = strings.NewReader(plain)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			require.Error(t, cmd.Run())
			assert.Empty(t, stdout.String())
			assert.Contains(t, stderr.String(), "FLApp fl-leader/mnist.v2")
			assert.Contains(t, stderr.String(), "DNS-1035")
		})
	}
}

// liveServices returns the Services of a namespace by name.
func liveServices(t *testing.T, ns string) map[string]corev1.Service {
	t.Helper()
	list, err := env.cluster.Kube.CoreV1().Services(ns).List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	out := map[string]corev1.Service{}
	for _, s := range list.Items {
		out[s.Name] = s
	}
	return out
}

func serviceNames(svcs map[string]corev1.Service) []string {
	out := make([]string, 0, len(svcs))
	for n := range svcs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func wantNames(want []wantService) []string {
	var out []string
	for _, w := range want {
		out = append(out, w.name)
	}
	sort.Strings(out)
	return out
}

// TestInstallUpgradeUninstall: the post-renderer in a real release
// lifecycle against kube-apiserver 1.37. `helm install` creates the FLApp
// and its Services; `helm upgrade` with Worker 2 -> 1 deletes exactly
// worker-1 (it left the release manifest) and keeps every other Service's
// UID and ClusterIP; an upgrade whose FLApp is bad fails and changes nothing
// (same Services, same resourceVersions, release still at revision 2);
// `helm uninstall` deletes the Services with the FLApp.
func TestInstallUpgradeUninstall(t *testing.T) {
	v := loadValues(t)
	for _, h := range helms {
		t.Run(h.name, func(t *testing.T) {
			h.setup(t)
			ns := "helm-" + h.name
			_, err := env.cluster.Kube.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
			require.NoError(t, err)
			args := func(verb string, extra ...string) []string {
				return append(append([]string{verb, "mnist", env.chart, "--namespace", ns}, extra...), h.postArg()...)
			}

			mustHelm(t, h.bin(), args("install")...)
			_, err = env.cluster.Dyn.Resource(flappGVR).Namespace(ns).Get(context.Background(), "mnist", metav1.GetOptions{})
			require.NoError(t, err, "the FLApp is installed")
			live1 := liveServices(t, ns)
			require.Equal(t, wantNames(expectServices(v, "mnist", nil)), serviceNames(live1), "install creates the operator's Services")

			mustHelm(t, h.bin(), args("upgrade", "--set", "replicaSpecs.Worker.replicas=1")...)
			live2 := liveServices(t, ns)
			require.Equal(t, wantNames(expectServices(v, "mnist", map[string]int{"Worker": 1})), serviceNames(live2), "upgrade prunes the scaled-down Service")
			_, had := live1["mnist-leader-worker-1"]
			require.True(t, had, "worker-1 existed before the upgrade")
			for n, s := range live2 {
				assert.Equal(t, live1[n].UID, s.UID, "%s keeps its UID", n)
				assert.Equal(t, live1[n].Spec.ClusterIP, s.Spec.ClusterIP, "%s keeps its ClusterIP", n)
			}

			r := helm(t, h.bin(), args("upgrade", "--set", "replicaSpecs.Worker.replicas=0", "--set", "nameOverride=mnist.v2")...)
			assert.NotZero(t, r.code, "an upgrade with a bad FLApp fails")
			live3 := liveServices(t, ns)
			require.Equal(t, serviceNames(live2), serviceNames(live3), "the failed upgrade deletes and creates nothing")
			for n, s := range live3 {
				assert.Equal(t, live2[n].ResourceVersion, s.ResourceVersion, "%s unchanged", n)
			}
			hist := mustHelm(t, h.bin(), "history", "mnist", "--namespace", ns, "--max", "1", "-o", "json")
			assert.Contains(t, hist, `"revision":2`, "the release stays at revision 2")

			mustHelm(t, h.bin(), "uninstall", "mnist", "--namespace", ns)
			assert.Empty(t, liveServices(t, ns), "uninstall deletes the Services")
			_, err = env.cluster.Dyn.Resource(flappGVR).Namespace(ns).Get(context.Background(), "mnist", metav1.GetOptions{})
			assert.True(t, apierrors.IsNotFound(err), "uninstall deletes the FLApp: %v", err)
		})
	}
}
