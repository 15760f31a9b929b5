package krmio_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedlearner/flapp-services/fn"
	"github.com/fedlearner/flapp-services/fn/fntest"
	"github.com/fedlearner/flapp-services/internal/cli"
	"github.com/fedlearner/flapp-services/internal/krmio"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// anchoredFLApp is an FLApp whose peer URL and replica specs come from
// anchors (in: the lines the anchors need first, use: the FLApp).
const anchoredFLApp = `apiVersion: fedlearner.k8s.io/v1alpha1
kind: FLApp
metadata:
  name: normal
  namespace: *ns
spec:
  role: Leader
  peerSpecs:
    Follower:
      peerURL: *peer
  flReplicaSpecs:
    Master: *master
    Worker:
      <<: *master
      pair: true
      replicas: 2
`

const anchors = `apiVersion: v1
kind: ConfigMap
metadata:
  name: shared
  namespace: &ns default
data:
  peer: &peer fedlearner-operator.follower.svc.cluster.local:8100
  master: &master
    pair: false
    replicas: 1
    template:
      spec:
        containers:
        - name: tensorflow
          image: fedlearner/fedlearner:v2.3
          ports:
          - name: flapp-port
            containerPort: 50051
`

// asList is docs as the items of a v1 List.
func asList(docs ...string) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: List\nitems:\n")
	for _, d := range docs {
		b.WriteString("- " + strings.ReplaceAll(strings.TrimSuffix(d, "\n"), "\n", "\n  ") + "\n")
	}
	return b.String()
}

// resolved is the JSON of every object of a YAML stream as go-yaml reads
// it, aliases resolved, v1 Lists expanded.
func resolved(t *testing.T, stream string) []string {
	t.Helper()
	var out []string
	var add func(v any)
	add = func(v any) {
		if m, ok := v.(map[string]any); ok && m["kind"] == "List" && m["apiVersion"] == "v1" {
			if items, ok := m["items"].([]any); ok {
				for _, item := range items {
					add(item)
				}
				return
			}
		}
		b, err := json.Marshal(v)
		require.NoError(t, err)
		out = append(out, string(b))
	}
	dec := yaml.NewDecoder(strings.NewReader(stream))
	for {
		var v any
		if err := dec.Decode(&v); err != nil {
			require.ErrorIs(t, err, io.EOF)
			return out
		}
		add(v)
	}
}

// writtenByKyaml is what kio.ByteWriter writes, as render mode's reference,
// for the objects of file as render mode reads them (krmio.ReadDocuments,
// each v1 List's items objects of their own) followed by a node per
// Service that fn generates for them.
func writtenByKyaml(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	var objects []*yaml.RNode
	var expand func(n *yaml.RNode)
	expand = func(n *yaml.RNode) {
		if items := n.Field("items"); n.GetApiVersion() == "v1" && n.GetKind() == "List" && items != nil {
			for _, item := range items.Value.YNode().Content {
				expand(yaml.NewRNode(item))
			}
			return
		}
		objects = append(objects, n)
	}
	for doc, err := range krmio.ReadDocuments(data, file, krmio.ReadLimits{MaxNodes: 1 << 20, MaxDocuments: 100}) {
		require.NoError(t, err)
		expand(doc.Node)
	}
	kept, out, results := fntest.Generate(objects, fn.DefaultConfig())
	require.Zero(t, results.ExitCode(), results.Error())
	var buf bytes.Buffer
	w := kio.ByteWriter{Writer: &buf, ClearAnnotations: []string{
		kioutil.PathAnnotation, kioutil.IndexAnnotation, kioutil.LegacyPathAnnotation, kioutil.LegacyIndexAnnotation}}
	require.NoError(t, w.Write(fntest.WithServiceNodes(kept, out.Services())))
	return buf.String()
}

// withinDocument is an FLApp that aliases anchors of its own.
const withinDocument = `apiVersion: fedlearner.k8s.io/v1alpha1
kind: FLApp
metadata:
  name: normal
  namespace: &ns default
  annotations:
    peer: &peer fedlearner-operator.follower.svc.cluster.local:8100
spec:
  role: Leader
  peerSpecs:
    Follower:
      peerURL: *peer
  flReplicaSpecs:
    Master: &master
      pair: false
      replicas: 1
      template:
        spec:
          containers:
          - name: tensorflow
            image: fedlearner/fedlearner:v2.3
            ports:
            - name: flapp-port
              containerPort: 50051
    Worker:
      <<: *master
      pair: true
      replicas: 2
`

