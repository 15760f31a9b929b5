package argocd

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/cache"
	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/health"
	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/sync"
	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/sync/hook"
	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/sync/ignore"
	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/sync/resource"
	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/utils/kube"
	"github.com/argoproj/argo-cd/v3/common"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	argodiff "github.com/argoproj/argo-cd/v3/util/argo/diff"
	"github.com/argoproj/argo-cd/v3/util/argo/normalizers"
	"github.com/argoproj/argo-cd/v3/util/lua"
	"github.com/argoproj/argo-cd/v3/util/settings"
)

// appStatus is what Argo CD's application controller shows for an
// Application between syncs: its sync status and health, and each
// resource's ("Kind/name").
type appStatus struct {
	Sync      v1alpha1.SyncStatusCode
	Health    health.HealthStatusCode
	Resources map[string]resourceStatus
}

type resourceStatus struct {
	Sync   v1alpha1.SyncStatusCode // empty: not counted (hooks, ignored)
	Health *health.HealthStatus    // nil: Argo CD has no health for it
}

var argoCDSettings struct {
	gosync.Once
	overrides map[string]v1alpha1.ResourceOverride
	err       error
}

// argoCDResourceOverrides installs the health check as the README says (the
// argocd-cm of Argo CD v3.6.1's manifests/install.yaml, patched with
// `kubectl -n argocd patch configmap argocd-cm --patch-file
// examples/argocd/argocd-cm-patch.yaml`) and reads it back with Argo CD's own
// settings code, which is where the application controller gets its health
// overrides and diff settings from.
func argoCDResourceOverrides(t *testing.T) map[string]v1alpha1.ResourceOverride {
	t.Helper()
	needCluster(t)
	argoCDSettings.Do(func() {
		argoCDSettings.overrides, argoCDSettings.err = installArgoCDConfigMap()
	})
	require.NoError(t, argoCDSettings.err)
	return argoCDSettings.overrides
}

func installArgoCDConfigMap() (map[string]v1alpha1.ResourceOverride, error) {
	ctx, cancel := context.WithTimeout(env.ctx, 2*time.Minute)
	defer cancel()
	// Other tests of the suite may use Argo CD's namespace too: whoever
	// comes first creates it and argocd-cm, the patch applies either way.
	const ns = "argocd"
	if _, err := env.kube.CoreV1().Namespaces().Create(ctx,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	cm, err := argoCDInstallObject("ConfigMap", "argocd-cm")
	if err != nil {
		return nil, err
	}
	cm.SetNamespace(ns)
	if _, err := env.dyn.Resource(corev1.SchemeGroupVersion.WithResource("configmaps")).Namespace(ns).
		Create(ctx, cm, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	kubectl := exec.CommandContext(ctx, filepath.Join(env.cluster.BinDir, "kubectl"), "--kubeconfig", env.cluster.Kubeconfig,
		"-n", ns, "patch", "configmap", "argocd-cm", "--patch-file", "examples/argocd/argocd-cm-patch.yaml")
	kubectl.Dir = env.repo
	if out, err := kubectl.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("kubectl patch: %w\n%s", err, out)
	}
	return settings.NewSettingsManager(env.ctx, env.kube, ns).GetResourceOverrides()
}

// argoCDInstallObject is one object of manifests/install.yaml of the Argo CD
// module this suite builds against.
func argoCDInstallObject(kind, name string) (*unstructured.Unstructured, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/argoproj/argo-cd/v3").Output()
	if err != nil {
		return nil, fmt.Errorf("go list -m github.com/argoproj/argo-cd/v3: %w", err)
	}
	data, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "manifests", "install.yaml"))
	if err != nil {
		return nil, err
	}
	objs, err := kube.SplitYAML(data)
	if err != nil {
		return nil, err
	}
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o, nil
		}
	}
	return nil, fmt.Errorf("no %s %s in Argo CD's manifests/install.yaml", kind, name)
}

// isManaged is how this Application's resources are found in the cluster
// cache (Argo CD's tracking annotation, see newArgoSync).
func (s *argoSync) isManaged(r *cache.Resource) bool {
	name, _ := r.Info.(string)
	return name == s.app.name
}

// targets generates the Application's manifests through argocd-cmp-server;
// edit, if not nil, changes them before use.
func (s *argoSync) targets(t *testing.T, root string, edit func(*unstructured.Unstructured)) []*unstructured.Unstructured {
	t.Helper()
	resp, err := generate(t, root, s.app)
	require.NoError(t, err)
	objs := objectsOf(t, resp)
	if edit != nil {
		for _, o := range objs {
			edit(o)
		}
	}
	return objs
}

