package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fedlearner/flapp-services/fn/fntest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

const goldenDir = "../../testdata"

// TestKRMModeWritesTheGoldenOutputs holds the binary's KRM mode (RunKRM) to each
// golden case's expected.yaml, the reviewed output TestGolden holds
// framework.Execute to, and to its errors.txt: it fails exactly when the case
// does. The expectation is the committed file, not a second run of fn. KRM
// mode keeps the reader's index annotations, as kyaml's command does for kpt
// (KeepReaderAnnotations), which frameworktestutil's expected.yaml drops:
// with them removed the bytes are expected.yaml's, and each index is the
// object's place in its file (kpt's rule, checked by hand in
// kptIndexesArePlaces).
func TestKRMModeWritesTheGoldenOutputs(t *testing.T) {
	indexLine := regexp.MustCompile(`(?m)^ *(internal\.)?config\.kubernetes\.io/index: .*\n`)
	for _, dir := range fntest.GoldenCases(t, goldenDir) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			input, err := os.ReadFile(filepath.Join(dir, "input.yaml"))
			require.NoError(t, err)
			want, err := os.ReadFile(filepath.Join(dir, "expected.yaml"))
			require.NoError(t, err)
			_, statErr := os.Stat(filepath.Join(dir, "errors.txt"))
			wantErr := statErr == nil

			var out, stderr bytes.Buffer
			gotErr := RunKRM(bytes.NewReader(input), &out, &stderr)
			got := out.String()
			if !indexLine.MatchString(string(want)) && indexLine.MatchString(got) {
				kptIndexesArePlaces(t, out.Bytes())
				got = indexLine.ReplaceAllString(got, "")
			}
			assert.Equal(t, string(want), got)
			if wantErr {
				assert.ErrorIs(t, gotErr, ErrFailed)
				assert.NotEmpty(t, stderr.String(), "errors are also explained on stderr")
			} else {
				assert.NoError(t, gotErr)
				onlyWarnings(t, stderr.String())
			}
		})
	}
}

// kptIndexesArePlaces: in a ResourceList for kpt, the items of each path
// are numbered 0, 1, 2, ... in item order, and the legacy annotation, where
// there is one, says the same as the internal one.
func kptIndexesArePlaces(t *testing.T, rl []byte) {
	t.Helper()
	node, err := yaml.Parse(string(rl))
	require.NoError(t, err)
	items, err := node.Pipe(yaml.Lookup("items"))
	require.NoError(t, err)
	elements, err := items.Elements()
	require.NoError(t, err)
	next := map[string]int{}
	for _, item := range elements {
		a := item.GetAnnotations()
		p := a["internal.config.kubernetes.io/path"]
		require.NotEmpty(t, p, "an item without a path among items with indexes")
		assert.Equal(t, strconv.Itoa(next[p]), a["internal.config.kubernetes.io/index"], "%s in %s", item.GetName(), p)
		if legacy, ok := a["config.kubernetes.io/index"]; ok {
			assert.Equal(t, a["internal.config.kubernetes.io/index"], legacy, item.GetName())
		}
		next[p]++
	}
}

// onlyWarnings checks the stderr of a success: nothing, or warnings, one
// line each (kustomize shows a function's stderr, not its results).
func onlyWarnings(t *testing.T, stderr string) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
		assert.True(t, line == "" || strings.HasPrefix(line, "warning"), "stderr of a success: %q", line)
	}
}

