package e2e

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
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
)

// Labels and annotations of a generated Service (CONTRACT.md).
const (
	managedByLabel = "app.kubernetes.io/managed-by"
	managedByValue = "flapp-services"
	flappAnno      = "fn.fedlearner.k8s.io/flapp"
)

var flappGVR = schema.GroupVersionResource{Group: "fedlearner.k8s.io", Version: "v1alpha1", Resource: "flapps"}

func ctxFor(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

var nsCleaner = regexp.MustCompile(`[^a-z0-9-]+`)

// newNamespace creates a namespace for one test and deletes it (without
// waiting) when the test ends.
func newNamespace(t *testing.T, name string) string {
	t.Helper()
	name = strings.Trim(nsCleaner.ReplaceAllString(strings.ToLower(name), "-"), "-")
	if len(name) > 63 {
		name = strings.TrimRight(name[:63], "-")
	}
	ctx := ctxFor(t)
	_, err := env.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	require.NoError(t, err, "create namespace %s", name)
	t.Cleanup(func() {
		if os.Getenv("E2E_KEEP_DIR") != "" {
			return
		}
		_ = env.kube.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return name
}

// renderResult is one run of `flapp-services render`.
type renderResult struct {
	stdout, stderr []byte
	exitCode       int
}

// renderRaw runs `flapp-services render [args...]` and reports what happened.
func renderRaw(t *testing.T, args ...string) renderResult {
	t.Helper()
	cmd := exec.Command(env.flapp, append([]string{"render"}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errb
	err := cmd.Run()
	res := renderResult{stdout: out.Bytes(), stderr: errb.Bytes()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.exitCode = ee.ExitCode()
	default:
		t.Fatalf("run %s: %v", env.flapp, err)
	}
	return res
}

// render runs `flapp-services render [args...]`, requires success and
// returns the decoded objects.
func render(t *testing.T, args ...string) []*unstructured.Unstructured {
	t.Helper()
	res := renderRaw(t, args...)
	require.Zerof(t, res.exitCode, "flapp-services render %s failed:\n%s", strings.Join(args, " "), res.stderr)
	return decodeObjects(t, res.stdout)
}

// decodeObjects reads a multi-document YAML (or JSON) stream.
func decodeObjects(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, "decode YAML stream")
		if len(m) == 0 {
			continue
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
	return objs
}

func kindIs(kind, apiVersion string) func(*unstructured.Unstructured) bool {
	return func(u *unstructured.Unstructured) bool {
		return u.GetKind() == kind && u.GetAPIVersion() == apiVersion
	}
}

var (
	isService = kindIs("Service", "v1")
	isFLApp   = kindIs("FLApp", "fedlearner.k8s.io/v1alpha1")
)

// isGenerated tells the Services flapp-services generated (CONTRACT.md).
func isGenerated(u *unstructured.Unstructured) bool {
	return isService(u) && u.GetLabels()[managedByLabel] == managedByValue && u.GetAnnotations()[flappAnno] != ""
}

func filter(objs []*unstructured.Unstructured, keep func(*unstructured.Unstructured) bool) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if keep(o) {
			out = append(out, o)
		}
	}
	return out
}

func names(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetName())
	}
	sort.Strings(out)
	return out
}

// resourceFor maps an object to its dynamic client.
func resourceFor(t *testing.T, u *unstructured.Unstructured) dynamic.ResourceInterface {
	t.Helper()
	gvk := u.GroupVersionKind()
	mapping, err := env.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		env.mapper.Reset()
		mapping, err = env.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	require.NoError(t, err, "REST mapping for %s", gvk)
	if mapping.Scope.Name() == "namespace" {
		return env.dyn.Resource(mapping.Resource).Namespace(u.GetNamespace())
	}
	return env.dyn.Resource(mapping.Resource)
}

type applyOpts struct {
	manager string
	force   bool
	dryRun  bool
}

// applySSA server-side applies each object and returns the results.
func applySSA(t *testing.T, objs []*unstructured.Unstructured, o applyOpts) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, u := range objs {
		got, err := trySSA(t, u, o)
		require.NoError(t, err, "server-side apply %s %s/%s:\n%s", u.GetKind(), u.GetNamespace(), u.GetName(), toYAML(u))
		out = append(out, got)
	}
	return out
}

