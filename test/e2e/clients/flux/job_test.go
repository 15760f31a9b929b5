package flux

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"
)

// job is one test's own copy of the example: FLApps of examples/flux/flapps
// moved to namespaces of their own (<name>-leader, <name>-follower), applied
// by a GitRepository and a Kustomization named <name> whose spec is the
// shipped one of clusters/git/flapps.yaml (wait, prune, timeout and the
// FLApp health checks) with only its source changed, so tests can run side
// by side under the one controller.
type job struct {
	name     string
	src      string // the FLApps' folder, a temp copy the test may edit
	ksPath   string
	postEdit func(t *testing.T, rendered []byte) []byte // changes the render before it is published
	rev      revision                                   // the last published
}

func (j *job) ns(party string) string { return j.name + "-" + party }

type jobOptions struct {
	files    []string                                   // of examples/flux/flapps; default: all
	edit     func(file string, b []byte) []byte         // changes an FLApp file
	ksEdit   func(ks *unstructured.Unstructured)        // changes the Kustomization
	postEdit func(t *testing.T, rendered []byte) []byte // changes the render
	// sources, when set, gives the job's FLApp files instead of
	// examples/flux/flapps (files and edit are then unused).
	sources func(j *job) map[string][]byte
}

// newJob creates the job's namespaces, source folder, GitRepository and
// Kustomization, and publishes the render of its FLApps as the first
// revision.
func newJob(t *testing.T, name string, o jobOptions) *job {
	t.Helper()
	j := &job{name: name, src: t.TempDir(), postEdit: o.postEdit}
	for _, ns := range []string{fluxNS, j.ns("leader"), j.ns("follower")} {
		_, err := env.cluster.Kube.CoreV1().Namespaces().Create(ctxFor(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if ns != fluxNS || !apierrors.IsAlreadyExists(err) {
			require.NoError(t, err, "create namespace %s", ns)
		}
	}
	files := o.files
	if files == nil {
		files = []string{"mnist-follower.yaml", "mnist-leader.yaml"}
	}
	if o.sources != nil {
		files = nil
		for f, b := range o.sources(j) {
			require.NoError(t, os.WriteFile(filepath.Join(j.src, f), b, 0o644))
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(env.repo, exampleDir, "flapps", f))
		require.NoError(t, err)
		s := string(b)
		for _, party := range []string{"leader", "follower"} {
			s = strings.Replace(s, "\n  namespace: fl-"+party+"\n", "\n  namespace: "+j.ns(party)+"\n", 1)
		}
		require.Contains(t, s, "\n  namespace: "+name+"-", "%s: its namespace moved", f)
		b = []byte(s)
		if o.edit != nil {
			b = o.edit(f, b)
		}
		require.NoError(t, os.WriteFile(filepath.Join(j.src, f), b, 0o644))
	}

	shipped, err := os.ReadFile(filepath.Join(env.repo, clusterFile))
	require.NoError(t, err)
	for _, obj := range decode(t, shipped) {
		obj.SetName(name)
		gvr := gitRepoGVR
		if obj.GetKind() == "Kustomization" {
			gvr = ksGVR
			require.NoError(t, unstructured.SetNestedField(obj.Object, name, "spec", "sourceRef", "name"))
			j.ksPath, _, _ = unstructured.NestedString(obj.Object, "spec", "path")
			if o.ksEdit != nil {
				o.ksEdit(obj)
			}
		}
		_, err := env.cluster.Dyn.Resource(gvr).Namespace(fluxNS).Create(ctxFor(t), obj, metav1.CreateOptions{})
		require.NoError(t, err, "create %s %s", obj.GetKind(), name)
	}
	require.NotEmpty(t, j.ksPath)
	j.publish(t)
	return j
}

// publish renders the job's FLApps and publishes them as a new revision.
func (j *job) publish(t *testing.T) revision {
	t.Helper()
	rendered := renderDir(t, j.src)
	if j.postEdit != nil {
		rendered = j.postEdit(t, rendered)
	}
	j.rev = newRevision(t, rendered, j.ksPath)
	publish(t, j.name, j.rev, j.rev.digest)
	return j.rev
}

// run plays the operator up to FLStateRunning for every FLApp of the last
// revision and waits until the Kustomization is Ready on it.
func (j *job) run(t *testing.T) ksStatus {
	t.Helper()
	for _, o := range decode(t, j.rev.rendered) {
		if o.GetKind() == "FLApp" {
			setAppState(t, o.GetNamespace(), o.GetName(), "FLStateRunning")
		}
	}
	return waitKustomization(t, j.name, "running job ready", readyFor(j.rev.name()))
}

// services returns the Services of the last revision in ns, by ns/name.
func (j *job) services(t *testing.T, ns string) map[string]*unstructured.Unstructured {
	t.Helper()
	out := map[string]*unstructured.Unstructured{}
	for k, s := range renderedServices(t, decode(t, j.rev.rendered)) {
		if s.GetNamespace() == ns {
			out[k] = s
		}
	}
	return out
}

// reconcileNow requests a reconcile (what `flux reconcile kustomization`
// does, and what the interval does on its own) and waits until the
// controller has handled that request.
func reconcileNow(t *testing.T, name string) ksStatus {
	t.Helper()
	token := requestReconcile(t, name)
	return waitKustomization(t, name, "reconcile request "+token+" handled", func(s ksStatus) bool {
		return s.lastHandled == token
	})
}

// setAppState writes status.appState of an FLApp through the status
// subresource, as the operator does; it waits for the FLApp to exist (Flux
// may still be applying it).
func setAppState(t *testing.T, ns, name, state string) {
	t.Helper()
	patch := fmt.Appendf(nil, `{"status":{"appState":%q}}`, state)
	err := wait.PollUntilContextTimeout(ctxFor(t), 250*time.Millisecond, reconcileMax, true, func(ctx context.Context) (bool, error) {
		_, err := env.cluster.Dyn.Resource(flappGVR).Namespace(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
	require.NoError(t, err, "set %s/%s status.appState=%s", ns, name, state)
}

// freeResource deletes an FLApp's Services as the operator's freeResource
// does when the job completes or fails (bytedance/fedlearner,
// deploy/kubernetes_operator/pkg/operator/app_manager.go): nothing
// when spec.cleanPodPolicy is None; otherwise, for every replica index (each
// has a pod while the job runs), the Service <app>-<role>-<type>-<index> by
// name, whoever created it, skipping one that is missing or terminating. It
// returns the ns/names it deleted. (freeResource also deletes the job's pods,
// ConfigMaps and Ingress; the render holds none of them.)
func freeResource(t *testing.T, ns, name string) []string {
	t.Helper()
	app, err := env.cluster.Dyn.Resource(flappGVR).Namespace(ns).Get(ctxFor(t), name, metav1.GetOptions{})
	require.NoError(t, err)
	if p, _, _ := unstructured.NestedString(app.Object, "spec", "cleanPodPolicy"); p == "None" {
		return nil
	}
	role, _, _ := unstructured.NestedString(app.Object, "spec", "role")
	specs, _, _ := unstructured.NestedMap(app.Object, "spec", "flReplicaSpecs")
	var deleted []string
	for rtype, v := range specs {
		spec, _ := v.(map[string]any)
		// The operator's defaults: replicas 0, or 1 for a paired type.
		replicas := int64(0)
		if pair, _ := spec["pair"].(bool); pair {
			replicas = 1
		}
		if r, ok, _ := unstructured.NestedInt64(spec, "replicas"); ok {
			replicas = r
		}
		for i := range replicas {
			svc := fmt.Sprintf("%s-%s-%s-%d", name, strings.ToLower(role), strings.ToLower(rtype), i)
			cur, err := env.cluster.Kube.CoreV1().Services(ns).Get(ctxFor(t), svc, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				continue
			}
			require.NoError(t, err)
			if cur.DeletionTimestamp != nil {
				continue
			}
			require.NoError(t, env.cluster.Kube.CoreV1().Services(ns).Delete(ctxFor(t), svc, metav1.DeleteOptions{}))
			deleted = append(deleted, ns+"/"+svc)
		}
	}
	sort.Strings(deleted)
	return deleted
}

// annotateServices returns a postEdit that puts an annotation on every
// Service of the render (the test's own manifests; the render itself has no
// such option).
func annotateServices(key, value string) func(t *testing.T, rendered []byte) []byte {
	return func(t *testing.T, rendered []byte) []byte {
		t.Helper()
		var docs []string
		for _, o := range decode(t, rendered) {
			if o.GetKind() == "Service" {
				a := o.GetAnnotations()
				if a == nil {
					a = map[string]string{}
				}
				a[key] = value
				o.SetAnnotations(a)
			}
			b, err := yaml.Marshal(o.Object)
			require.NoError(t, err)
			docs = append(docs, string(b))
		}
		return []byte(strings.Join(docs, "---\n"))
	}
}

// inventoryIn returns the inventory entries of objects in ns.
func inventoryIn(s ksStatus, ns string) []string {
	var out []string
	for _, id := range s.inventory {
		if strings.HasPrefix(id, ns+"_") {
			out = append(out, id)
		}
	}
	return out
}
