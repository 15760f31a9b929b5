package harness

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Object is one Kubernetes object as generic data.
type Object = map[string]any

// ParseObjects decodes a multi-document YAML (or JSON) stream the way
// Kubernetes clients do and requires every document to be a Kubernetes
// object (apiVersion, kind and metadata.name set). Empty documents are
// skipped.
func ParseObjects(data []byte) ([]Object, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []Object
	for i := 0; ; i++ {
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if obj == nil {
			continue
		}
		u := unstructured.Unstructured{Object: obj}
		if u.GetAPIVersion() == "" || u.GetKind() == "" || u.GetName() == "" {
			return nil, fmt.Errorf("document %d is not a Kubernetes object (apiVersion=%q kind=%q name=%q)",
				i, u.GetAPIVersion(), u.GetKind(), u.GetName())
		}
		out = append(out, obj)
	}
}

// MustParseObjects is ParseObjects failing the test on error.
func MustParseObjects(t testing.TB, data []byte) []Object {
	t.Helper()
	objs, err := ParseObjects(data)
	if err != nil {
		t.Fatalf("output is not a stream of Kubernetes objects: %v\n%s", err, data)
	}
	return objs
}

// Key is "<kind> <namespace>/<name>".
func Key(o Object) string {
	u := unstructured.Unstructured{Object: o}
	return fmt.Sprintf("%s %s/%s", u.GetKind(), u.GetNamespace(), u.GetName())
}

// OfKind returns the objects of the given kind, keyed by "<namespace>/<name>".
func OfKind(objs []Object, kind string) map[string]Object {
	out := map[string]Object{}
	for _, o := range objs {
		u := unstructured.Unstructured{Object: o}
		if u.GetKind() == kind {
			out[u.GetNamespace()+"/"+u.GetName()] = o
		}
	}
	return out
}

// Keys returns the sorted keys of m.
func Keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// LeakedAnnotations lists annotations of objs that belong to the KRM
// function machinery (config.kubernetes.io/*, internal.config.kubernetes.io/*,
// config.k8s.io/*, kustomize's internal.* ones) and must never reach a
// cluster.
func LeakedAnnotations(objs []Object) []string {
	var out []string
	for _, o := range objs {
		u := unstructured.Unstructured{Object: o}
		for k := range u.GetAnnotations() {
			if strings.HasPrefix(k, "config.kubernetes.io/") ||
				strings.HasPrefix(k, "internal.") ||
				strings.Contains(k, ".internal.") ||
				strings.HasPrefix(k, "config.k8s.io/") ||
				strings.HasPrefix(k, "kustomize.config.k8s.io/") {
				out = append(out, Key(o)+": "+k)
			}
		}
	}
	sort.Strings(out)
	return out
}

// BrokenFLApp is an FLApp named no-tf whose Worker has no "tensorflow"
// container: the function must refuse it. namespace may be empty.
func BrokenFLApp(namespace string) string {
	ns := ""
	if namespace != "" {
		ns = "\n  namespace: " + namespace
	}
	return `apiVersion: fedlearner.k8s.io/v1alpha1
kind: FLApp
metadata:
  name: no-tf` + ns + `
spec:
  role: Leader
  peerSpecs:
    Follower: {peerURL: "fedlearner-operator.follower.svc:8100"}
  flReplicaSpecs:
    Worker:
      replicas: 1
      template:
        spec:
          containers:
            - name: main
              image: busybox
`
}
