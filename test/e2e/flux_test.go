package e2e

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling"
	"github.com/fluxcd/cli-utils/pkg/object"
	"github.com/fluxcd/pkg/ssa"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// fluxApplier does what kustomize-controller does with a build: stage-apply
// with github.com/fluxcd/pkg/ssa under its field manager and owner labels,
// keep the applied set as the inventory, and delete what dropped out of it.
type fluxApplier struct {
	rm        *ssa.ResourceManager
	inventory object.ObjMetadataSet
	name, ns  string // the (imaginary) Kustomization owning the inventory
}

func newFluxApplier(t *testing.T, name, ns string) *fluxApplier {
	t.Helper()
	c, err := client.New(env.cfg, client.Options{})
	require.NoError(t, err)
	poller := polling.NewStatusPoller(c, c.RESTMapper(), polling.Options{})
	rm := ssa.NewResourceManager(c, poller, ssa.Owner{Field: "kustomize-controller", Group: "kustomize.toolkit.fluxcd.io"})
	return &fluxApplier{rm: rm, name: name, ns: ns}
}

// reconcile applies objs and prunes the stale part of the inventory. It
// returns the apply change set and the pruned objects.
func (f *fluxApplier) reconcile(t *testing.T, objs []*unstructured.Unstructured) (*ssa.ChangeSet, *ssa.ChangeSet) {
	t.Helper()
	ctx := ctxFor(t)
	f.rm.SetOwnerLabels(objs, f.name, f.ns)
	opts := ssa.DefaultApplyOptions()
	opts.WaitTimeout = 60 * time.Second
	cs, err := f.rm.ApplyAllStaged(ctx, objs, opts)
	require.NoError(t, err, "ssa ApplyAllStaged")

	newInv := cs.ToObjMetadataSet()
	stale := f.inventory.Diff(newInv)
	var staleObjs []*unstructured.Unstructured
	for _, id := range stale {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(id.GroupKind.WithVersion(versionFor(id.GroupKind.Group)))
		u.SetNamespace(id.Namespace)
		u.SetName(id.Name)
		staleObjs = append(staleObjs, u)
	}
	del := ssa.NewChangeSet()
	if len(staleObjs) > 0 {
		delOpts := ssa.DefaultDeleteOptions()
		delOpts.Inclusions = f.rm.GetOwnerLabels(f.name, f.ns)
		del, err = f.rm.DeleteAll(ctx, staleObjs, delOpts)
		require.NoError(t, err, "ssa DeleteAll")
	}
	f.inventory = newInv
	return cs, del
}

func versionFor(group string) string {
	switch group {
	case "":
		return "v1"
	case "fedlearner.k8s.io":
		return "v1alpha1"
	}
	panic("unexpected group " + group)
}

func actions(cs *ssa.ChangeSet) map[string]ssa.Action {
	out := map[string]ssa.Action{}
	for _, e := range cs.Entries {
		out[e.ObjMetadata.GroupKind.Kind+"/"+e.ObjMetadata.Name] = e.Action
	}
	return out
}

// TestFluxPrune (scenario 3): a Flux-style apply with
// github.com/fluxcd/pkg/ssa and its inventory. Scaling Worker from 4 to 2
// and re-rendering makes exactly worker-2 and worker-3 stale; the prune
// deletes exactly those, and every other Service keeps its UID and
// ClusterIP. A third reconcile of the same render is a no-op.
func TestFluxPrune(t *testing.T) {
	ns := newNamespace(t, "s3-flux")
	dir := t.TempDir()
	master := replicaType{name: "Master", replicas: 1, ports: defaultPorts[:1]}
	worker := replicaType{name: "Worker", replicas: 4, pair: true, ports: defaultPorts}
	file := filepath.Join(dir, "flapp.yaml")
	writeFile(t, file, flappYAML("scale", ns, "Follower", master, worker))

	f := newFluxApplier(t, "flapps", "flux-system")
	cs, del := f.reconcile(t, render(t, dir))
	require.Empty(t, del.Entries)
	for id, a := range actions(cs) {
		require.Equal(t, ssa.CreatedAction, a, id)
	}
	before := liveServices(t, ns)
	require.Equal(t, expectedNames("scale", "Follower", master, worker), keys(before))
	for _, s := range before {
		require.Equal(t, "flapps", s.Labels["kustomize.toolkit.fluxcd.io/name"], "Flux owner label on %s", s.Name)
	}

	// Scale down and reconcile.
	worker.replicas = 2
	writeFile(t, file, flappYAML("scale", ns, "Follower", master, worker))
	cs, del = f.reconcile(t, render(t, dir))
	require.ElementsMatch(t, []string{"Service/scale-follower-worker-2", "Service/scale-follower-worker-3"}, keys(actions(del)))
	for id, a := range actions(del) {
		require.Equal(t, ssa.DeletedAction, a, id)
	}
	for id, a := range actions(cs) {
		if id == "FLApp/scale" {
			require.Equal(t, ssa.ConfiguredAction, a, id)
			continue
		}
		require.Equal(t, ssa.UnchangedAction, a, "%s must not change when another replica type scales", id)
	}
	after := liveServices(t, ns)
	require.Equal(t, expectedNames("scale", "Follower", master, worker), keys(after))
	for n, id := range identities(after) {
		require.Equal(t, identities(before)[n], id, "Service %s kept its UID and ClusterIP", n)
	}
	// The pruned Services are gone from the API, not just from the list.
	for _, n := range []string{"scale-follower-worker-2", "scale-follower-worker-3"} {
		_, err := env.kube.CoreV1().Services(ns).Get(ctxFor(t), n, metav1.GetOptions{})
		require.True(t, isNotFound(err), "Service %s must be deleted, got %v", n, err)
	}

	// Steady state: the same render again changes nothing and prunes nothing.
	cs, del = f.reconcile(t, render(t, dir))
	require.Empty(t, del.Entries)
	for id, a := range actions(cs) {
		require.Equal(t, ssa.UnchangedAction, a, id)
	}
	for n, s := range liveServices(t, ns) {
		require.Equal(t, after[n].ResourceVersion, s.ResourceVersion, "Service %s", n)
	}
}
