package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// goldenCases returns the success golden cases of the main module:
// testdata/<case>/ with an expected.yaml and no errors.txt.
func goldenCases(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(env.repo, "testdata", "*", "expected.yaml"))
	require.NoError(t, err)
	var out []string
	for _, exp := range dirs {
		dir := filepath.Dir(exp)
		if _, err := os.Stat(filepath.Join(dir, "errors.txt")); err == nil {
			continue
		}
		out = append(out, dir)
	}
	return out
}

// stripKRMMetadata removes the annotations only KRM tools understand, and
// the server-owned fields a live export carries.
func stripKRMMetadata(u *unstructured.Unstructured) {
	if a := u.GetAnnotations(); a != nil {
		for k := range a {
			if strings.HasPrefix(k, "config.kubernetes.io/") || strings.HasPrefix(k, "internal.config.kubernetes.io/") {
				delete(a, k)
			}
		}
		if len(a) == 0 {
			a = nil
		}
		u.SetAnnotations(a)
	}
	for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "generation", "managedFields", "selfLink"} {
		unstructured.RemoveNestedField(u.Object, "metadata", f)
	}
	if !isService(u) {
		unstructured.RemoveNestedField(u.Object, "status")
	}
}

// TestGoldenOutputIsValid (scenario 1) server-side applies, as a dry run,
// every generated Service and every FLApp of every success golden case: the
// API server must accept all of them (Service validation, the FLApp CRD's
// structural schema). Each case gets its own namespaces so cases never
// collide; namespaces missing in a case map to a case namespace.
func TestGoldenOutputIsValid(t *testing.T) {
	cases := goldenCases(t)
	if len(cases) == 0 {
		t.Fatalf("no success golden cases under %s/testdata (need <case>/expected.yaml without errors.txt)", env.repo)
	}
	total := 0
	for i, dir := range cases {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, "expected.yaml"))
			require.NoError(t, err)
			lists := decodeObjects(t, data)
			require.Len(t, lists, 1, "expected.yaml holds one ResourceList")
			items, found, err := unstructured.NestedSlice(lists[0].Object, "items")
			require.NoError(t, err)
			if !found || len(items) == 0 {
				t.Skip("no items in expected.yaml")
			}
			// One namespace per original namespace of the case.
			nsMap := map[string]string{}
			nsFor := func(orig string) string {
				if ns, ok := nsMap[orig]; ok {
					return ns
				}
				ns := newNamespace(t, fmt.Sprintf("golden-%02d-%s", i, orig)) // "golden-NN" for ""
				nsMap[orig] = ns
				return ns
			}
			var objs []*unstructured.Unstructured
			for _, it := range items {
				m, ok := it.(map[string]any)
				require.True(t, ok, "item is an object")
				u := &unstructured.Unstructured{Object: m}
				if !isService(u) && !isFLApp(u) {
					continue
				}
				stripKRMMetadata(u)
				u.SetNamespace(nsFor(u.GetNamespace()))
				objs = append(objs, u)
			}
			svcs := filter(objs, isService)
			if len(svcs) == 0 && len(filter(objs, isFLApp)) == 0 {
				t.Skip("no Services or FLApps in this case")
			}
			// FLApps first (as a GitOps engine would), then Services.
			applySSA(t, filter(objs, isFLApp), applyOpts{dryRun: true})
			applySSA(t, svcs, applyOpts{dryRun: true})
			generated := filter(svcs, isGenerated)
			total += len(generated)
			t.Logf("%d FLApps and %d Services (%d generated) accepted", len(objs)-len(svcs), len(svcs), len(generated))
		})
	}
	require.NotZero(t, total, "the golden cases generate no Service at all")
	t.Logf("%d cases, %d generated Services accepted by kube-apiserver", len(cases), total)
}
