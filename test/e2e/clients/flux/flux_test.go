// Package flux proves the render of examples/flux with Flux's real
// kustomize-controller v1.9.6, built from source by
// test/e2e/hack/build-flux.sh and run against the e2e control plane. No
// source-controller runs: the test plays its part, serving each revision's
// tar.gz on loopback and writing the GitRepository's status.artifact (URL,
// revision, sha256 digest) the way source-controller does. See README.md.
package flux

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/fedlearner/flapp-services/test/e2e/internal/testenv"
)

const (
	exampleDir   = "examples/flux"
	clusterFile  = "examples/flux/clusters/git/flapps.yaml" // applied as shipped
	fluxNS       = "flux-system"
	controller   = "kustomize-controller"
	reconcileMax = 2 * time.Minute
)

var (
	gitRepoGVR = schema.GroupVersionResource{Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "gitrepositories"}
	ksGVR      = schema.GroupVersionResource{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Resource: "kustomizations"}
	flappGVR   = schema.GroupVersionResource{Group: "fedlearner.k8s.io", Version: "v1alpha1", Resource: "flapps"}
)

var env struct {
	repo     string
	flapp    string
	cluster  *testenv.Cluster
	artifact *artifactServer
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	start := time.Now()
	ws, err := testenv.NewWorkspace("flux")
	if err != nil {
		testenv.Logf("%v", err)
		return 1
	}
	defer ws.Close()
	env.repo, env.flapp = ws.Repo, ws.Binary
	fluxDir, err := testenv.Hack(env.repo, "build-flux.sh")
	if err != nil {
		testenv.Logf("building kustomize-controller: %v", err)
		return 1
	}
	// The Flux CRDs (Kustomization; GitRepository, OCIRepository, Bucket,
	// ExternalArtifact, ...: the controller watches every source kind).
	c, err := testenv.StartCluster(context.Background(), env.repo, filepath.Join(fluxDir, "crds"))
	if err != nil {
		testenv.Logf("control plane: %v", err)
		return 1
	}
	env.cluster = c
	code := 1
	defer func() {
		if code != 0 {
			testenv.Logf("%s log tail:\n%s", controller, c.Log(controller, 40))
		}
		keep := os.Getenv("E2E_KEEP_DIR") != ""
		c.StopKeep(keep)
		if keep {
			testenv.Logf("kept %s", c.Dir)
		}
	}()

	if env.artifact, err = startArtifactServer(); err != nil {
		testenv.Logf("artifact server: %v", err)
		return 1
	}
	defer env.artifact.close()

	// The real controller, as Flux's Deployment runs it, minus the ports it
	// needs in a pod. SOURCE_CONTROLLER_LOCALHOST sends the artifact URL's
	// host (source-controller's in-cluster Service) to the loopback server.
	if err := c.StartProcess(controller, filepath.Join(fluxDir, controller), []string{
		"KUBECONFIG=" + c.Kubeconfig,
		"SOURCE_CONTROLLER_LOCALHOST=" + env.artifact.addr,
		"RUNTIME_NAMESPACE=" + fluxNS,
	}, "--metrics-addr=0", "--health-addr=0", "--log-level=debug", "--log-encoding=console"); err != nil {
		testenv.Logf("%s: %v", controller, err)
		return 1
	}
	testenv.Logf("%s started; artifacts served on %s; set-up took %s", controller, env.artifact.addr, time.Since(start).Round(time.Second))
	code = m.Run()
	testenv.Logf("flux suite finished in %s", time.Since(start).Round(time.Second))
	return code
}

// artifactServer stands in for source-controller's artifact storage: it
// serves tar.gz files by path on 127.0.0.1 and counts the requests.
type artifactServer struct {
	addr  string
	srv   *http.Server
	mu    sync.Mutex
	files map[string][]byte
	hits  map[string]int
}

func startArtifactServer() (*artifactServer, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	a := &artifactServer{addr: l.Addr().String(), files: map[string][]byte{}, hits: map[string]int{}}
	a.srv = &http.Server{Handler: a, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = a.srv.Serve(l) }()
	return a, nil
}

func (a *artifactServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	b, ok := a.files[r.URL.Path]
	a.hits[r.URL.Path]++
	a.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/gzip")
	_, _ = w.Write(b)
}

func (a *artifactServer) put(path string, b []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.files[path] = b
}

func (a *artifactServer) hitCount(path string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.hits[path]
}

func (a *artifactServer) close() { _ = a.srv.Close() }

