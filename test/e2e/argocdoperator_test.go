package e2e

import (
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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

const (
	// The Argo CD Operator whose CRD the ArgoCD resource is checked against:
	// the Go module of its release, from the module proxy, held to its
	// go.sum hash so that the CRD is that release's.
	operatorModule  = "github.com/argoproj-labs/argocd-operator"
	operatorVersion = "v0.18.0"
	operatorSum     = "h1:ukU1K4DnyAyPbD9UHCZQRziTy/ZjazAJ5pzfcQrA4/o="
	operatorCRD     = "config/crd/bases/argoproj.io_argocds.yaml"
	argoCDResource  = "examples/argocd/operator/argocd.yaml"
)

var argoCDGVR = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1beta1", Resource: "argocds"}

// operatorModuleDir downloads the operator's module (go mod download, from a
// folder outside any module) and returns where the module cache holds it.
func operatorModuleDir(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", operatorModule+"@"+operatorVersion)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
	out, err := cmd.Output()
	var info struct{ Dir, Sum, Error string }
	require.NoError(t, json.Unmarshal(out, &info), "go mod download %s@%s: %v\n%s", operatorModule, operatorVersion, err, out)
	require.Empty(t, info.Error)
	require.Equal(t, operatorSum, info.Sum, "the module is the release this test pins")
	return info.Dir
}

// containsAll reports the first path where got lacks a value of want, or
// holds another one: what a server that prunes or rewrites a field returns.
func containsAll(want, got any, path string) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return path
		}
		for k, v := range w {
			if p := containsAll(v, g[k], path+"."+k); p != "" {
				return p
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return path
		}
		for i := range w {
			if p := containsAll(w[i], g[i], fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	default:
		if fmt.Sprint(want) != fmt.Sprint(got) {
			return path
		}
	}
	return ""
}

// applyStrict server-side applies u with strict field validation: an
// unknown or duplicate field is an error, not a warning.
func applyStrict(t *testing.T, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	t.Helper()
	data, err := json.Marshal(u.Object)
	require.NoError(t, err)
	return env.dyn.Resource(argoCDGVR).Namespace(u.GetNamespace()).Patch(ctxFor(t), u.GetName(), types.ApplyPatchType, data,
		metav1.PatchOptions{FieldManager: "e2e", FieldValidation: metav1.FieldValidationStrict})
}

// TestArgoCDOperatorResource: examples/argocd/operator/argocd.yaml is an
// ArgoCD resource the Argo CD Operator v0.18.0 accepts. Its CRD, read from
// the operator's Go module of that release, is applied to the real
// kube-apiserver; the resource is then server-side applied with strict field
// validation, and the stored object holds every field and value of the file
// (nothing unknown, nothing pruned). The same apply of a copy with one
// misspelt field fails, and so does one where a field has the wrong type,
// so the check is real. Its OpenShift variant (runAsUser and runAsGroup
// deleted, as the file says) is accepted too. No operator runs: what it
// makes of the resource is read in its code (README of examples/argocd).
func TestArgoCDOperatorResource(t *testing.T) {
	crd := filepath.Join(operatorModuleDir(t), operatorCRD)
	mustKubectl(t, nil, "apply", "--server-side", "--field-manager=e2e", "-f", crd)
	t.Cleanup(func() { _, _, _ = kubectl(t, nil, "delete", "--wait=false", "crd", "argocds.argoproj.io") })
	// (kubectl wait fails at once while the CRD has no conditions yet.)
	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	waitUntil(t, time.Minute, "the ArgoCD CRD is Established", func() (bool, error) {
		u, err := env.dyn.Resource(crdGVR).Get(ctxFor(t), "argocds.argoproj.io", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
	env.mapper.Reset()

	data, err := os.ReadFile(filepath.Join(env.repo, argoCDResource))
	require.NoError(t, err)
	objs := decodeObjects(t, data)
	require.Len(t, objs, 1)
	want := objs[0]
	require.Equal(t, "argoproj.io/v1beta1", want.GetAPIVersion())
	require.Equal(t, "ArgoCD", want.GetKind())
	ns := newNamespace(t, "argocd-operator")

	apply := func(t *testing.T, u *unstructured.Unstructured) {
		t.Helper()
		u = u.DeepCopy()
		u.SetNamespace(ns)
		got, err := applyStrict(t, u)
		require.NoError(t, err, "strict server-side apply of %s", argoCDResource)
		spec, _, _ := unstructured.NestedMap(u.Object, "spec")
		gotSpec, _, _ := unstructured.NestedMap(got.Object, "spec")
		assert.Empty(t, containsAll(spec, gotSpec, "spec"), "the stored ArgoCD lacks or changed this field")
	}
	t.Run("as shipped", func(t *testing.T) { apply(t, want) })
	t.Run("OpenShift: no fixed UID", func(t *testing.T) {
		u := want.DeepCopy()
		sidecars, _, _ := unstructured.NestedSlice(u.Object, "spec", "repo", "sidecarContainers")
		require.Len(t, sidecars, 1)
		sc := sidecars[0].(map[string]any)["securityContext"].(map[string]any)
		require.Contains(t, sc, "runAsUser")
		delete(sc, "runAsUser")
		delete(sc, "runAsGroup")
		require.NoError(t, unstructured.SetNestedSlice(u.Object, sidecars, "spec", "repo", "sidecarContainers"))
		u.SetName("openshift")
		apply(t, u)
	})

	for _, bad := range []struct{ name, old, new, err string }{
		{"a misspelt field", "\n    sidecarContainers:\n", "\n    sidecarContainer:\n", "spec.repo.sidecarContainer"},
		{"a field of the wrong type", "\n    - group: fedlearner.k8s.io\n", "\n    - group: [fedlearner.k8s.io]\n", "spec.resourceHealthChecks[0].group"},
	} {
		t.Run(bad.name, func(t *testing.T) {
			require.Equal(t, 1, strings.Count(string(data), bad.old))
			objs := decodeObjects(t, []byte(strings.Replace(string(data), bad.old, bad.new, 1)))
			u := objs[0]
			u.SetNamespace(ns)
			u.SetName("bad")
			_, err := applyStrict(t, u)
			require.Error(t, err, "the API server must refuse %s", bad.name)
			assert.Contains(t, err.Error(), bad.err)
		})
	}

	// The health check is health.lua, under the key the operator writes it
	// to in argocd-cm (controllers/argocd/configmap.go, getResourceHealthChecks:
	// "resource.customizations.health." + group + "_" + kind), which is the
	// key of the argocd-cm patch of the kustomize install.
	checks, _, _ := unstructured.NestedSlice(want.Object, "spec", "resourceHealthChecks")
	require.Len(t, checks, 1)
	check := checks[0].(map[string]any)
	script, err := os.ReadFile(filepath.Join(env.repo, "examples", "argocd", "health", "fedlearner.k8s.io", "FLApp", "health.lua"))
	require.NoError(t, err)
	assert.Equal(t, string(script), check["check"], "the check is health.lua byte for byte")
	var patch struct {
		Data map[string]string `json:"data"`
	}
	b, err := os.ReadFile(filepath.Join(env.repo, "examples", "argocd", "argocd-cm-patch.yaml"))
	require.NoError(t, err)
	require.NoError(t, yaml.UnmarshalStrict(b, &patch))
	assert.Contains(t, patch.Data, fmt.Sprintf("resource.customizations.health.%s_%s", check["group"], check["kind"]))
}
