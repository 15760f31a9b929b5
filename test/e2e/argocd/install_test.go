package argocd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/utils/kube"
)

const (
	// kustomizeVersion is the kustomize every suite of the project uses.
	kustomizeVersion = "v5.8.1"
	// installURL is the one resource of examples/argocd/kustomization.yaml:
	// Argo CD v3.6.1's manifests/install.yaml, the same file the
	// github.com/argoproj/argo-cd/v3@v3.6.1 module holds.
	installURL  = "https://raw.githubusercontent.com/argoproj/argo-cd/v3.6.1/manifests/install.yaml"
	sidecarName = "flapp-services"
	// functionImage is the repository of the function image (the Makefile's
	// IMAGE), which the patch runs as the sidecar.
	functionImage = "ghcr.io/fedlearner/flapp-services:"
)

// installBuild is `kustomize build examples/argocd` on Argo CD's install.yaml.
type installBuild struct {
	yaml    []byte                       // the whole output
	objs    []*unstructured.Unstructured // its objects
	install []*unstructured.Unstructured // install.yaml's objects, unpatched
}

// kustomizeBinary returns <repo>/.cache/bin/kustomize, installing
// kustomizeVersion there with the project's Go when it is missing or another
// version (as the kustomize client suite does).
func kustomizeBinary(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(env.repo, ".cache", "bin")
	path := filepath.Join(dir, "kustomize")
	if out, err := exec.Command(path, "version").Output(); err == nil && strings.Contains(string(out), kustomizeVersion) {
		return path
	}
	start := time.Now()
	cmd := exec.Command("go", "install", "sigs.k8s.io/kustomize/kustomize/v5@"+kustomizeVersion)
	cmd.Dir = os.TempDir()
	cmd.Env = append(projectGoEnv(), "GOBIN="+dir, "GOTOOLCHAIN=local", "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "installing kustomize %s: %s", kustomizeVersion, out)
	logf("kustomize %s installed in %s", kustomizeVersion, time.Since(start).Round(time.Second))
	return path
}

// argoCDInstallYAML is manifests/install.yaml of the Argo CD module this
// test module requires (v3.6.1, the version the kustomization names).
func argoCDInstallYAML(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}} {{.Dir}}", "github.com/argoproj/argo-cd/v3").Output()
	require.NoError(t, err)
	version, dir, ok := strings.Cut(strings.TrimSpace(string(out)), " ")
	require.True(t, ok, "go list: %s", out)
	require.Equal(t, "v3.6.1", version)
	require.Contains(t, installURL, "/"+version+"/", "the kustomization names the Argo CD this suite runs")
	return filepath.Join(dir, "manifests", "install.yaml")
}

// buildInstall runs the real kustomize on a copy of examples/argocd's
// kustomization, patch and plugin.yaml, byte for byte, except for the
// install.yaml URL, which points at the module's copy of that file (no
// network here).
func buildInstall(t *testing.T) installBuild {
	t.Helper()
	kustomize := kustomizeBinary(t)
	dir := t.TempDir()
	for _, name := range []string{"kustomization.yaml", "argocd-repo-server-patch.yaml", "plugin.yaml"} {
		b, err := os.ReadFile(filepath.Join(env.repo, "examples", "argocd", name))
		require.NoError(t, err)
		if name == "kustomization.yaml" {
			require.Equal(t, 1, bytes.Count(b, []byte("- "+installURL+"\n")), "kustomization.yaml must list %s once", installURL)
			b = bytes.Replace(b, []byte("- "+installURL+"\n"), []byte("- install.yaml\n"), 1)
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
	}
	install, err := os.ReadFile(argoCDInstallYAML(t))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "install.yaml"), install, 0o644))

	var stdout, stderr bytes.Buffer
	cmd := exec.Command(kustomize, "build", dir)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "kustomize build: %s", stderr.String())
	objs, err := kube.SplitYAML(stdout.Bytes())
	require.NoError(t, err)
	orig, err := kube.SplitYAML(install)
	require.NoError(t, err)
	return installBuild{yaml: stdout.Bytes(), objs: objs, install: orig}
}

func findObject(t *testing.T, objs []*unstructured.Unstructured, kind, namePrefix string) *unstructured.Unstructured {
	t.Helper()
	var found *unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind && strings.HasPrefix(o.GetName(), namePrefix) {
			require.Nil(t, found, "two %s %s*", kind, namePrefix)
			found = o
		}
	}
	require.NotNil(t, found, "no %s %s*", kind, namePrefix)
	return found
}

func toTyped(t *testing.T, u *unstructured.Unstructured, into any) {
	t.Helper()
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, into, true))
}

