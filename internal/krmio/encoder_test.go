package krmio

import (
	"bytes"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/fedlearner/flapp-services/fn/fntest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// kyamlDoc is kyaml's encoding of fntest.ServiceNode(svc) as a document of a stream.
func kyamlDoc(t *testing.T, svc *corev1.Service) string {
	t.Helper()
	b, err := appendEncoded(nil, fntest.ServiceNode(svc).Document())
	require.NoError(t, err)
	return string(b)
}

// kyamlItem is kyaml's encoding of fntest.ServiceNode(svc) as the only item of a
// ResourceList, as framework.Execute writes it (KRM mode keeps the reader
// annotations), without the ResourceList's first three lines.
func kyamlItem(t *testing.T, svc *corev1.Service) string {
	t.Helper()
	var buf bytes.Buffer
	w := kio.ByteWriter{Writer: &buf, KeepReaderAnnotations: true,
		WrappingKind: kio.ResourceListKind, WrappingAPIVersion: kio.ResourceListAPIVersion}
	require.NoError(t, w.Write([]*yaml.RNode{fntest.ServiceNode(svc)}))
	head := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"
	require.True(t, strings.HasPrefix(buf.String(), head), buf.String())
	return strings.TrimPrefix(buf.String(), head)
}

// checkService asserts that the fast encoder writes svc exactly as kyaml
// does, as a document and as a ResourceList item, and reports whether the
// fast path (rather than the kyaml fallback) was taken.
func checkService(t *testing.T, svc *corev1.Service) bool {
	t.Helper()
	annos := sortedAnnotations(svc.Annotations)
	wantDoc, wantItem := kyamlDoc(t, svc), kyamlItem(t, svc)

	gotDoc, err := encodeServiceDoc(nil, svc, annos)
	require.NoError(t, err)
	assert.Equal(t, wantDoc, string(gotDoc), "document of %+v", svc)
	gotItem, err := encodeServiceItem(nil, svc, annos)
	require.NoError(t, err)
	assert.Equal(t, wantItem, string(gotItem), "item of %+v", svc)

	fastDoc, okDoc := appendService([]byte("prefix"), svc, annos, "", "")
	fastItem, okItem := appendService(nil, svc, annos, "- ", "  ")
	assert.Equal(t, okDoc, okItem)
	if okDoc {
		assert.Equal(t, "prefix"+wantDoc, string(fastDoc))
		assert.Equal(t, wantItem, string(fastItem))
	} else {
		assert.Equal(t, "prefix", string(fastDoc), "a failed append leaves the buffer as it was")
	}
	// The node the fallbacks hand to kyaml: the fast encoder's bytes, parsed.
	node, err := serviceNode(svc, annos)
	require.NoError(t, err)
	viaNode, err := appendEncoded(nil, node.Document())
	require.NoError(t, err)
	assert.Equal(t, wantDoc, string(viaNode), "kyaml's encoding of serviceNode(%+v)", svc)
	return okDoc
}

// trickyStrings are strings whose YAML form is not their plain text, or is
// only just: quoting, other types, indicators, non-ASCII, line breaks.
var trickyStrings = []string{
	"", "true", "True", "TRUE", "false", "FALSE", "null", "Null", "NULL", "~",
	"yes", "Yes", "no", "No", "on", "off", "y", "n", "Y", "N", "o",
	"0", "1", "7", "42", "0007", "09", "0x1f", "0o17", "0b101", "-0b1", "1_000", "1e3", "1.5", "-1", "+1",
	".inf", ".nan", "-.inf", ".5", "123456789012345678", "1234567890123456789", "99999999999999999999999",
	"2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-1-1", "1234-abc",
	"12345678-1234-1234-1234-123456789abc", "ABCDEF01-2345-6789-ABCD-EF0123456789", "0b345678-1234-1234-1234-123456789abc",
	"1e345678-1234-1234-1234-123456789abc", "0c8a5f2e-7b1d-4c3a-9e8f-1a2b3c4d5e6f", "12345678-1234-1234-1234-123456789abg",
	"a b", "-a", "- a", "a-", "a: b", "a:b", "a #b", "#a", "a#b", "&a", "*a", "!a", "|a", ">a", "'a", "\"a", "%a", "@a", "`a",
	"[a]", "{a}", "a,b", "?a", ":a", "a:", "---", "...", "<<", "=", "_a", "/a", ".a", "a/b.c_d-e",
	" lead", "trail ", "multi\nline", "\nlead", " lead\nx", "a\n\n", "x\u2028y", "'q'\n", "tab\tin", "é", "naïve", "日本", "\x01", "a\\b",
	strings.Repeat("k", 128), strings.Repeat("k", 129), strings.Repeat("k", 1100), strings.Repeat("long-value-", 20),
	"default", "team-1", "leader", "worker", "flapp-port", "fedlearner.k8s.io/v1alpha1", "FLApp",
	"app.kubernetes.io/managed-by", "internal.config.kubernetes.io/path", "apps/normal.services.yaml",
}

// ordinaryStrings are strings the fast path decides.
var ordinaryStrings = []string{
	"true", "null", "False", "yes", "0", "1", "16", "0007", "default", "team-1", "Leader", "worker",
	"fedlearner.k8s.io/v1alpha1", "app.kubernetes.io/managed-by", "apps/normal.services.yaml",
	"0c8a5f2e-7b1d-4c3a-9e8f-1a2b3c4d5e6f", "ABCDEF01-2345-6789-ABCD-EF0123456789", "a_b", "x.y-z",
}

func randomString(rnd *rand.Rand) string {
	if ordinaryOnly {
		if rnd.Intn(2) == 0 {
			return ordinaryStrings[rnd.Intn(len(ordinaryStrings))]
		}
		const alphabet = "abcdefghijklmnopqrstuvwxyzABCXYZ0123456789-._/"
		b := []byte{alphabet[rnd.Intn(29)]}
		for i := rnd.Intn(20); i > 0; i-- {
			b = append(b, alphabet[rnd.Intn(len(alphabet))])
		}
		return string(b)
	}
	if rnd.Intn(3) == 0 {
		return trickyStrings[rnd.Intn(len(trickyStrings))]
	}
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCXYZ0123456789-._/ :#'\"é"
	n := 1 + rnd.Intn(20)
	b := make([]rune, 0, n)
	letters := []rune(alphabet)
	for i := 0; i < n; i++ {
		if rnd.Intn(4) == 0 {
			b = append(b, letters[rnd.Intn(len(letters))])
		} else {
			b = append(b, letters[rnd.Intn(26)])
		}
	}
	return string(b)
}

// ordinaryOnly makes randomString draw only strings the fast path decides.
var ordinaryOnly bool

func randomMap(rnd *rand.Rand, most int) map[string]string {
	n := rnd.Intn(most + 1)
	if n == 0 {
		return nil
	}
	m := make(map[string]string, n)
	for i := 0; i < n; i++ {
		m[randomString(rnd)] = randomString(rnd)
	}
	return m
}

func randomBool(rnd *rand.Rand) *bool {
	switch rnd.Intn(3) {
	case 0:
		return nil
	case 1:
		return ptrTo(true)
	}
	return ptrTo(false)
}

func ptrTo[T any](v T) *T { return &v }

func randomService(rnd *rand.Rand) *corev1.Service {
	svc := &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        randomString(rnd),
			Labels:      randomMap(rnd, 6),
			Annotations: randomMap(rnd, 4),
		},
	}
	if rnd.Intn(4) > 0 {
		svc.Namespace = randomString(rnd)
	}
	for i := rnd.Intn(3); i > 0; i-- {
		svc.OwnerReferences = append(svc.OwnerReferences, metav1.OwnerReference{
			APIVersion: randomString(rnd), Kind: randomString(rnd), Name: randomString(rnd),
			UID: types.UID(randomString(rnd)), Controller: randomBool(rnd), BlockOwnerDeletion: randomBool(rnd),
		})
	}
	for i := rnd.Intn(4); i > 0; i-- {
		p := corev1.ServicePort{Name: randomString(rnd), Port: int32(rnd.Intn(70000) - 100)}
		switch rnd.Intn(4) {
		case 1:
			p.Protocol = corev1.ProtocolUDP
		case 2:
			p.Protocol = corev1.ProtocolSCTP
		case 3:
			p.Protocol = corev1.Protocol(randomString(rnd))
		}
		if rnd.Intn(3) == 0 {
			p.TargetPort = intstr.FromInt32(int32(rnd.Intn(70000) - 100))
		} else {
			p.TargetPort = intstr.FromString(randomString(rnd))
		}
		svc.Spec.Ports = append(svc.Spec.Ports, p)
	}
	svc.Spec.Selector = randomMap(rnd, 5)
	return svc
}

