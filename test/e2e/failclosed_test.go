package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// badFLApp cannot be rendered: a "." is legal in an FLApp name but not in a
// Service name (DNS-1035), so flapp-services must refuse it.
func badFLApp(ns string) string {
	return flappYAML("bad.name", ns, "Leader", replicaType{name: "Worker", replicas: 1, ports: defaultPorts})
}

// TestFailClosed (scenario 7): when one FLApp in the directory is bad, the
// render fails with an error on stderr and prints nothing, so a pruning
// apply downstream applies nothing and deletes nothing — even in a naive
// shell pipe without pipefail, because kubectl refuses an empty input.
func TestFailClosed(t *testing.T) {
	ns := newNamespace(t, "s7-failclosed")
	dir := t.TempDir()
	good := replicaType{name: "Worker", replicas: 3, pair: true, ports: defaultPorts}
	writeFile(t, filepath.Join(dir, "good.yaml"), flappYAML("good", ns, "Leader", good))

	// A healthy state first: Services applied and tracked by an ApplySet.
	kubectlApplySet(t, ns, "flapps", renderRaw(t, dir).stdout)
	before := liveServices(t, ns)
	require.Equal(t, expectedNames("good", "Leader", good), keys(before))

	// Someone commits a bad FLApp next to the good one, and scales the
	// good one down in the same commit.
	good.replicas = 1
	writeFile(t, filepath.Join(dir, "good.yaml"), flappYAML("good", ns, "Leader", good))
	writeFile(t, filepath.Join(dir, "bad.yaml"), badFLApp(ns))

	res := renderRaw(t, dir)
	require.NotZero(t, res.exitCode, "render of a directory with a bad FLApp must fail")
	require.Empty(t, res.stdout, "a failed render prints nothing on stdout")
	require.NotEmpty(t, strings.TrimSpace(string(res.stderr)), "a failed render explains itself on stderr")
	require.Contains(t, string(res.stderr), "bad.name", "the error names the bad FLApp")
	t.Logf("render error: %s", strings.TrimSpace(string(res.stderr)))

	// A naive pipeline (no pipefail) and a careful one: both must leave
	// the cluster alone.
	for _, script := range []string{
		`"$FLAPP" render "$DIR" | "$KUBECTL" apply --server-side --field-manager=flapp-gitops --prune --applyset=flapps -n "$NS" -f -`,
		`set -o pipefail; "$FLAPP" render "$DIR" | "$KUBECTL" apply --server-side --field-manager=flapp-gitops --prune --applyset=flapps -n "$NS" -f -`,
	} {
		cmd := exec.Command("bash", "-c", script)
		cmd.Env = append(os.Environ(), "FLAPP="+env.flapp, "KUBECTL="+env.kubectl, "DIR="+dir, "NS="+ns,
			"KUBECONFIG="+env.cluster.Kubeconfig, "KUBECTL_APPLYSET=true")
		out, err := cmd.CombinedOutput()
		require.Error(t, err, "the pipeline must fail:\n%s", out)
		t.Logf("pipeline failed as it should: %s", strings.TrimSpace(string(out)))
	}

	after := liveServices(t, ns)
	require.Equal(t, keys(before), keys(after), "nothing applied, nothing deleted")
	for n, s := range after {
		require.Equal(t, before[n].UID, s.UID, "Service %s", n)
		require.Equal(t, before[n].ResourceVersion, s.ResourceVersion, "Service %s untouched", n)
	}
	list, err := env.dyn.Resource(flappGVR).Namespace(ns).List(ctxFor(t), metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, list.Items, 1, "only the good FLApp exists")
	require.Equal(t, "good", list.Items[0].GetName())
	replicas, _, _ := unstructured.NestedInt64(list.Items[0].Object, "spec", "flReplicaSpecs", "Worker", "replicas")
	require.EqualValues(t, 3, replicas, "the good FLApp's scale-down was not applied either")
}
