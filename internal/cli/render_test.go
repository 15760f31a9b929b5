package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"
)

const goodFLApp = `# the leader
apiVersion: fedlearner.k8s.io/v1alpha1
kind: FLApp
metadata:
  name: normal
  namespace: default
spec:
  role: Leader
  peerSpecs:
    Follower: {peerURL: "follower:8100"}
  flReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers:
            - name: tensorflow
              ports:
                - {name: flapp-port, containerPort: 50051}
`

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	return dir
}

func runRender(t *testing.T, opts RenderOptions, stdin string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := RunRender(opts, strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), err
}

// objects parses a render into "Kind/namespace/name" strings.
func objects(t *testing.T, stream string) []string {
	t.Helper()
	nodes, err := (&kio.ByteReader{Reader: strings.NewReader(stream), OmitReaderAnnotations: true}).Read()
	require.NoError(t, err)
	var ids []string
	for _, n := range nodes {
		ids = append(ids, n.GetKind()+"/"+n.GetNamespace()+"/"+n.GetName())
	}
	return ids
}

func TestRenderDeterministic(t *testing.T) {
	dir := writeFiles(t, map[string]string{"flapp.yaml": goodFLApp})
	first, _, err := runRender(t, RenderOptions{Paths: []string{dir}}, "")
	require.NoError(t, err)
	for i := 0; i < 3; i++ {
		again, _, err := runRender(t, RenderOptions{Paths: []string{dir}}, "")
		require.NoError(t, err)
		assert.Equal(t, first, again)
	}
}

func TestRenderFailsClosed(t *testing.T) {
	bad := strings.Replace(goodFLApp, "name: normal", "name: bad.name", 1)
	tests := map[string]struct {
		files   map[string]string
		opts    RenderOptions
		wantErr string
	}{
		"one bad FLApp among good ones": {
			files:   map[string]string{"good.yaml": goodFLApp, "bad.yaml": strings.Replace(bad, "namespace: default", "namespace: other", 1)},
			wantErr: "bad.yaml: document 1 (line 2): FLApp other/bad.name: metadata.name",
		},
		"not YAML":              {files: map[string]string{"x.yaml": "a: [b"}, wantErr: "x.yaml"},
		"no objects":            {files: map[string]string{"x.yaml": "---\n"}, wantErr: "no Kubernetes objects found"},
		"only local config":     {files: map[string]string{"x.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations: {config.kubernetes.io/local-config: \"true\"}\n"}, wantErr: "no Kubernetes objects found"},
		"document without kind": {files: map[string]string{"x.yaml": "foo: bar\n"}, wantErr: "x.yaml: document 1 (line 1): apiVersion: not a Kubernetes object"},
		"bad owner policy":      {files: map[string]string{"x.yaml": goodFLApp}, opts: RenderOptions{OwnerReferences: "Always"}, wantErr: "--owner-references must be one of IfKnown, Required, Never"},
		"owner required":        {files: map[string]string{"x.yaml": goodFLApp}, opts: RenderOptions{OwnerReferences: "Required"}, wantErr: "metadata.uid: Required value: ownerReferences is Required"},
		"missing path":          {opts: RenderOptions{Paths: []string{"/does/not/exist"}}, wantErr: "no such file"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if tt.files != nil {
				tt.opts.Paths = append(tt.opts.Paths, writeFiles(t, tt.files))
			}
			out, stderr, err := runRender(t, tt.opts, "")
			assert.ErrorIs(t, err, ErrFailed)
			assert.Empty(t, out, "nothing on stdout when the render fails")
			assert.Contains(t, stderr, tt.wantErr)
		})
	}
}