// ctxFor is a per-test context.
func ctxFor(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// renderDir runs `flapp-services render dir` and returns its stdout.
func renderDir(t *testing.T, dir string) []byte {
	t.Helper()
	cmd := exec.Command(env.flapp, "render", dir)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Run(), "flapp-services render %s:\n%s", dir, errb.String())
	return out.Bytes()
}

func decode(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		if len(m) > 0 {
			out = append(out, &unstructured.Unstructured{Object: m})
		}
	}
}

// revision is one commit of the (imaginary) Git repository: the rendered
// folder at the Kustomization's path, packed as source-controller packs it.
type revision struct {
	rendered []byte
	tarGz    []byte
	sha1     string // the "commit"
	digest   string // sha256:<hex of tarGz>
}

func newRevision(t *testing.T, rendered []byte, path string) revision {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	name := filepath.ToSlash(filepath.Join(path, "flapps.yaml"))
	// Directories first, as a Git checkout tarball has them.
	var dirs []string
	for d := filepath.Dir(name); d != "."; d = filepath.Dir(d) {
		dirs = append([]string{d}, dirs...)
	}
	for _, d := range dirs {
		require.NoError(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755}))
	}
	require.NoError(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(rendered))}))
	_, err := tw.Write(rendered)
	require.NoError(t, err)
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())
	s1 := sha1.Sum(rendered)
	s256 := sha256.Sum256(buf.Bytes())
	return revision{rendered: rendered, tarGz: buf.Bytes(), sha1: hex.EncodeToString(s1[:]), digest: "sha256:" + hex.EncodeToString(s256[:])}
}

func (r revision) name() string { return "main@sha1:" + r.sha1 }

// publish serves the revision and writes the GitRepository's artifact
// status as source-controller would (digest overridable, to lie).
func publish(t *testing.T, repo string, r revision, digest string) string {
	t.Helper()
	path := fmt.Sprintf("/gitrepository/%s/%s/%s.tar.gz", fluxNS, repo, r.sha1)
	env.artifact.put(path, r.tarGz)
	now := time.Now().UTC().Format(time.RFC3339)
	status := map[string]any{"status": map[string]any{
		"observedGeneration": 1,
		"artifact": map[string]any{
			"path":           strings.TrimPrefix(path, "/"),
			"url":            "http://source-controller." + fluxNS + ".svc.cluster.local." + path,
			"revision":       r.name(),
			"digest":         digest,
			"lastUpdateTime": now,
			"size":           len(r.tarGz),
		},
		"conditions": []any{map[string]any{
			"type": "Ready", "status": "True", "reason": "Succeeded", "observedGeneration": 1,
			"message": "stored artifact for revision '" + r.name() + "'", "lastTransitionTime": now,
		}},
	}}
	b, err := json.Marshal(status)
	require.NoError(t, err)
	_, err = env.cluster.Dyn.Resource(gitRepoGVR).Namespace(fluxNS).Patch(ctxFor(t), repo, types.MergePatchType, b, metav1.PatchOptions{}, "status")
	require.NoError(t, err, "patch GitRepository status")
	return path
}