func trySSA(t *testing.T, u *unstructured.Unstructured, o applyOpts) (*unstructured.Unstructured, error) {
	t.Helper()
	if o.manager == "" {
		o.manager = "e2e"
	}
	data, err := json.Marshal(u.Object)
	require.NoError(t, err)
	opts := metav1.PatchOptions{FieldManager: o.manager, Force: &o.force}
	if o.dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	return resourceFor(t, u).Patch(ctxFor(t), u.GetName(), types.ApplyPatchType, data, opts)
}

func toYAML(u *unstructured.Unstructured) string {
	b, err := json.MarshalIndent(u.Object, "", "  ")
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// liveServices returns the Services of a namespace by name.
func liveServices(t *testing.T, ns string) map[string]corev1.Service {
	t.Helper()
	list, err := env.kube.CoreV1().Services(ns).List(ctxFor(t), metav1.ListOptions{})
	require.NoError(t, err)
	out := map[string]corev1.Service{}
	for _, s := range list.Items {
		out[s.Name] = s
	}
	return out
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// kubectl runs the built kubectl against the test cluster.
func kubectl(t *testing.T, stdin []byte, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(env.kubectl, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+env.cluster.Kubeconfig, "KUBECTL_APPLYSET=true")
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

func mustKubectl(t *testing.T, stdin []byte, args ...string) string {
	t.Helper()
	out, errOut, err := kubectl(t, stdin, args...)
	require.NoError(t, err, "kubectl %s\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), out, errOut)
	return out
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

// replicaType describes one flReplicaSpecs entry of a test FLApp.
type replicaType struct {
	name     string // e.g. Worker
	replicas int
	pair     bool
	ports    []port
}

type port struct {
	name     string
	number   int
	protocol string
}

// flappYAML writes an FLApp manifest like a user keeps in Git.
func flappYAML(name, ns, role string, types ...replicaType) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: fedlearner.k8s.io/v1alpha1\nkind: FLApp\nmetadata:\n  name: %s\n", name)
	if ns != "" {
		fmt.Fprintf(&b, "  namespace: %s\n", ns)
	}
	peer := "Follower"
	if role != "Leader" {
		peer = "Leader"
	}
	fmt.Fprintf(&b, "spec:\n  role: %s\n  peerSpecs:\n    %s:\n      peerURL: fedlearner-operator.peer.svc.cluster.local:8100\n  flReplicaSpecs:\n", role, peer)
	for _, rt := range types {
		fmt.Fprintf(&b, "    %s:\n      replicas: %d\n      pair: %t\n      template:\n        spec:\n          containers:\n            - name: tensorflow\n              image: registry.local/fedlearner:e2e\n              ports:\n", rt.name, rt.replicas, rt.pair)
		for _, p := range rt.ports {
			fmt.Fprintf(&b, "                - name: %s\n                  containerPort: %d\n", p.name, p.number)
			if p.protocol != "" {
				fmt.Fprintf(&b, "                  protocol: %s\n", p.protocol)
			}
		}
	}
	return b.String()
}

var defaultPorts = []port{{name: "flapp-port", number: 50051}, {name: "tf-port", number: 50052}}

// expectedNames lists the Service names the operator would create.
func expectedNames(flapp, role string, types ...replicaType) []string {
	var out []string
	for _, rt := range types {
		for i := range rt.replicas {
			out = append(out, fmt.Sprintf("%s-%s-%s-%d", flapp, strings.ToLower(role), strings.ToLower(rt.name), i))
		}
	}
	sort.Strings(out)
	return out
}

// identity is what must survive a re-apply: same object, same address.
type identity struct {
	UID       types.UID
	ClusterIP string
}

func identities(svcs map[string]corev1.Service) map[string]identity {
	out := map[string]identity{}
	for n, s := range svcs {
		out[n] = identity{UID: s.UID, ClusterIP: s.Spec.ClusterIP}
	}
	return out
}

// waitUntil polls cond every 250 ms until it is true or timeout passes.
func waitUntil(t *testing.T, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		return cond()
	})
	require.NoError(t, err, "waiting at most %s for %s", timeout, what)
}

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }

// exportFLApp writes the live FLApp as `kubectl get flapp -o yaml` prints it
// (UID included) into dir/<name>.yaml.
func exportFLApp(t *testing.T, ns, name, dir string) string {
	t.Helper()
	out := mustKubectl(t, nil, "get", "flapp", name, "-n", ns, "-o", "yaml")
	path := filepath.Join(dir, name+".yaml")
	writeFile(t, path, out)
	return path
}

// createFromFile creates the objects of a manifest file (FLApps from Git)
// with server-side apply and returns them as stored.
func createFromFile(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return applySSA(t, decodeObjects(t, data), applyOpts{manager: "e2e-user"})
}
