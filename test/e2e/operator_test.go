package e2e

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The fedlearner operator cannot run here (README.md, "Beside the operator":
// its source is neither served nor committable); what it does to a Service
// that concerns the API server is reproduced with the Service it makes,
// written by hand from its code (README.md, Where it differs from the fedlearner operator: it drops a port's
// protocol), and the real API server decides.
//
// When the operator made a replica's Service first, a server-side apply of
// the render's Service with a UDP port is refused: server-side apply keys a
// Service's ports by port and protocol, so 9125/UDP is a second port beside
// the operator's 9125/TCP, with the same name. A client-side apply (Argo CD's)
// merges ports by port number and succeeds, making the port UDP. Measured with
// the real operator once (README.md); this holds the API server's part.
func TestOperatorServiceFirstThenServerSideApplyOfAUDPPort(t *testing.T) {
	ns := newNamespace(t, "operator-first-udp")
	dir := t.TempDir()
	file := filepath.Join(dir, "flapp.yaml")
	writeFile(t, file, flappYAML("udp", ns, "Leader", replicaType{name: "Worker", replicas: 1,
		ports: []port{{name: "flapp-port", number: 50051}, {name: "metrics", number: 9125, protocol: "UDP"}}}))
	rendered := filter(render(t, "--owner-references", "Never", file), isGenerated)
	require.Len(t, rendered, 1)

	selector := map[string]string{"app-name": "udp", "role": "leader", "fl-replica-type": "worker", "fl-replica-index": "0"}
	operators := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "udp-leader-worker-0", Namespace: ns, Labels: selector},
		Spec: corev1.ServiceSpec{Selector: selector, Ports: []corev1.ServicePort{
			{Name: "flapp-port", Port: 50051, TargetPort: intstr.FromString("flapp-port")},
			{Name: "metrics", Port: 9125, TargetPort: intstr.FromString("metrics")},
		}},
	}
	_, err := env.kube.CoreV1().Services(ns).Create(ctxFor(t), operators, metav1.CreateOptions{FieldManager: "fedlearner-operator"})
	require.NoError(t, err)

	_, err = trySSA(t, rendered[0], applyOpts{manager: "kustomize-controller"})
	require.Error(t, err, "server-side apply of the render's Service over the operator's")
	assert.Contains(t, err.Error(), "Duplicate value: \"metrics\"")

	mustKubectl(t, []byte(toYAML(rendered[0])), "apply", "-f", "-")
	live, err := env.kube.CoreV1().Services(ns).Get(ctxFor(t), "udp-leader-worker-0", metav1.GetOptions{})
	require.NoError(t, err)
	var protocols []corev1.Protocol
	for _, p := range live.Spec.Ports {
		protocols = append(protocols, p.Protocol)
	}
	assert.Equal(t, []corev1.Protocol{corev1.ProtocolTCP, corev1.ProtocolUDP}, protocols, "client-side apply: metrics is UDP, as rendered")
}
