package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kubectlApplySet runs `kubectl apply --server-side --prune --applyset`
// with the rendered stream on stdin, like a CI job or a plain GitOps script.
func kubectlApplySet(t *testing.T, ns, applyset string, rendered []byte) string {
	t.Helper()
	return mustKubectl(t, rendered, "apply", "--server-side", "--field-manager=flapp-gitops",
		"--prune", "--applyset="+applyset, "-n", ns, "-f", "-")
}

// TestKubectlApplySetPrune (scenario 4): the Flux cycle of scenario 3 with
// kubectl's ApplySet pruning instead of an inventory: exactly the
// out-of-range Services are pruned, the rest keep UID and ClusterIP, and a
// re-apply of the same render prunes nothing and changes nothing.
func TestKubectlApplySetPrune(t *testing.T) {
	ns := newNamespace(t, "s4-kubectl")
	dir := t.TempDir()
	master := replicaType{name: "Master", replicas: 1, ports: defaultPorts[:1]}
	worker := replicaType{name: "Worker", replicas: 4, pair: true, ports: defaultPorts}
	ps := replicaType{name: "PS", replicas: 1, ports: defaultPorts[:1]}
	file := filepath.Join(dir, "flapp.yaml")
	writeFile(t, file, flappYAML("kc", ns, "Leader", master, worker, ps))

	out := kubectlApplySet(t, ns, "flapps", renderRaw(t, dir).stdout)
	t.Logf("first apply:\n%s", out)
	before := liveServices(t, ns)
	require.Equal(t, expectedNames("kc", "Leader", master, worker, ps), keys(before))

	worker.replicas = 2
	writeFile(t, file, flappYAML("kc", ns, "Leader", master, worker, ps))
	res := renderRaw(t, dir)
	require.Zero(t, res.exitCode, "%s", res.stderr)
	out = kubectlApplySet(t, ns, "flapps", res.stdout)
	t.Logf("second apply:\n%s", out)
	var pruned []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasSuffix(l, " pruned") {
			pruned = append(pruned, strings.TrimSuffix(l, " pruned"))
		}
	}
	require.ElementsMatch(t, []string{"service/kc-leader-worker-2", "service/kc-leader-worker-3"}, pruned)

	after := liveServices(t, ns)
	require.Equal(t, expectedNames("kc", "Leader", master, worker, ps), keys(after))
	for n, id := range identities(after) {
		require.Equal(t, identities(before)[n], id, "Service %s kept its UID and ClusterIP", n)
		require.Equal(t, before[n].ResourceVersion, after[n].ResourceVersion, "Service %s untouched", n)
	}

	// Re-apply: nothing pruned, nothing changed.
	out = kubectlApplySet(t, ns, "flapps", renderRaw(t, dir).stdout)
	require.NotContains(t, out, "pruned")
	for n, s := range liveServices(t, ns) {
		require.Equal(t, after[n].ResourceVersion, s.ResourceVersion, "Service %s", n)
	}

	// The ApplySet parent records the Services' group kind.
	parent, err := env.kube.CoreV1().Secrets(ns).Get(ctxFor(t), "flapps", metav1.GetOptions{})
	require.NoError(t, err, "ApplySet parent Secret")
	require.Contains(t, parent.Annotations["applyset.kubernetes.io/contains-group-kinds"], "Service")
}