// FuzzKRM feeds arbitrary bytes to the KRM mode. Whatever the input: no
// panic (the recover in RunKRM would report an "internal error"), a failure
// is a non-zero exit with a ResourceList holding an error result and an
// explanation on stderr, and a success is a fixed point whose generated
// Services read alike with kubectl's YAML 1.1 reader and kyaml's.
// Its seed corpus (every golden input plus malformed shapes) runs in go test.
func FuzzKRM(f *testing.F) {
	inputs, _ := filepath.Glob(filepath.Join(goldenDir, "*", "input.yaml"))
	for _, p := range inputs {
		data, err := os.ReadFile(p)
		require.NoError(f, err)
		f.Add(data)
	}
	for _, s := range []string{
		"", "{", "[]", "null", "items: [1]", "kind: ResourceList",
		"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: [1, x, [2]]\n",
		"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: {a: b}\n",
		"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {apiVersion: v1, kind: Service, metadata: [1]}\n",
		"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {apiVersion: v1, kind: Service, metadata: {name: x, labels: [a], annotations: 5}}\n",
		"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig: [1]\nitems: []\n",
		"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig: {apiVersion: v1, kind: ConfigMap, data: [1]}\nitems: []\n",
		"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- &a {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n- *a\n",
		"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {apiVersion: fedlearner.k8s.io/v1alpha1, kind: FLApp, metadata: {name: a, uid: [1]}, spec: {role: Leader, flReplicaSpecs: {W: {replicas: 1}}}}\n",
		"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {apiVersion: fedlearner.k8s.io/v1alpha1, kind: FLApp, metadata: {name: a}, spec: {role: Leader, flReplicaSpecs: {W: {replicas: 2147483647, template: {spec: {containers: [{name: tensorflow}]}}}}}}\n",
		"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {apiVersion: fedlearner.k8s.io/v1alpha1, kind: FLApp, metadata: {name: a}, spec: [1]}\n",
		"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {apiVersion: fedlearner.k8s.io/v1alpha1, kind: FLApp, metadata: {name: a}, spec: {role: Leader, flReplicaSpecs: {W: {replicas: 1, template: {spec: {containers: [{name: tensorflow, ports: [{name: p, containerPort: 1e99}]}]}}}}}}\n",
		crossItemAnchors,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var out, stderr bytes.Buffer
		err := RunKRM(bytes.NewReader(data), &out, &stderr)
		require.NotContains(t, stderr.String(), "internal error", "a panic was recovered")

		rw := &kio.ByteReadWriter{Reader: bytes.NewReader(out.Bytes())}
		_, readErr := rw.Read()
		require.NoError(t, readErr, "the output is always a readable ResourceList:\n%s", out.String())
		assert.Equal(t, kio.ResourceListKind, rw.WrappingKind)

		if err != nil {
			require.ErrorIs(t, err, ErrFailed)
			assert.NotEmpty(t, stderr.String())
			assert.Contains(t, out.String(), "severity: error")
			return
		}
		onlyWarnings(t, stderr.String())
		fntest.ServicesReadAlike(t, out.Bytes(), true)
		var again bytes.Buffer
		require.NoError(t, RunKRM(bytes.NewReader(out.Bytes()), &again, &stderr), stderr.String())
		assert.Equal(t, fntest.WithoutResults(t, out.Bytes()), fntest.WithoutResults(t, again.Bytes()), "a second run changes nothing")
	})
}

// crossItemAnchors is a ResourceList built by hand as PyYAML writes shared
// objects: FLApps whose namespace, name, labels, peer URL, pod template and
// whole spec are anchors of earlier items (a ConfigMap's, another FLApp's),
// one through a merge key.
const crossItemAnchors = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: &name shared
    namespace: &ns team-a
    labels: &labels
      team: a
  data:
    peer: &peer fedlearner-operator.follower.svc.cluster.local:8100
- apiVersion: fedlearner.k8s.io/v1alpha1
  kind: FLApp
  metadata:
    name: first
    namespace: *ns
    labels: *labels
  spec: &spec
    role: Leader
    peerSpecs:
      Follower:
        peerURL: *peer
    flReplicaSpecs:
      Master:
        pair: false
        replicas: 1
        template: &template
          spec:
            containers:
            - name: tensorflow
              image: fedlearner/fedlearner:v2.3
              ports:
              - name: flapp-port
                containerPort: 50051
- apiVersion: fedlearner.k8s.io/v1alpha1
  kind: FLApp
  metadata:
    <<: {namespace: *ns, labels: *labels}
    name: *name
  spec:
    role: Follower
    peerSpecs:
      Leader:
        peerURL: *peer
    flReplicaSpecs:
      Worker:
        pair: true
        replicas: 2
        template: *template
- apiVersion: fedlearner.k8s.io/v1alpha1
  kind: FLApp
  metadata: {name: third, namespace: *ns}
  spec: *spec
`

// crossItemServices are the Services of crossItemAnchors, written by hand:
// each FLApp read with its aliases resolved.
const crossItemServices = `- apiVersion: v1
  kind: Service
  metadata:
    name: first-leader-master-0
    namespace: team-a
    labels:
      app-name: first
      app.kubernetes.io/managed-by: flapp-services
      fl-replica-index: "0"
      fl-replica-type: master
      role: leader
    annotations:
      fn.fedlearner.k8s.io/flapp: first
  spec:
    ports:
    - name: flapp-port
      port: 50051
      targetPort: flapp-port
    selector:
      app-name: first
      fl-replica-index: "0"
      fl-replica-type: master
      role: leader