// TestFastEncoderRandomServices: randomized Services, with names,
// namespaces, labels, annotations, owner references, ports and protocols
// drawn from ordinary and YAML-hostile strings, encode exactly as kyaml
// encodes them; the ordinary ones take the fast path.
func TestFastEncoderRandomServices(t *testing.T) {
	rnd := rand.New(rand.NewSource(5))
	fast := 0
	n := randomCases(3000)
	for i := 0; i < n; i++ {
		ordinaryOnly = i%2 == 0
		if checkService(t, randomService(rnd)) {
			fast++
		}
		if t.Failed() {
			break
		}
	}
	ordinaryOnly = false
	t.Logf("%d of %d random Services took the fast path", fast, n)
	assert.GreaterOrEqual(t, fast, n/2, "every Service of ordinary strings takes the fast path")
}

// TestScalarFormMatchesKyaml checks each decided string, as a value and as a
// key, against kyaml's encoder.
func TestScalarFormMatchesKyaml(t *testing.T) {
	rnd := rand.New(rand.NewSource(7))
	strs := append([]string(nil), trickyStrings...)
	for i := 0; i < randomCases(5000); i++ {
		strs = append(strs, randomString(rnd))
	}
	for _, s := range strs {
		for _, key := range []bool{false, true} {
			form := scalarForm(s, key)
			if form == formUnknown {
				continue
			}
			m := &yaml.Node{Kind: yaml.MappingNode}
			if key {
				m.Content = []*yaml.Node{stringNode(s), stringNode("v")}
			} else {
				m.Content = []*yaml.Node{stringNode("k"), stringNode(s)}
			}
			b, err := yaml.Marshal(m)
			require.NoError(t, err)
			want := string(b)
			text := s
			if form == formQuoted {
				text = `"` + s + `"`
			}
			got := "k: " + text + "\n"
			if key {
				got = text + ": v\n"
			}
			assert.Equal(t, want, got, "%q (key %v)", s, key)
		}
	}
}

func Example_appendService() {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "true", Namespace: "0017"}}
	b, _ := appendService(nil, svc, nil, "", "")
	fmt.Print(string(b))
	// Output:
	// apiVersion: v1
	// kind: Service
	// metadata:
	//   name: "true"
	//   namespace: "0017"
	// spec:
	//   ports: []
}
