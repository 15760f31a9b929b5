package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// What render mode reads: files, directories (in lexical order, hidden
// directories and other extensions skipped), v1 Lists, local config, stdin.

func TestRenderDirectory(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"b/flapp.yaml":       goodFLApp,
		"a/config.yml":       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: default}\n",
		"a/ignored.txt":      "not yaml at all: [",
		".git/x.yaml":        "not: [valid",
		"c/list.json":        `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","namespace":"default"}}]}`,
		"c/local.yaml":       "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: local\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n",
		"d/multi.yaml":       "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: sa1}\n---\napiVersion: v1\nkind: ServiceAccount\nmetadata: {name: sa2}\n",
		"d/multi-list.yaml":  "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: sa3}\n---\napiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ServiceAccount, metadata: {name: sa4}}\n",
		"d/empty-docs.yaml":  "---\n---\n",
		"e/nested/deep.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: deep}\n",
	})
	out, stderr, err := runRender(t, RenderOptions{Paths: []string{dir}}, "")
	require.NoError(t, err, stderr)
	assert.Empty(t, stderr)
	assert.Equal(t, []string{
		"ConfigMap/default/cm",
		"FLApp/default/normal",
		"Secret/default/s",
		"ServiceAccount//sa3", "ServiceAccount//sa4", // multi-list.yaml sorts before multi.yaml
		"ServiceAccount//sa1", "ServiceAccount//sa2",
		"Namespace//deep",
		"Service/default/normal-leader-worker-0", "Service/default/normal-leader-worker-1",
	}, objects(t, out))
	assert.NotContains(t, out, "config.kubernetes.io/", "reader annotations never reach the cluster")
	assert.Contains(t, out, "# the leader", "comments pass through")
	assert.Contains(t, out, "            - name: tensorflow", "the file's list indentation is kept")
}

func TestRenderStdinAndFiles(t *testing.T) {
	dir := writeFiles(t, map[string]string{"x.yaml": "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: sa}\n"})
	out, stderr, err := runRender(t, RenderOptions{Paths: []string{"-", filepath.Join(dir, "x.yaml")}}, goodFLApp)
	require.NoError(t, err, stderr)
	assert.Equal(t, []string{"FLApp/default/normal", "ServiceAccount//sa",
		"Service/default/normal-leader-worker-0", "Service/default/normal-leader-worker-1"}, objects(t, out))
}

// A UTF-16 file (with its byte order mark) is read as its UTF-8 twin:
// the same Services, and the FLApp as the same object (written out again
// in UTF-8, not copied). Discover claims it too (TestDiscover).
func TestRenderUTF16(t *testing.T) {
	want, stderr, err := runRender(t, RenderOptions{Paths: []string{writeFiles(t, map[string]string{"a.yaml": goodFLApp})}}, "")
	require.NoError(t, err, stderr)
	wantFLApp, wantServices, _ := strings.Cut(want, "\n---\n")
	for _, bigEndian := range []bool{false, true} {
		got, stderr, err := runRender(t, RenderOptions{Paths: []string{writeFiles(t, map[string]string{"a.yaml": utf16(goodFLApp, bigEndian, true)})}}, "")
		require.NoError(t, err, stderr)
		gotFLApp, gotServices, _ := strings.Cut(got, "\n---\n")
		assert.Equal(t, wantServices, gotServices)
		assert.Equal(t, yaml.MustParse(wantFLApp).MustString(), yaml.MustParse(gotFLApp).MustString())
	}
}
