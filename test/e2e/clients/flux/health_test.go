package flux

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"
)

const (
	// cheatsheet is the entry for Flux's CEL health-check cheatsheet.
	cheatsheet = "examples/flux/cel-healthchecks.md"
	// healthCases is the Argo CD health check's folder: its testdata are the
	// FLApps both checks are proven on.
	healthCases = "examples/argocd/health/fedlearner.k8s.io/FLApp"
)

// healthTimeout replaces the shipped timeout (2m2s) in TestFLAppHealthCheck's
// Kustomization: a state that is not ready is reported when the health check
// times out, and the test walks through five of them. 30s is the least the
// controller takes (a shorter timeout counts as 30s); the 2s off a multiple
// of its 5s poll are the shipped file's reason.
const healthTimeout = "32s"

// requireTimedOut checks the verdict of a health check that ran into its
// timeout because the FLApp was neither ready nor failed (a failed one ends
// the check at once, a ready one passes it): the message names the FLApp and
// kstatus' verdict on it. When a health poll falls due at the deadline (a
// timeout that is a multiple of the 5s poll, or a late poll on a loaded
// machine) the controller may report instead that request's error ("client
// rate limiter Wait returned an error: rate: Wait(n=1) would exceed context
// deadline"), which still means the check ran into its timeout.
func requireTimedOut(t *testing.T, what string, ready metav1.Condition, flapp, verdict string) {
	t.Helper()
	assert.Equal(t, metav1.ConditionFalse, ready.Status, "%s: not ready", what)
	assert.Equal(t, "HealthCheckFailed", ready.Reason, what)
	if strings.Contains(ready.Message, "would exceed context deadline") {
		t.Logf("%s: the controller reported the deadline of its last request, not the FLApp's verdict", what)
		return
	}
	assert.Contains(t, ready.Message, ": timeout waiting for: ["+flapp+" status: '"+verdict+"'", what)
}

// cheatsheetExprs returns the healthCheckExprs of the cheatsheet's FLApp
// entry: the first yaml block after its "### `FLApp`" heading.
func cheatsheetExprs(t *testing.T) []any {
	t.Helper()
	md, err := os.ReadFile(filepath.Join(env.repo, cheatsheet))
	require.NoError(t, err)
	_, entry, ok := strings.Cut(string(md), "\n### `FLApp`\n")
	require.True(t, ok, "%s has no ### `FLApp` entry", cheatsheet)
	_, block, ok := strings.Cut(entry, "\n```yaml\n")
	require.True(t, ok, "the FLApp entry has no yaml block")
	block, _, ok = strings.Cut(block, "\n```\n")
	require.True(t, ok, "the FLApp entry's yaml block is not closed")
	var doc struct {
		HealthCheckExprs []any `json:"healthCheckExprs"`
	}
	require.NoError(t, yaml.UnmarshalStrict([]byte(block), &doc))
	require.Len(t, doc.HealthCheckExprs, 1, "one entry, for FLApp")
	return doc.HealthCheckExprs
}

// wantVerdict is what the README's health table says Flux makes of an FLApp:
// kstatus' verdict (Current, InProgress, Failed, or Unknown when the
// expressions cannot be evaluated).
func wantVerdict(status map[string]any, hasStatus bool) string {
	if !hasStatus {
		return "Unknown" // CEL's has() cannot test the top-level status
	}
	switch status["appState"] {
	case "FLStateRunning", "FLStateComplete":
		return "Current"
	case "FLStateFailing", "FLStateShutDown", "FLStateFailed":
		return "Failed"
	default: // no appState yet, bootstrapping, pairing, or a state the check does not know
		return "InProgress"
	}
}

// healthCase is one testdata file: the FLApp to apply, the status the
// operator wrote (written by the test), and the cheatsheet's row for it.
type healthCase struct {
	file      string
	flapp     map[string]any
	status    map[string]any
	hasStatus bool
	kind      string // real export or synthetic, from the file's first line
}

