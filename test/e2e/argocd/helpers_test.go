package argocd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/utils/kube"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/reposerver/apiclient"
	"github.com/argoproj/argo-cd/v3/reposerver/repository"
	"github.com/argoproj/argo-cd/v3/util/git"
)

const (
	repoURL  = "https://git.example.com/fl/flapps.git"
	revision = "3f786850e387550fdab836ed7e6dc881de23001b"
	// Argo CD v3's defaults: the tracking annotation, with the legacy label key.
	appLabelKey = "app.kubernetes.io/instance"
)

func ctxFor(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// repoDir writes files (path relative to the repository root -> content)
// into a fresh directory standing for the repo-server's Git checkout.
func repoDir(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	return root
}

// copyDir copies the regular files below src into dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	}))
}

// application is the part of an Argo CD Application the repo-server sees.
type application struct {
	name      string
	namespace string                            // destination namespace
	path      string                            // spec.source.path
	plugin    *v1alpha1.ApplicationSourcePlugin // nil: the Application names no plugin
	tracking  bool                              // add Argo CD's tracking annotation, as for a sync
}

// generate asks Argo CD's own repo-server code for the Application's
// manifests: GenerateManifests finds the plugin's socket through
// ARGOCD_PLUGINSOCKFILEPATH, runs discover (MatchRepository) and generate in
// argocd-cmp-server, and returns the objects as JSON strings.
func generate(t *testing.T, root string, app application) (*apiclient.ManifestResponse, error) {
	t.Helper()
	return generateCtx(ctxFor(t), root, app)
}

// generateCtx is generate with the request's context (the repo-server's
// gRPC deadline) and GenerateManifests' options (the repo-server's settings).
func generateCtx(ctx context.Context, root string, app application, opts ...repository.GenerateManifestOpt) (*apiclient.ManifestResponse, error) {
	src := &v1alpha1.ApplicationSource{RepoURL: repoURL, Path: app.path, TargetRevision: "main", Plugin: app.plugin}
	q := &apiclient.ManifestRequest{
		Repo:              &v1alpha1.Repository{Repo: repoURL},
		Revision:          revision,
		AppName:           app.name,
		Namespace:         app.namespace,
		ProjectName:       "default",
		ApplicationSource: src,
		KubeVersion:       "1.37.2",
	}
	if app.tracking {
		q.AppLabelKey = appLabelKey
		q.TrackingMethod = string(v1alpha1.TrackingMethodAnnotation)
	}
	return repository.GenerateManifests(ctx, filepath.Join(root, filepath.FromSlash(app.path)), root, revision, q,
		false, &git.NoopCredsStore{}, resource.MustParse("0"), nil, opts...)
}

// namedPlugin is spec.source.plugin of an Application naming the plugin.
func namedPlugin(env map[string]string, params map[string]string) *v1alpha1.ApplicationSourcePlugin {
	p := &v1alpha1.ApplicationSourcePlugin{Name: pluginName}
	for k, v := range env {
		p.Env = append(p.Env, &v1alpha1.EnvEntry{Name: k, Value: v})
	}
	for k, v := range params {
		p.Parameters = append(p.Parameters, v1alpha1.ApplicationSourcePluginParameter{Name: k, String_: &v})
	}
	return p
}

// objectsOf decodes GenerateManifests' JSON strings.
func objectsOf(t *testing.T, resp *apiclient.ManifestResponse) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	for _, m := range resp.Manifests {
		u := &unstructured.Unstructured{}
		require.NoError(t, u.UnmarshalJSON([]byte(m)))
		objs = append(objs, u)
	}
	return objs
}

// render runs `flapp-services render ARGS...` and returns its objects as
// JSON-normalised values; it fails the test when the render fails.
func render(t *testing.T, dir string, args ...string) []any {
	t.Helper()
	cmd := exec.Command(env.flapp, append([]string{"render"}, args...)...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "render: %s", stderr.String())
	objs, err := kube.SplitYAML(stdout.Bytes())
	require.NoError(t, err)
	var out []any
	for _, o := range objs {
		out = append(out, normalise(t, o.Object))
	}
	require.NotEmpty(t, out)
	return out
}

// manifestValues is GenerateManifests' answer in the same form as render's.
func manifestValues(t *testing.T, resp *apiclient.ManifestResponse) []any {
	t.Helper()
	var out []any
	for _, m := range resp.Manifests {
		var v any
		require.NoError(t, json.Unmarshal([]byte(m), &v))
		out = append(out, v)
	}
	return out
}

func normalise(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var out any
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

func isService(u *unstructured.Unstructured) bool {
	return u.GetKind() == "Service" && u.GetAPIVersion() == "v1"
}

func serviceNames(objs []*unstructured.Unstructured) []string {
	var names []string
	for _, o := range objs {
		if isService(o) {
			names = append(names, o.GetName())
		}
	}
	return names
}

// flapp is a leader FLApp with a master and `workers` paired workers, as a
// generic value (so each test can write it in the form it needs).
func flapp(name, namespace string, workers int) map[string]any {
	port := func(n string, p int) map[string]any { return map[string]any{"name": n, "containerPort": p} }
	tmpl := func(ports ...any) map[string]any {
		return map[string]any{"spec": map[string]any{"restartPolicy": "Never", "containers": []any{
			map[string]any{"name": "tensorflow", "image": "fedlearner/fedlearner:v2.3.0", "ports": ports}}}}
	}
	meta := map[string]any{"name": name}
	if namespace != "" {
		meta["namespace"] = namespace
	}
	return map[string]any{
		"apiVersion": "fedlearner.k8s.io/v1alpha1",
		"kind":       "FLApp",
		"metadata":   meta,
		"spec": map[string]any{
			"role":      "Leader",
			"peerSpecs": map[string]any{"Follower": map[string]any{"peerURL": "fl-follower.example.com:443"}},
			"flReplicaSpecs": map[string]any{
				"Master": map[string]any{"replicas": 1, "template": tmpl(port("flapp-port", 50051))},
				"Worker": map[string]any{"pair": true, "replicas": workers,
					"template": tmpl(port("flapp-port", 50051), port("tf-port", 50052))},
			},
		},
	}
}

func toYAML(t *testing.T, v any) string {
	t.Helper()
	b, err := yaml.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func toJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	return string(b) + "\n"
}

// configMap is a plain object that is not an FLApp.
func configMap(name string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  k: v\n", name)
}

// replaceLine replaces the one line of s equal to old (after trimming) by
// repl, keeping its indentation.
func replaceLine(t *testing.T, s, old, repl string) string {
	t.Helper()
	lines := strings.Split(s, "\n")
	n := 0
	for i, l := range lines {
		if strings.TrimSpace(l) == old {
			lines[i] = l[:len(l)-len(strings.TrimLeft(l, " "))] + repl
			n++
		}
	}
	require.Equal(t, 1, n, "line %q in\n%s", old, s)
	return strings.Join(lines, "\n")
}

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

func newNamespace(t *testing.T, name string) string {
	t.Helper()
	_, err := env.kube.CoreV1().Namespaces().Create(ctxFor(t),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = env.kube.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return name
}

func waitUntil(t *testing.T, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s (last error: %v)", timeout, what, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func writeFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o644)
}

// helmBinary is $HELM_BIN, or helm v3 from hack/build-helm.sh.
func helmBinary(t *testing.T) string {
	t.Helper()
	if helm := os.Getenv("HELM_BIN"); helm != "" {
		return helm
	}
	dir, err := script("build-helm.sh", "HELM_BIN_DIR")
	require.NoError(t, err, "building helm")
	return filepath.Join(dir, "helm3")
}
