package harness

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Port is one port of the `tensorflow` container.
type Port struct {
	Name     string
	Port     int64
	Protocol string // "" = TCP
}

// ServiceSpec describes one Service the operator would create, written out
// by hand in each test as the independent oracle for the render.
type ServiceSpec struct {
	App, Namespace, Role, Type string
	Index                      int
	Ports                      []Port
}

// Name is <app>-<role>-<type>-<index>, lower-cased like the operator does.
func (s ServiceSpec) Name() string {
	return fmt.Sprintf("%s-%s-%s-%d", s.App, strings.ToLower(s.Role), strings.ToLower(s.Type), s.Index)
}

// Key is "<namespace>/<name>".
func (s ServiceSpec) Key() string { return s.Namespace + "/" + s.Name() }

// Selector is exactly the operator's four pod labels.
func (s ServiceSpec) Selector() map[string]any {
	return map[string]any{
		"app-name":         s.App,
		"role":             strings.ToLower(s.Role),
		"fl-replica-type":  strings.ToLower(s.Type),
		"fl-replica-index": fmt.Sprint(s.Index),
	}
}

// Replicas expands replica type typ of an FLApp into count ServiceSpecs.
func Replicas(app, ns, role, typ string, count int, ports ...Port) []ServiceSpec {
	out := make([]ServiceSpec, 0, count)
	for i := 0; i < count; i++ {
		out = append(out, ServiceSpec{App: app, Namespace: ns, Role: role, Type: typ, Index: i, Ports: ports})
	}
	return out
}

// CheckServices asserts that the Services among objs are exactly want (no
// more, no fewer), each with the contract's shape: name, namespace, the four
// selector labels and nothing else in the selector, the same four labels plus
// app.kubernetes.io/managed-by (plus extraLabels, e.g. from a kustomize
// overlay), one port per tensorflow container port with targetPort = the port
// name, ClusterIP by default, and no owner reference (FLApps from Git carry
// no uid).
func CheckServices(t testing.TB, objs []Object, want []ServiceSpec, extraLabels map[string]string) {
	t.Helper()
	got := OfKind(objs, "Service")
	wantKeys := map[string]ServiceSpec{}
	for _, w := range want {
		wantKeys[w.Key()] = w
	}
	require.Equal(t, Keys(wantKeys), Keys(got), "the set of Services (namespace/name)")
	for _, w := range want {
		svc := got[w.Key()]
		checkService(t, svc, w, extraLabels)
	}
}

func checkService(t testing.TB, svc Object, w ServiceSpec, extraLabels map[string]string) {
	t.Helper()
	meta, _ := svc["metadata"].(map[string]any)
	spec, _ := svc["spec"].(map[string]any)
	require.NotNil(t, meta, "%s: metadata", w.Key())
	require.NotNil(t, spec, "%s: spec", w.Key())
	assert.Equal(t, "v1", svc["apiVersion"], "%s: apiVersion", w.Key())

	labels := w.Selector()
	labels["app.kubernetes.io/managed-by"] = "flapp-services"
	for k, v := range extraLabels {
		labels[k] = v
	}
	assert.Equal(t, labels, meta["labels"], "%s: labels", w.Key())
	assert.Equal(t, w.Selector(), spec["selector"], "%s: selector must be exactly the operator's four pod labels", w.Key())
	assert.Equal(t, map[string]any{"fn.fedlearner.k8s.io/flapp": w.App}, meta["annotations"], "%s: annotations", w.Key())
	assert.Nil(t, meta["ownerReferences"], "%s: no owner reference without the FLApp's uid", w.Key())
	if w.Namespace == "" {
		assert.Nil(t, meta["namespace"], "%s: no namespace", w.Key())
	} else {
		assert.Equal(t, w.Namespace, meta["namespace"], "%s: namespace", w.Key())
	}
	assert.Nil(t, spec["type"], "%s: plain ClusterIP Service, no type", w.Key())
	assert.Nil(t, spec["clusterIP"], "%s: no clusterIP", w.Key())

	var ports []any
	for _, p := range w.Ports {
		m := map[string]any{"name": p.Name, "port": p.Port, "targetPort": p.Name}
		if p.Protocol != "" && p.Protocol != "TCP" {
			m["protocol"] = p.Protocol
		}
		ports = append(ports, m)
	}
	assert.Equal(t, normalizeNumbers(ports), normalizeNumbers(spec["ports"]), "%s: ports", w.Key())
}

// normalizeNumbers turns every number into int64 so YAML- and JSON-decoded
// data compare equal.
func normalizeNumbers(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = normalizeNumbers(x[i])
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalizeNumbers(e)
		}
		return out
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case float64:
		if x == float64(int64(x)) {
			return int64(x)
		}
		return x
	default:
		return v
	}
}