func readHealthCase(t *testing.T, file string) healthCase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(env.repo, healthCases, "testdata", file))
	require.NoError(t, err)
	c := healthCase{file: file}
	switch first, _, _ := strings.Cut(string(b), "\n"); {
	case strings.HasPrefix(first, "# A real export"):
		c.kind = "real export"
	case strings.HasPrefix(first, "# Synthetic"):
		c.kind = "synthetic"
	default:
		t.Fatalf("%s: its first line must say whether it is a real export or synthetic: %q", file, first)
	}
	var obj map[string]any
	require.NoError(t, yaml.Unmarshal(b, &obj))
	meta, _ := obj["metadata"].(map[string]any)
	c.flapp = map[string]any{
		"apiVersion": obj["apiVersion"], "kind": obj["kind"],
		"metadata": map[string]any{"name": meta["name"]},
		"spec":     obj["spec"],
	}
	c.status, c.hasStatus = obj["status"].(map[string]any)
	if _, ok := obj["status"]; ok {
		require.True(t, c.hasStatus, "%s: status is an object", file)
	}
	return c
}

// row is the cheatsheet's evidence row for the case, given Flux's verdict.
func (c healthCase) row(verdict string) string {
	state := "none (no `status`)"
	if s, ok := c.status["appState"].(string); ok {
		state = "`" + s + "`"
	} else if c.hasStatus {
		state = "none (`status: {}`)"
	}
	ks := map[string]string{
		"Current":    "`Ready=True`",
		"Failed":     "`Ready=False` at once",
		"InProgress": "`Ready=False` at the timeout",
		"Unknown":    "`Ready=False` at the timeout",
	}[verdict]
	return fmt.Sprintf("| `%s` | %s | %s | %s | %s |", c.file, c.kind, state, verdict, ks)
}