// TestRenderAnchors: anchors work wherever YAML allows them in render mode's
// files: within a document, and across the items of a List alone in its
// file or among other documents. Each object of the render reads as it did
// in its document (an item of a List is written with the aliases to other
// items' anchors expanded: it is a document of its own in the render), the
// FLApp's Services are rendered, and the render is what kyaml's writer
// writes for the objects read. kyaml's reader has no answer to compare
// with for a List: it keeps an item's aliases to other items' anchors,
// which name nothing once the item is a document of its own.
func TestRenderAnchors(t *testing.T) {
	for name, file := range map[string]string{
		"list alone":           asList(anchors, anchoredFLApp),
		"list among documents": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: first}\n---\n" + asList(anchors, anchoredFLApp),
		"within a document":    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: first}\n---\n" + withinDocument,
		"a list in a list":     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: first}\n---\n" + asList(asList(anchors, anchoredFLApp)),
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "apps.yaml"), []byte(file), 0o644))
			if !strings.Contains(file, "kind: List") {
				assertRenderMatches(t, name, dir)
			}
			got, stderr := runRender(dir)
			require.False(t, got.failed, stderr)
			assert.Equal(t, writtenByKyaml(t, filepath.Join(dir, "apps.yaml")), got.out, "what kio.ByteWriter writes")

			// Every document of the render reads alone, as kyaml reads it.
			docs, err := (&kio.ByteReader{Reader: strings.NewReader(got.out), OmitReaderAnnotations: true}).Read()
			require.NoError(t, err, "the render reads:\n%s", got.out)
			want := resolved(t, file)
			require.Len(t, docs, len(want)+3, "the objects and 3 Services")
			var rendered []string
			for _, d := range docs[:len(want)] {
				s, err := d.String()
				require.NoError(t, err)
				rendered = append(rendered, resolved(t, s)...)
			}
			assert.Equal(t, want, rendered)
			for i, svc := range []string{"normal-leader-master-0", "normal-leader-worker-0", "normal-leader-worker-1"} {
				assert.Equal(t, svc, docs[len(want)+i].GetName())
				assert.Equal(t, "default", docs[len(want)+i].GetNamespace())
			}
		})
	}
}

// TestRenderAliasAcrossDocuments: anchors never cross documents; the alias
// that names one of another document is refused in go-yaml's words, at the
// line its document starts on.
func TestRenderAliasAcrossDocuments(t *testing.T) {
	dir := t.TempDir()
	file := anchors + "---\n" + anchoredFLApp
	require.NoError(t, os.WriteFile(filepath.Join(dir, "apps.yaml"), []byte(file), 0o644))
	got, stderr := runRender(dir)
	assert.True(t, got.failed)
	assert.Empty(t, got.out)
	start := strings.Count(anchors, "\n") + 2 // after the anchors and "---"
	assert.Equal(t, fmt.Sprintf("error: %s: document 2 (line %d): yaml: unknown anchor 'ns' referenced\n",
		filepath.Join(dir, "apps.yaml"), start), stderr, "the document, and the line it starts on")
}

// TestRenderAliasBombAcrossItems: a billion laughs spread over the items of
// a List is refused by the document's ceiling, naming it; an item whose
// copy passes the object ceiling is refused by that one.
func TestRenderAliasBombAcrossItems(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: c0}, data: {x: &a0 [x, x, x, x, x, x, x, x, x, x]}}\n")
	for i := 1; i <= 9; i++ {
		b.WriteString("- {apiVersion: v1, kind: ConfigMap, metadata: {name: c" + string(rune('0'+i)) + "}, data: {x: &a" + string(rune('0'+i)) + " [" +
			strings.TrimSuffix(strings.Repeat("*a"+string(rune('0'+i-1))+", ", 10), ", ") + "]}}\n")
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bomb.yaml"), []byte(b.String()), 0o644))
	got, gotStderr := runRender(dir)
	assert.True(t, got.failed)
	assert.Empty(t, got.out)
	assert.Contains(t, gotStderr, "bomb.yaml: document 1 (line 1): holds over 600000 YAML nodes once the aliases its items make to anchors of other items are expanded")
	assert.Contains(t, gotStderr, "over the ceiling per document (--max-document-nodes)")

	var out, stderr bytes.Buffer
	err := cli.RunRender(cli.RenderOptions{Paths: []string{dir}, MaxObjectNodes: 20000}, nil, &out, &stderr)
	assert.Error(t, err)
	assert.Contains(t, stderr.String(), "--max-document-nodes", "the document first")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bomb.yaml"), []byte(strings.Join(strings.SplitAfter(b.String(), "\n")[:8], "")), 0o644))
	stderr.Reset()
	err = cli.RunRender(cli.RenderOptions{Paths: []string{dir}, MaxObjectNodes: 20000}, nil, &out, &stderr)
	assert.Error(t, err)
	assert.Contains(t, stderr.String(), "bomb.yaml: document 1, items[4] (line 8): ConfigMap c4 has over 20000 YAML nodes (--max-object-nodes)")
}

// TestKRMAnchorsMatchKyaml: a ResourceList whose items alias anchors of
// earlier items is written by the fast path as by kyaml's writer.
func TestKRMAnchorsMatchKyaml(t *testing.T) {
	input := strings.Replace(asList(anchors, anchoredFLApp), "apiVersion: v1\nkind: List\n", "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n", 1)
	out := assertKRMMatches(t, "anchors across items", []byte(input))
	assert.Contains(t, string(out), "normal-leader-worker-1")
	assert.Contains(t, string(out), "    Master: *master\n", "the item as it came")
}