- apiVersion: v1
  kind: Service
  metadata:
    name: shared-follower-worker-0
    namespace: team-a
    labels:
      app-name: shared
      app.kubernetes.io/managed-by: flapp-services
      fl-replica-index: "0"
      fl-replica-type: worker
      role: follower
    annotations:
      fn.fedlearner.k8s.io/flapp: shared
  spec:
    ports:
    - name: flapp-port
      port: 50051
      targetPort: flapp-port
    selector:
      app-name: shared
      fl-replica-index: "0"
      fl-replica-type: worker
      role: follower
- apiVersion: v1
  kind: Service
  metadata:
    name: shared-follower-worker-1
    namespace: team-a
    labels:
      app-name: shared
      app.kubernetes.io/managed-by: flapp-services
      fl-replica-index: "1"
      fl-replica-type: worker
      role: follower
    annotations:
      fn.fedlearner.k8s.io/flapp: shared
  spec:
    ports:
    - name: flapp-port
      port: 50051
      targetPort: flapp-port
    selector:
      app-name: shared
      fl-replica-index: "1"
      fl-replica-type: worker
      role: follower
- apiVersion: v1
  kind: Service
  metadata:
    name: third-leader-master-0
    namespace: team-a
    labels:
      app-name: third
      app.kubernetes.io/managed-by: flapp-services
      fl-replica-index: "0"
      fl-replica-type: master
      role: leader
    annotations:
      fn.fedlearner.k8s.io/flapp: third
  spec:
    ports:
    - name: flapp-port
      port: 50051
      targetPort: flapp-port
    selector:
      app-name: third
      fl-replica-index: "0"
      fl-replica-type: master
      role: leader