// syncTargets is one sync with prune on, as the application controller
// starts it (by hand, or automatically with self-heal when the Application
// is OutOfSync): gitops-engine's Sync of the given manifests, with the
// health overrides (controller/sync.go passes them too). It returns, per
// resource, "<result> (<operation phase>): <message>".
func (s *argoSync) syncTargets(t *testing.T, targets []*unstructured.Unstructured, overrides map[string]v1alpha1.ResourceOverride) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	results, err := s.engine.Sync(ctx, targets, s.isManaged, revision, s.app.namespace,
		sync.WithPrune(true), sync.WithHealthOverride(lua.ResourceHealthOverrides(overrides)))
	require.NoError(t, err)
	out := map[string]string{}
	for _, r := range results {
		out[r.ResourceKey.Kind+"/"+r.ResourceKey.Name] = fmt.Sprintf("%s (%s): %s", r.Status, r.HookPhase, r.Message)
	}
	return out
}

// live is the Application's live objects in Argo CD's cluster cache.
func (s *argoSync) live(t *testing.T, targets []*unstructured.Unstructured) map[kube.ResourceKey]*unstructured.Unstructured {
	t.Helper()
	live, err := s.cache.GetManagedLiveObjs(targets, s.isManaged)
	require.NoError(t, err)
	return live
}

// waitForCache waits until Argo CD's cluster cache (fed by watches) shows
// what the test did in the API server.
func (s *argoSync) waitForCache(t *testing.T, targets []*unstructured.Unstructured, what string, ok func(live map[string]*unstructured.Unstructured) bool) {
	t.Helper()
	waitUntil(t, 60*time.Second, "Argo CD's cluster cache to show "+what, func() (bool, error) {
		byName := map[string]*unstructured.Unstructured{}
		for k, o := range s.live(t, targets) {
			byName[k.Kind+"/"+k.Name] = o
		}
		return ok(byName), nil
	})
}

// status compares the manifests with the live state the way Argo CD v3.6.1's
// application controller does (controller/state.go CompareAppState for the
// sync status, controller/health.go setApplicationHealth for the health): the
// live objects from the cluster cache, gitops-engine's sync.Reconcile to pair
// them, Argo CD's diff (util/argo/diff.StateDiffs with the resource overrides
// from argocd-cm), and each live object's health from gitops-engine's
// health.GetResourceHealth with the Lua overrides. The rules around those
// calls (which resources count, Missing for an absent one, the worst health
// wins) are restated from those two unexported functions; the Application is
// in the default project, which permits everything.
func (s *argoSync) status(t *testing.T, targets []*unstructured.Unstructured, overrides map[string]v1alpha1.ResourceOverride) appStatus {
	t.Helper()
	rec := sync.Reconcile(targets, s.live(t, targets), s.app.namespace, s.cache)
	cfg, err := argodiff.NewDiffConfigBuilder().
		WithDiffSettings(nil, overrides, false, normalizers.IgnoreNormalizerOpts{JQExecutionTimeout: time.Second}).
		WithTracking(appLabelKey, string(v1alpha1.TrackingMethodAnnotation)).
		WithNoCache().
		Build()
	require.NoError(t, err)
	diffs, err := argodiff.StateDiffs(ctxFor(t), rec.Live, rec.Target, cfg)
	require.NoError(t, err)
	require.Len(t, diffs.Diffs, len(rec.Target))

	out := appStatus{Sync: v1alpha1.SyncStatusCodeSynced, Health: health.HealthStatusHealthy, Resources: map[string]resourceStatus{}}
	var hasResources, hasLive bool
	for i, target := range rec.Target {
		live := rec.Live[i]
		obj := live
		if obj == nil {
			obj = target
		}
		var rs resourceStatus
		switch {
		case hook.IsHook(obj) || ignore.Ignore(obj) || (target != nil && hook.Skip(target)):
		case diffs.Diffs[i].Modified || target == nil || live == nil:
			rs.Sync = v1alpha1.SyncStatusCodeOutOfSync
			needsPruning := target == nil && live != nil
			if !needsPruning || !resource.HasAnnotationOption(obj, common.AnnotationCompareOptions, "IgnoreExtraneous") {
				out.Sync = v1alpha1.SyncStatusCodeOutOfSync
			}
		default:
			rs.Sync = v1alpha1.SyncStatusCodeSynced
		}

		out.Resources[obj.GetKind()+"/"+obj.GetName()] = rs
		if target != nil && hook.Skip(target) || live != nil && (hook.IsHook(live) || ignore.Ignore(live)) {
			continue
		}
		hasResources = true
		if live != nil {
			hasLive = true
			if live.GetAnnotations()[common.AnnotationIgnoreHealthCheck] == "true" {
				continue
			}
		}
		if live == nil {
			rs.Health = &health.HealthStatus{Status: health.HealthStatusMissing}
		} else {
			rs.Health, err = health.GetResourceHealth(live, lua.ResourceHealthOverrides(overrides))
			require.NoError(t, err)
		}
		out.Resources[obj.GetKind()+"/"+obj.GetName()] = rs
		if rs.Health == nil || live == nil {
			// A missing resource leaves the Application's health alone:
			// its OutOfSync status already says so.
			continue
		}
		if health.IsWorse(out.Health, rs.Health.Status) {
			out.Health = rs.Health.Status
		}
	}
	if hasResources && !hasLive && health.IsWorse(out.Health, health.HealthStatusMissing) {
		out.Health = health.HealthStatusMissing
	}
	return out
}