// The patched repo-server, as kustomize builds it from Argo CD's own
// install.yaml: the function image as sidecar, cmp-server from the shared
// volume, plugin.yaml from the generated ConfigMap, everything else as
// Argo CD ships it.
func TestInstallKustomization(t *testing.T) {
	b := buildInstall(t)
	assert.Len(t, b.objs, len(b.install)+1, "install.yaml's objects plus the plugin's ConfigMap")
	for _, o := range b.objs {
		if o.GetKind() != "CustomResourceDefinition" && o.GetKind() != "ClusterRole" && o.GetKind() != "ClusterRoleBinding" {
			assert.Equal(t, "argocd", o.GetNamespace(), "%s %s", o.GetKind(), o.GetName())
		}
	}

	var cm corev1.ConfigMap
	toTyped(t, findObject(t, b.objs, "ConfigMap", "flapp-services-cmp-"), &cm)
	plugin, err := os.ReadFile(filepath.Join(env.repo, "examples", "argocd", "plugin.yaml"))
	require.NoError(t, err)
	assert.Equal(t, string(plugin), cm.Data["plugin.yaml"], "the ConfigMap holds plugin.yaml as shipped")

	var patched, stock appsv1.Deployment
	toTyped(t, findObject(t, b.objs, "Deployment", "argocd-repo-server"), &patched)
	toTyped(t, findObject(t, b.install, "Deployment", "argocd-repo-server"), &stock)
	pod := patched.Spec.Template.Spec
	require.Len(t, pod.Containers, len(stock.Spec.Template.Spec.Containers)+1)
	var sidecar *corev1.Container
	for i := range pod.Containers {
		c := pod.Containers[i]
		if c.Name == sidecarName {
			sidecar = &c
			continue
		}
		assert.Equal(t, stock.Spec.Template.Spec.Containers[0], c, "the repo-server container stays as Argo CD ships it")
	}
	require.NotNil(t, sidecar)
	assert.Equal(t, stock.Spec.Template.Spec.InitContainers, pod.InitContainers, "copyutil still fills var-files")
	assert.True(t, strings.HasPrefix(sidecar.Image, functionImage), "the sidecar is the function image, not %s", sidecar.Image)
	assert.Equal(t, []string{"/var/run/argocd/argocd-cmp-server"}, sidecar.Command)
	assert.Empty(t, sidecar.Args)
	sc := sidecar.SecurityContext
	require.NotNil(t, sc)
	require.NotNil(t, sc.RunAsUser)
	assert.Equal(t, int64(999), *sc.RunAsUser, "Argo CD's user")

	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = v
	}
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range sidecar.VolumeMounts {
		mounts[m.MountPath] = m
		require.Contains(t, volumes, m.Name, "mount %s", m.MountPath)
	}
	assert.Equal(t, "var-files", mounts["/var/run/argocd"].Name, "argocd-cmp-server from the repo-server's shared volume")
	assert.Equal(t, "plugins", mounts["/home/argocd/cmp-server/plugins"].Name, "the socket directory the repo-server reads")
	cfg := mounts["/home/argocd/cmp-server/config/plugin.yaml"]
	assert.Equal(t, "plugin.yaml", cfg.SubPath)
	require.NotNil(t, volumes[cfg.Name].ConfigMap)
	assert.Equal(t, cm.Name, volumes[cfg.Name].ConfigMap.Name, "the volume names the generated ConfigMap, hash included")
	tmp := mounts["/tmp"]
	require.NotNil(t, volumes[tmp.Name].EmptyDir, "a writable /tmp")
	assert.NotEqual(t, "tmp", tmp.Name, "its own /tmp, not the repo-server's")
}

// The whole patched install passes a server-side dry run on the real
// kube-apiserver (Argo CD's CRDs included), and the API server keeps the
// sidecar as patched. A patch that breaks the pod spec fails the same dry
// run: the check is real.
func TestInstallServerSideDryRun(t *testing.T) {
	b := buildInstall(t)
	needCluster(t)
	kubectl := func(stdin []byte, args ...string) (string, error) {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(filepath.Join(env.cluster.BinDir, "kubectl"), append([]string{"--kubeconfig", env.cluster.Kubeconfig}, args...)...)
		cmd.Stdin = bytes.NewReader(stdin)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if err != nil {
			err = fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, stderr.String())
		}
		return stdout.String(), err
	}
	if _, err := env.kube.CoreV1().Namespaces().Get(ctxFor(t), "argocd", metav1.GetOptions{}); err != nil {
		newNamespace(t, "argocd")
	}
	dryRun := []string{"apply", "--server-side", "--force-conflicts", "--field-manager=e2e", "--dry-run=server", "-o", "json", "-f", "-"}

	out, err := kubectl(b.yaml, dryRun...)
	require.NoError(t, err)
	var list struct {
		Items []map[string]any `json:"items"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &list))
	assert.Len(t, list.Items, len(b.objs), "every object passes")
	var deployment *unstructured.Unstructured
	for _, item := range list.Items {
		u := &unstructured.Unstructured{Object: item}
		if u.GetKind() == "Deployment" && u.GetName() == "argocd-repo-server" {
			deployment = u
		}
	}
	require.NotNil(t, deployment, "the dry run returns the repo-server")
	var d appsv1.Deployment
	toTyped(t, deployment, &d)
	var sidecar *corev1.Container
	for i := range d.Spec.Template.Spec.Containers {
		if d.Spec.Template.Spec.Containers[i].Name == sidecarName {
			sidecar = &d.Spec.Template.Spec.Containers[i]
		}
	}
	require.NotNil(t, sidecar, "the API server kept the sidecar")
	assert.Equal(t, int64(999), *sidecar.SecurityContext.RunAsUser)
	_, err = env.kube.AppsV1().Deployments("argocd").Get(ctxFor(t), "argocd-repo-server", metav1.GetOptions{})
	assert.Error(t, err, "a dry run creates nothing")

	// The repo-server alone, without the sidecar's /tmp volume, fails the
	// same dry run: the sidecar still mounts it.
	broken := findObject(t, b.objs, "Deployment", "argocd-repo-server").DeepCopy()
	vols, _, err := unstructured.NestedSlice(broken.Object, "spec", "template", "spec", "volumes")
	require.NoError(t, err)
	var kept []any
	for _, v := range vols {
		if v.(map[string]any)["name"] != "flapp-services-tmp" {
			kept = append(kept, v)
		}
	}
	require.Len(t, kept, len(vols)-1)
	require.NoError(t, unstructured.SetNestedSlice(broken.Object, kept, "spec", "template", "spec", "volumes"))
	brokenJSON, err := broken.MarshalJSON()
	require.NoError(t, err)
	_, err = kubectl(brokenJSON, dryRun...)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `Not found: "flapp-services-tmp"`)
}