// setStatus writes an FLApp's status through the status subresource, as the
// operator does, once Flux has created the FLApp.
func setStatus(t *testing.T, ns, name string, status map[string]any) {
	t.Helper()
	patch, err := json.Marshal(map[string]any{"status": status})
	require.NoError(t, err)
	err = wait.PollUntilContextTimeout(ctxFor(t), 250*time.Millisecond, reconcileMax, true, func(ctx context.Context) (bool, error) {
		_, err := env.cluster.Dyn.Resource(flappGVR).Namespace(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
	require.NoError(t, err, "set the status of %s/%s", ns, name)
}

// TestFLAppHealthCheck proves the FLApp entry of examples/flux/cel-healthchecks.md
// (what to submit to Flux's CEL cheatsheet) with the real kustomize-controller:
// its expressions are the ones the example Kustomizations ship, and on every
// testdata FLApp of the Argo CD health check (real exports of FLApps run by
// fedlearner's operator, and synthetic ones) Flux's verdict is the README's
// (Running and Complete ready, Failing, ShutDown and Failed failed at once,
// everything else not ready at the timeout), which is the cheatsheet's
// evidence table row for row. One Kustomization per FLApp (the shipped spec,
// the cheatsheet's expressions, timeout cut to 32 s), all side by side: Flux
// applies the FLApp, the test writes the file's status as the operator
// would, and reads the verdict of that reconcile.
func TestFLAppHealthCheck(t *testing.T) {
	t.Parallel()
	exprs := cheatsheetExprs(t)
	shipped := decode(t, mustRead(t, clusterFile))
	var ks *unstructured.Unstructured
	for _, o := range shipped {
		if o.GetKind() == "Kustomization" {
			ks = o
		}
	}
	require.NotNil(t, ks)
	shippedExprs, _, _ := unstructured.NestedSlice(ks.Object, "spec", "healthCheckExprs")
	assert.Equal(t, shippedExprs, exprs, "the cheatsheet's expressions are the ones %s ships", clusterFile)
	md := string(mustRead(t, cheatsheet))

	entries, err := os.ReadDir(filepath.Join(env.repo, healthCases, "testdata"))
	require.NoError(t, err)
	var files []string
	for _, e := range entries {
		files = append(files, e.Name())
	}
	sort.Strings(files)
	require.GreaterOrEqual(t, len(files), 12, "a case per state of the operator, no status and an unknown state")
	seen := map[string]bool{}
	for _, file := range files {
		c := readHealthCase(t, file)
		seen[wantVerdict(c.status, c.hasStatus)] = true
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			name := "hc-" + strings.TrimSuffix(file, ".yaml")
			var ns string
			j := newJob(t, name, jobOptions{
				sources: func(j *job) map[string][]byte {
					ns = j.ns("leader")
					c.flapp["metadata"].(map[string]any)["namespace"] = ns
					b, err := yaml.Marshal(c.flapp)
					require.NoError(t, err)
					return map[string][]byte{"flapp.yaml": b}
				},
				ksEdit: func(ks *unstructured.Unstructured) {
					require.NoError(t, unstructured.SetNestedSlice(ks.Object, exprs, "spec", "healthCheckExprs"))
					require.NoError(t, unstructured.SetNestedField(ks.Object, healthTimeout, "spec", "timeout"))
				},
			})
			flappName := c.flapp["metadata"].(map[string]any)["name"].(string)
			if c.hasStatus {
				setStatus(t, ns, flappName, c.status)
			}
			st := waitKustomization(t, j.name, "the health verdict", func(s ksStatus) bool {
				r := s.conds["Ready"]
				return s.attempted == j.rev.name() && (r.Status == metav1.ConditionTrue || r.Reason == "HealthCheckFailed")
			})
			ready, healthy := st.conds["Ready"], st.conds["Healthy"]
			t.Logf("%s: Ready=%s %s: %s", file, ready.Status, ready.Reason, ready.Message)
			flapp := "FLApp/" + ns + "/" + flappName
			verdict := wantVerdict(c.status, c.hasStatus)
			switch verdict {
			case "Current":
				assert.Equal(t, metav1.ConditionTrue, ready.Status, "ready")
				assert.Equal(t, metav1.ConditionTrue, healthy.Status, "healthy")
				assert.Equal(t, j.rev.name(), st.applied, "the revision counts as applied")
			case "InProgress", "Unknown":
				requireTimedOut(t, file, ready, flapp, verdict)
				assert.Equal(t, metav1.ConditionFalse, healthy.Status, "not healthy")
				assert.Empty(t, st.applied, "no revision counts as applied before the health checks pass")
				if verdict == "Unknown" && strings.Contains(ready.Message, "timeout waiting for") {
					assert.Contains(t, ready.Message, "no such attribute(s): status.appState")
				}
			case "Failed":
				assert.Equal(t, metav1.ConditionFalse, ready.Status, "not ready")
				assert.Equal(t, "HealthCheckFailed", ready.Reason)
				assert.Equal(t, metav1.ConditionFalse, healthy.Status, "not healthy")
				// Failed is final: the controller stops waiting at once
				// instead of running into the timeout.
				assert.True(t, strings.HasSuffix(ready.Message, ": failed early due to stalled resources: ["+flapp+" status: 'Failed']"), ready.Message)
			}
			assert.NotContains(t, ready.Message, "Service/", "the Services are healthy")
			row := c.row(verdict)
			assert.Contains(t, md, row+"\n", "%s lacks the evidence row\n%s", cheatsheet, row)
		})
	}
	assert.Equal(t, map[string]bool{"Current": true, "InProgress": true, "Failed": true, "Unknown": true}, seen, "the testdata reach every verdict")
	rows := 0
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "| `") && strings.Contains(line, ".yaml` |") {
			rows++
		}
	}
	assert.Equal(t, len(files), rows, "%s has one evidence row per testdata file, no other", cheatsheet)
}

func mustRead(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(env.repo, rel))
	require.NoError(t, err)
	return b
}