`

// kyamlItems is what framework.Execute writes for input with a processor
// that changes nothing: the items as kyaml reads and writes them (v0.21.2
// keeps every alias and anchor as written).
func kyamlItems(t *testing.T, input string) string {
	t.Helper()
	var out bytes.Buffer
	rw := &kio.ByteReadWriter{Reader: strings.NewReader(input), Writer: &out, KeepReaderAnnotations: true}
	require.NoError(t, framework.Execute(framework.ResourceListProcessorFunc(func(*framework.ResourceList) error { return nil }), rw))
	return out.String()
}

// TestKRMAnchorsAcrossItems: an FLApp may alias anchors of earlier items, as
// YAML allows within the one document a ResourceList is. The items are
// written as kyaml writes them, aliases kept; the Services are those of
// the FLApps read with their aliases resolved; and the output, run again,
// gives the same.
func TestKRMAnchorsAcrossItems(t *testing.T) {
	var out, stderr bytes.Buffer
	require.NoError(t, RunKRM(strings.NewReader(crossItemAnchors), &out, &stderr), stderr.String())
	onlyWarnings(t, stderr.String())

	items := kyamlItems(t, crossItemAnchors)
	assert.Contains(t, items, "spec: *spec", "kyaml keeps the aliases")
	require.True(t, strings.HasPrefix(out.String(), items), "the items as kyaml writes them:\n%s", out.String())
	services, results, found := strings.Cut(strings.TrimPrefix(out.String(), items), "results:\n")
	require.True(t, found, out.String())
	assert.Equal(t, crossItemServices, services)
	assert.Contains(t, results, "generated 2 Service(s)")
	fntest.ServicesReadAlike(t, out.Bytes(), true)

	var again bytes.Buffer
	require.NoError(t, RunKRM(bytes.NewReader(out.Bytes()), &again, &stderr), stderr.String())
	assert.Equal(t, fntest.WithoutResults(t, out.Bytes()), fntest.WithoutResults(t, again.Bytes()), "a second run changes nothing")
}

// TestKRMAliasBombAcrossItems: aliases that expand past the node ceilings
// once the items that use them are read are refused, counted without being
// expanded, naming the ceiling; the answer holds the items as they came.
func TestKRMAliasBombAcrossItems(t *testing.T) {
	head := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"
	var bomb strings.Builder
	bomb.WriteString(head + "- {apiVersion: v1, kind: ConfigMap, metadata: {name: c0}, data: {x: &a0 [x, x, x, x, x, x, x, x, x, x]}}\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&bomb, "- {apiVersion: v1, kind: ConfigMap, metadata: {name: c%d}, data: {x: &a%d [%s]}}\n",
			i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d, ", i-1), 10), ", "))
	}
	bomb.WriteString("- {apiVersion: fedlearner.k8s.io/v1alpha1, kind: FLApp, metadata: {name: b}, spec: {role: Leader, x: *a9}}\n")

	// One anchor just under the object ceiling, aliased by enough items
	// that their copies pass the document's.
	wide := head + "- {apiVersion: v1, kind: ConfigMap, metadata: {name: big}, data: {x: &big [" +
		strings.TrimSuffix(strings.Repeat("v, ", DefaultMaxObjectNodes-100), ", ") + "]}}\n" +
		strings.Repeat("- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {x: *big}}\n", 7)

	for name, tc := range map[string]struct {
		input string
		want  string
	}{
		"billion laughs": {bomb.String(),
			"items[4]: ConfigMap c4 has over 100000 YAML nodes once its aliases to anchors of other items are expanded, over the ceiling per object (--max-object-nodes, fixed in KRM mode)"},
		"one anchor, many aliases": {wide,
			"items[7]: the items' aliases to anchors of other items expand to over 600000 YAML nodes in all, over the ceiling per document (--max-document-nodes, fixed in KRM mode)"},
	} {
		t.Run(name, func(t *testing.T) {
			var out, stderr bytes.Buffer
			require.ErrorIs(t, RunKRM(strings.NewReader(tc.input), &out, &stderr), ErrFailed)
			assert.Contains(t, stderr.String(), "error: "+tc.want)
			assert.True(t, strings.HasPrefix(out.String(), kyamlItems(t, tc.input)), "the items as they came")
			assert.Contains(t, out.String(), "severity: error")
		})
	}
}

// TestKRMAliasedMetadataIsRefusedAsByKyaml: an item, or an item's metadata,
// that is itself an alias cannot be annotated by kyaml, which refuses the
// ResourceList (so does every KRM function built on it); the refusal says
// so in words, not in kyaml's node kinds.
func TestKRMAliasedMetadataIsRefusedAsByKyaml(t *testing.T) {
	head := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"
	for input, want := range map[string]string{
		head + "- apiVersion: v1\n  kind: ConfigMap\n  metadata: &m {name: a, namespace: default}\n" +
			"- apiVersion: fedlearner.k8s.io/v1alpha1\n  kind: FLApp\n  metadata: *m\n  spec: {role: Leader}\n": "items[1]: metadata is an alias (*m)",
		head + "- &a {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n- *a\n": "items[1] is an alias (*a) of another item",
	} {
		var kyamlOut bytes.Buffer
		kyamlErr := framework.Execute(framework.ResourceListProcessorFunc(func(*framework.ResourceList) error { return nil }),
			&kio.ByteReadWriter{Reader: strings.NewReader(input), Writer: &kyamlOut, KeepReaderAnnotations: true})
		require.ErrorContains(t, kyamlErr, "expected MappingNode but got AliasNode", "kyaml refuses it")

		var out, stderr bytes.Buffer
		require.ErrorIs(t, RunKRM(strings.NewReader(input), &out, &stderr), ErrFailed)
		assert.Contains(t, stderr.String(), "error: input is not a readable ResourceList: "+want+": kyaml, which reads and writes the ResourceList of every KRM function, annotates each item's metadata and cannot annotate an alias")
		assert.NotContains(t, stderr.String(), "AliasNode")
		assert.Contains(t, out.String(), "severity: error")
	}
}

// TestKRMMalformedInputInGoYAMLsWords: a ResourceList go-yaml cannot parse
// is refused with go-yaml's own message, kyaml's wrapping (its
// MalformedYAMLError prefix) taken off; the answer is an error result.
// go-yaml's parser names its lines from 0: the fault on line 6 reads "line 5".
func TestKRMMalformedInputInGoYAMLsWords(t *testing.T) {
	head := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"
	for input, want := range map[string]string{
		head + "- apiVersion: v1\n  kind: ConfigMap\n  data: {x: [}\n": "yaml: line 5: did not find expected node content",
		head + "- apiVersion: v1\n  kind: ConfigMap\n  data: *x\n":     "yaml: unknown anchor 'x' referenced",
	} {
		var out, stderr bytes.Buffer
		require.ErrorIs(t, RunKRM(strings.NewReader(input), &out, &stderr), ErrFailed)
		assert.Equal(t, "error: input is not a readable ResourceList: "+want+"\n", stderr.String())
		assert.Contains(t, out.String(), "severity: error")
	}
}