func TestRenderBadFLAppNamesFileAndField(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"good.yaml": goodFLApp,
		"bad.yaml":  strings.Replace(strings.Replace(goodFLApp, "name: normal", "name: bad.name", 1), "Leader", "Boss", 1),
	})
	out, stderr, err := runRender(t, RenderOptions{Paths: []string{dir}}, "")
	assert.ErrorIs(t, err, ErrFailed)
	assert.Empty(t, out)
	assert.Contains(t, stderr, "bad.yaml: document 1 (line 2): FLApp default/bad.name: metadata.name: Invalid value: \"bad.name\"")
	assert.Contains(t, stderr, "bad.yaml: document 1 (line 2): FLApp default/bad.name: spec.role: Invalid value: \"Boss\"")
}

func TestRenderConfigFile(t *testing.T) {
	uid := strings.Replace(goodFLApp, "namespace: default", "namespace: default\n  uid: \"1234\"", 1)
	dir := writeFiles(t, map[string]string{
		"flapp.yaml":  uid,
		"config.yaml": "apiVersion: fn.fedlearner.k8s.io/v1alpha1\nkind: FLAppServices\nmetadata: {name: c}\nspec:\n  ownerReferences: Never\n",
	})
	cfg := filepath.Join(dir, "config.yaml")
	out, stderr, err := runRender(t, RenderOptions{Config: cfg, Paths: []string{dir}}, "")
	require.NoError(t, err, stderr)
	assert.NotContains(t, out, "ownerReferences")
	assert.NotContains(t, out, "FLAppServices", "the config file is not part of the render")

	out, stderr, err = runRender(t, RenderOptions{Config: cfg, OwnerReferences: "IfKnown", Paths: []string{dir}}, "")
	require.NoError(t, err, stderr)
	assert.Contains(t, out, "uid: \"1234\"", "the flag overrides the config")

	bad := filepath.Join(dir, "bad-config.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("apiVersion: v1\nkind: ConfigMap\ndata: {maxService: \"3\"}\n"), 0o644))
	out, stderr, err = runRender(t, RenderOptions{Config: bad, Paths: []string{filepath.Join(dir, "flapp.yaml")}}, "")
	assert.ErrorIs(t, err, ErrFailed)
	assert.Empty(t, out)
	assert.Contains(t, stderr, "unknown setting(s) maxService;")
}

func TestRenderOwnOutputIsFixedPoint(t *testing.T) {
	dir := writeFiles(t, map[string]string{"flapp.yaml": goodFLApp})
	first, _, err := runRender(t, RenderOptions{Paths: []string{dir}}, "")
	require.NoError(t, err)
	second, stderr, err := runRender(t, RenderOptions{Paths: []string{"-"}}, first)
	require.NoError(t, err, stderr)
	assert.Equal(t, first, second)

	// Scaled down: the stale Services in the earlier render are pruned.
	scaled := strings.Replace(first, "replicas: 2", "replicas: 1", 1)
	third, stderr, err := runRender(t, RenderOptions{Paths: []string{"-"}}, scaled)
	require.NoError(t, err, stderr)
	assert.Contains(t, third, "normal-leader-worker-0")
	assert.NotContains(t, third, "normal-leader-worker-1")
}

func TestRenderCheck(t *testing.T) {
	dir := writeFiles(t, map[string]string{"apps/flapp.yaml": goodFLApp})
	t.Chdir(dir) // as CI runs it, from the repository root: --check must lie inside it
	apps := "apps"
	rendered, _, err := runRender(t, RenderOptions{Paths: []string{apps}}, "")
	require.NoError(t, err)
	committed := "rendered.yaml"
	require.NoError(t, os.WriteFile(committed, []byte(rendered), 0o644))

	out, stderr, err := runRender(t, RenderOptions{Check: committed, Paths: []string{apps}}, "")
	require.NoError(t, err, stderr)
	assert.Empty(t, out)
	assert.Empty(t, stderr)

	require.NoError(t, os.WriteFile(filepath.Join(apps, "flapp.yaml"), []byte(strings.Replace(goodFLApp, "replicas: 2", "replicas: 3", 1)), 0o644))
	out, stderr, err = runRender(t, RenderOptions{Check: committed, Paths: []string{apps}}, "")
	assert.ErrorIs(t, err, ErrFailed)
	assert.Empty(t, out)
	assert.Contains(t, stderr, "is out of date")
	assert.Contains(t, stderr, "+  name: normal-leader-worker-2")
	assert.Contains(t, stderr, "-      replicas: 2")
}