// requestReconcile sets the annotation `flux reconcile kustomization` sets
// and returns its value, which the controller copies to
// status.lastHandledReconcileAt when it has handled the request.
func requestReconcile(t *testing.T, name string) string {
	t.Helper()
	token := time.Now().UTC().Format(time.RFC3339Nano)
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"reconcile.fluxcd.io/requestedAt":%q}}}`, token)
	_, err := env.cluster.Dyn.Resource(ksGVR).Namespace(fluxNS).Patch(ctxFor(t), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	require.NoError(t, err)
	return token
}

// ksStatus reads what the controller reports on the Kustomization.
type ksStatus struct {
	conds              map[string]metav1.Condition
	applied, attempted string
	lastHandled        string // the last reconcile request handled
	inventory          []string
	observedGeneration int64
	generation         int64
}

func getKustomization(t *testing.T, name string) ksStatus {
	t.Helper()
	u, err := env.cluster.Dyn.Resource(ksGVR).Namespace(fluxNS).Get(ctxFor(t), name, metav1.GetOptions{})
	require.NoError(t, err)
	var st struct {
		Conditions             []metav1.Condition `json:"conditions"`
		LastAppliedRevision    string             `json:"lastAppliedRevision"`
		LastAttemptedRevision  string             `json:"lastAttemptedRevision"`
		LastHandledReconcileAt string             `json:"lastHandledReconcileAt"`
		ObservedGeneration     int64              `json:"observedGeneration"`
		Inventory              struct {
			Entries []struct {
				ID string `json:"id"`
			} `json:"entries"`
		} `json:"inventory"`
	}
	raw, _, _ := unstructured.NestedMap(u.Object, "status")
	b, err := json.Marshal(raw)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &st))
	out := ksStatus{conds: map[string]metav1.Condition{}, applied: st.LastAppliedRevision, attempted: st.LastAttemptedRevision,
		lastHandled: st.LastHandledReconcileAt, observedGeneration: st.ObservedGeneration, generation: u.GetGeneration()}
	for _, c := range st.Conditions {
		out.conds[c.Type] = c
	}
	for _, e := range st.Inventory.Entries {
		out.inventory = append(out.inventory, e.ID)
	}
	sort.Strings(out.inventory)
	return out
}

// waitKustomization polls until cond holds for the Kustomization's status.
func waitKustomization(t *testing.T, name, what string, cond func(ksStatus) bool) ksStatus {
	t.Helper()
	var last ksStatus
	err := wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, reconcileMax, true, func(context.Context) (bool, error) {
		last = getKustomization(t, name)
		return cond(last), nil
	})
	require.NoError(t, err, "waiting %s for Kustomization %s: %s; last status: %+v\n%s log tail:\n%s",
		reconcileMax, name, what, last, controller, env.cluster.Log(controller, 30))
	return last
}

func readyFor(rev string) func(ksStatus) bool {
	return func(s ksStatus) bool {
		return s.applied == rev && s.conds["Ready"].Status == metav1.ConditionTrue && s.observedGeneration == s.generation
	}
}

// liveServices returns the Services of the FLApp namespaces by ns/name.
func liveServices(t *testing.T, namespaces ...string) map[string]corev1.Service {
	t.Helper()
	out := map[string]corev1.Service{}
	for _, ns := range namespaces {
		list, err := env.cluster.Kube.CoreV1().Services(ns).List(ctxFor(t), metav1.ListOptions{})
		require.NoError(t, err)
		for _, s := range list.Items {
			out[ns+"/"+s.Name] = s
		}
	}
	return out
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// renderedServices returns the rendered Services by ns/name.
func renderedServices(t *testing.T, objs []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	t.Helper()
	out := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		if o.GetKind() == "Service" {
			out[o.GetNamespace()+"/"+o.GetName()] = o
		}
	}
	return out
}

// requireAsRendered checks that the live Services are exactly the rendered
// ones: same set; labels, annotations, selector and ports as rendered
// (kube-apiserver only adds defaults: protocol TCP, a ClusterIP).
func requireAsRendered(t *testing.T, ks string, rendered map[string]*unstructured.Unstructured, live map[string]corev1.Service) {
	t.Helper()
	require.Equal(t, keys(rendered), keys(live), "live Services = rendered Services")
	for k, r := range rendered {
		l := live[k]
		for lk, lv := range r.GetLabels() {
			assert.Equal(t, lv, l.Labels[lk], "%s label %s", k, lk)
		}
		for ak, av := range r.GetAnnotations() {
			assert.Equal(t, av, l.Annotations[ak], "%s annotation %s", k, ak)
		}
		sel, _, _ := unstructured.NestedStringMap(r.Object, "spec", "selector")
		assert.Equal(t, sel, l.Spec.Selector, "%s selector", k)
		ports, _, _ := unstructured.NestedSlice(r.Object, "spec", "ports")
		require.Len(t, l.Spec.Ports, len(ports), "%s ports", k)
		for i, p := range ports {
			pm := p.(map[string]any)
			lp := l.Spec.Ports[i]
			assert.Equal(t, pm["name"], lp.Name, "%s port %d name", k, i)
			assert.EqualValues(t, pm["port"], lp.Port, "%s port %d", k, i)
			assert.Equal(t, pm["targetPort"], lp.TargetPort.String(), "%s port %d targetPort", k, i)
			proto := "TCP"
			if v, ok := pm["protocol"].(string); ok {
				proto = v
			}
			assert.Equal(t, proto, string(lp.Protocol), "%s port %d protocol", k, i)
		}
		assert.NotEmpty(t, l.Spec.ClusterIP, "%s has a ClusterIP", k)
		// Flux's own tracking labels, set by the real controller.
		assert.Equal(t, ks, l.Labels["kustomize.toolkit.fluxcd.io/name"], "%s", k)
		assert.Equal(t, fluxNS, l.Labels["kustomize.toolkit.fluxcd.io/namespace"], "%s", k)
	}
}

type identity struct {
	UID             types.UID
	ClusterIP       string
	ResourceVersion string
}

func identities(svcs map[string]corev1.Service) map[string]identity {
	out := map[string]identity{}
	for k, s := range svcs {
		out[k] = identity{UID: s.UID, ClusterIP: s.Spec.ClusterIP, ResourceVersion: s.ResourceVersion}
	}
	return out
}

func flappVersions(t *testing.T, namespaces ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, ns := range namespaces {
		list, err := env.cluster.Dyn.Resource(flappGVR).Namespace(ns).List(ctxFor(t), metav1.ListOptions{})
		require.NoError(t, err)
		for _, f := range list.Items {
			out[ns+"/"+f.GetName()] = f.GetResourceVersion()
		}
	}
	return out
}

// scaleCopy copies examples/flux/flapps into a temp dir with the Worker
// replicas of the given files changed from `from` to `to`.
func scaleCopy(t *testing.T, src string, files map[string][2]int) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	require.NoError(t, err)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		require.NoError(t, err)
		if ft, ok := files[e.Name()]; ok {
			old := fmt.Sprintf("    Worker:\n      pair: true\n      replicas: %d\n", ft[0])
			require.Equal(t, 1, strings.Count(string(b), old), "%s: Worker with %d replicas", e.Name(), ft[0])
			b = []byte(strings.Replace(string(b), old, fmt.Sprintf("    Worker:\n      pair: true\n      replicas: %d\n", ft[1]), 1))
		}
		require.NoError(t, os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644))
	}
	return dst
}

// TestKustomizeController runs the path of examples/flux/README.md with the
// real kustomize-controller: the example's GitRepository and Kustomization
// as shipped; revision 1 applied; revision 2 (a scale-down) prunes exactly
// the stale Services; an artifact with a wrong digest changes nothing; the
// same artifact with its right digest then applies. `wait: true` (health
// checks of everything applied) holds throughout.
func TestKustomizeController(t *testing.T) {
	c := env.cluster
	namespaces := []string{"fl-leader", "fl-follower"}
	for _, ns := range append([]string{fluxNS}, namespaces...) {
		_, err := c.Kube.CoreV1().Namespaces().Create(ctxFor(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if !apierrors.IsAlreadyExists(err) {
			require.NoError(t, err)
		}
	}

	// The example's Flux objects, exactly as shipped.
	shipped, err := os.ReadFile(filepath.Join(env.repo, clusterFile))
	require.NoError(t, err)
	var repoName, ksName, ksPath string
	for _, o := range decode(t, shipped) {
		switch o.GetKind() {
		case "GitRepository":
			repoName = o.GetName()
		case "Kustomization":
			ksName = o.GetName()
			ksPath, _, _ = unstructured.NestedString(o.Object, "spec", "path")
			w, _, _ := unstructured.NestedBool(o.Object, "spec", "wait")
			require.True(t, w, "the example's Kustomization has wait: true")
		}
	}
	require.NotEmpty(t, repoName)
	require.Equal(t, "flapps", ksName)
	_, err = c.Run(nil, "apply", "--server-side", "-f", filepath.Join(env.repo, clusterFile))
	require.NoError(t, err)

	// Without an artifact the controller waits for one.
	waitKustomization(t, ksName, "no artifact yet", func(s ksStatus) bool {
		return s.conds["Ready"].Status == metav1.ConditionFalse && s.conds["Ready"].Reason == "ArtifactFailed"
	})

	flappsDir := filepath.Join(env.repo, exampleDir, "flapps")

	// Revision 1: the render of examples/flux/flapps.
	rev1 := newRevision(t, renderDir(t, flappsDir), ksPath)
	publish(t, repoName, rev1, rev1.digest)
	// The example's health checks hold the Kustomization until the FLApps
	// run; here nothing runs them, so the test writes the state the operator
	// would once both parties have paired.
	for _, ns := range namespaces {
		setAppState(t, ns, "mnist", "FLStateRunning")
	}
	st := waitKustomization(t, ksName, "revision 1 applied", readyFor(rev1.name()))
	assert.Equal(t, metav1.ConditionTrue, st.conds["Healthy"].Status, "wait: true health checks passed: %+v", st.conds["Healthy"])
	objs1 := decode(t, rev1.rendered)
	want1 := renderedServices(t, objs1)
	require.NotEmpty(t, want1)
	live1 := liveServices(t, namespaces...)
	requireAsRendered(t, ksName, want1, live1)
	assert.Len(t, st.inventory, len(objs1), "inventory: every rendered object")
	fl := flappVersions(t, namespaces...)
	assert.Len(t, fl, len(objs1)-len(want1), "every rendered FLApp exists")

	// Revision 2: Worker 2 -> 1 on both sides. The stale Services are what
	// the two renders differ by, and that is exactly each side's worker-1.
	rev2 := newRevision(t, renderDir(t, scaleCopy(t, flappsDir, map[string][2]int{
		"mnist-leader.yaml": {2, 1}, "mnist-follower.yaml": {2, 1},
	})), ksPath)
	want2 := renderedServices(t, decode(t, rev2.rendered))
	var stale []string
	for k := range want1 {
		if _, ok := want2[k]; !ok {
			stale = append(stale, k)
		}
	}
	sort.Strings(stale)
	require.Equal(t, []string{"fl-follower/mnist-follower-worker-1", "fl-leader/mnist-leader-worker-1"}, stale)

	publish(t, repoName, rev2, rev2.digest)
	st = waitKustomization(t, ksName, "revision 2 applied", readyFor(rev2.name()))
	assert.Equal(t, metav1.ConditionTrue, st.conds["Healthy"].Status, "health checks after the scale-down")
	live2 := liveServices(t, namespaces...)
	requireAsRendered(t, ksName, want2, live2)
	for _, k := range stale {
		parts := strings.SplitN(k, "/", 2)
		_, err := c.Kube.CoreV1().Services(parts[0]).Get(ctxFor(t), parts[1], metav1.GetOptions{})
		assert.True(t, apierrors.IsNotFound(err), "%s pruned: %v", k, err)
	}
	id1 := identities(live1)
	for k, s := range live2 {
		assert.Equal(t, id1[k].UID, s.UID, "%s keeps its UID", k)
		assert.Equal(t, id1[k].ClusterIP, s.Spec.ClusterIP, "%s keeps its ClusterIP", k)
	}

	// Revision 3 (Worker 1 -> 0 on the leader) published with a wrong
	// digest: the controller fetches it, rejects it, and the cluster stays
	// exactly at revision 2.
	before := identities(live2)
	beforeFL := flappVersions(t, namespaces...)
	rev3 := newRevision(t, renderDir(t, scaleCopy(t, flappsDir, map[string][2]int{
		"mnist-leader.yaml": {2, 0}, "mnist-follower.yaml": {2, 1},
	})), ksPath)
	require.NotEqual(t, rev2.digest, rev3.digest)
	path3 := publish(t, repoName, rev3, rev2.digest)
	st = waitKustomization(t, ksName, "revision 3 rejected", func(s ksStatus) bool {
		r := s.conds["Ready"]
		return r.Status == metav1.ConditionFalse && r.Reason == "ArtifactFailed" && strings.Contains(r.Message, "digest")
	})
	t.Logf("wrong digest: Ready=False %s: %s", st.conds["Ready"].Reason, st.conds["Ready"].Message)
	assert.Positive(t, env.artifact.hitCount(path3), "the controller downloaded the artifact before rejecting it")
	assert.Equal(t, rev2.name(), st.applied, "last applied revision stays 2")
	assert.Equal(t, before, identities(liveServices(t, namespaces...)), "no Service created, changed or deleted")
	assert.Equal(t, beforeFL, flappVersions(t, namespaces...), "no FLApp changed")

	// The same revision with its true digest applies: the rejection was the
	// digest, nothing else. Same revision, so the source watch does not fire;
	// ask for a reconcile as `flux reconcile kustomization flapps` does.
	publish(t, repoName, rev3, rev3.digest)
	requestReconcile(t, ksName)
	st = waitKustomization(t, ksName, "revision 3 applied", readyFor(rev3.name()))
	assert.Equal(t, metav1.ConditionTrue, st.conds["Healthy"].Status)
	want3 := renderedServices(t, decode(t, rev3.rendered))
	requireAsRendered(t, ksName, want3, liveServices(t, namespaces...))
	_, err = c.Kube.CoreV1().Services("fl-leader").Get(ctxFor(t), "mnist-leader-worker-0", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "leader worker-0 pruned at revision 3")
}