// A literal block scalar ending a document that is not its file's last
// keeps its final line break: a script or a certificate must not change.
func TestRenderKeepsALiteralsFinalNewline(t *testing.T) {
	dir := writeFiles(t, map[string]string{"apps.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: script\ndata:\n  run.sh: |\n    echo hi\n---\n" + goodFLApp})
	out, stderr, err := runRender(t, RenderOptions{Paths: []string{dir}}, "")
	require.NoError(t, err, stderr)
	nodes, err := (&kio.ByteReader{Reader: strings.NewReader(out), OmitReaderAnnotations: true}).Read()
	require.NoError(t, err)
	require.Equal(t, "script", nodes[0].GetName())
	data, err := nodes[0].GetString("data.run\\.sh")
	require.NoError(t, err)
	assert.Equal(t, "echo hi\n", data)
}

// --check fails when the committed file is a strict prefix of the fresh
// render: the Services it lacks would otherwise be applied without review.
func TestRenderCheckRefusesAPrefix(t *testing.T) {
	dir := writeFiles(t, map[string]string{"apps/flapp.yaml": goodFLApp})
	t.Chdir(dir)
	fresh, _, err := runRender(t, RenderOptions{Paths: []string{"apps"}}, "")
	require.NoError(t, err)
	lastService := strings.LastIndex(fresh, "---\n")
	require.Contains(t, fresh[lastService:], "name: normal-leader-worker-1")

	for name, committed := range map[string]string{
		"the last Service missing": fresh[:lastService],
		"the last line break gone": strings.TrimSuffix(fresh, "\n"),
		"empty":                    "",
	} {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, os.WriteFile("rendered.yaml", []byte(committed), 0o644))
			code, out, stderr := runMain([]string{"render", "--check", "rendered.yaml", "apps"}, "")
			assert.Equal(t, 1, code)
			assert.Empty(t, out)
			assert.Contains(t, stderr, "rendered.yaml is out of date")
		})
	}
	require.NoError(t, os.WriteFile("rendered.yaml", []byte(fresh[:lastService]), 0o644))
	_, _, stderr := runMain([]string{"render", "--check", "rendered.yaml", "apps"}, "")
	assert.Contains(t, stderr, "+  name: normal-leader-worker-1", "the diff shows the missing Service")
}

// --check follows a symlink only while it stays inside the current
// directory or a PATH: a link out of the tree is refused, naming the link,
// before anything is read (here the file it leads to is the current render,
// so reading it would pass).
func TestRenderCheckThroughALinkOutOfTheTree(t *testing.T) {
	root := writeFiles(t, map[string]string{"repo/apps/flapp.yaml": goodFLApp})
	t.Chdir(filepath.Join(root, "repo"))
	fresh, _, err := runRender(t, RenderOptions{Paths: []string{"apps"}}, "")
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll("../outside", 0o755))
	require.NoError(t, os.WriteFile("../outside/rendered.yaml", []byte(fresh), 0o644))
	require.NoError(t, os.WriteFile("rendered.yaml", []byte(fresh), 0o644))
	require.NoError(t, os.Symlink("../outside/rendered.yaml", "out.yaml"))
	require.NoError(t, os.Symlink("rendered.yaml", "in.yaml"))

	code, out, stderr := runMain([]string{"render", "--check", "out.yaml", "apps"}, "")
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Contains(t, stderr, "--check out.yaml is a symlink to ../outside/rendered.yaml, which resolves to ")
	assert.Contains(t, stderr, "outside the current directory and every PATH")
	assert.NotContains(t, stderr, "out of date")

	code, _, stderr = runMain([]string{"render", "--check", "in.yaml", "apps"}, "")
	assert.Equal(t, 0, code, "a link that stays inside is followed: %s", stderr)
}
