package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fedlearner/flapp-services/internal/yamlnodes"
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

// pairedFLApp is an FLApp document; each type is "Name:replicas", in the
// order the document lists them, every one paired.
func pairedFLApp(namespace, name, role string, types ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s/%s\napiVersion: fedlearner.k8s.io/v1alpha1\nkind: FLApp\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  role: %s\n  flReplicaSpecs:\n", namespace, name, name, namespace, role)
	for _, typ := range types {
		typeName, replicas, _ := strings.Cut(typ, ":")
		fmt.Fprintf(&b, "    %s:\n      pair: true\n      replicas: %s\n      template: {spec: {containers: [{name: tensorflow}]}}\n", typeName, replicas)
	}
	return b.String()
}

// The output is every input object as it was written, in the order read
// (PATHs in the order given, a directory's files in lexical order, a file's
// documents in order), then the generated Services, which are the same
// bytes however the input is ordered: sorted by namespace, FLApp name,
// replica type and index (numerically: worker-10 after worker-9). The pair
// warnings are the same whatever the order; they are sorted by the file
// they name (kyaml's Results.Sort), so for the same files stderr is the
// same bytes in any PATH order.
func TestRenderIndependentOfInputOrder(t *testing.T) {
	var (
		leader    = pairedFLApp("team-b", "job", "Leader", "Worker:11", "Master:1")
		followerA = pairedFLApp("team-a", "job", "Follower", "Worker:2")
		followerC = pairedFLApp("team-c", "job", "Follower", "Worker:3")
		alpha     = pairedFLApp("team-a", "alpha", "Leader", "Worker:2", "PS:1")
		zeta      = pairedFLApp("default", "zeta", "Follower", "Worker:1")
		settings  = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: team-a\ndata: {a: b}\n"
	)
	services := []string{
		"Service/default/zeta-follower-worker-0",
		"Service/team-a/alpha-leader-ps-0", "Service/team-a/alpha-leader-worker-0", "Service/team-a/alpha-leader-worker-1",
		"Service/team-a/job-follower-worker-0", "Service/team-a/job-follower-worker-1",
		"Service/team-b/job-leader-master-0",
		"Service/team-b/job-leader-worker-0", "Service/team-b/job-leader-worker-1", "Service/team-b/job-leader-worker-2",
		"Service/team-b/job-leader-worker-3", "Service/team-b/job-leader-worker-4", "Service/team-b/job-leader-worker-5",
		"Service/team-b/job-leader-worker-6", "Service/team-b/job-leader-worker-7", "Service/team-b/job-leader-worker-8",
		"Service/team-b/job-leader-worker-9", "Service/team-b/job-leader-worker-10",
		"Service/team-c/job-follower-worker-0", "Service/team-c/job-follower-worker-1", "Service/team-c/job-follower-worker-2",
	}
	warnings := []string{ // each follower whose count differs from its leader's, by namespace, then type
		"FLApp team-a/job: spec.flReplicaSpecs[Master].replicas: paired replica type Master has 1 replica in Leader FLApp team-b/job but no replicas (the type is missing) in Follower FLApp team-a/job",
		"FLApp team-a/job: spec.flReplicaSpecs[Worker].replicas: paired replica type Worker has 11 replicas in Leader FLApp team-b/job but 2 replicas in Follower FLApp team-a/job",
		"FLApp team-c/job: spec.flReplicaSpecs[Master].replicas: paired replica type Master has 1 replica in Leader FLApp team-b/job but no replicas (the type is missing) in Follower FLApp team-c/job",
		"FLApp team-c/job: spec.flReplicaSpecs[Worker].replicas: paired replica type Worker has 11 replicas in Leader FLApp team-b/job but 3 replicas in Follower FLApp team-c/job",
	}
	groups := [][]string{{leader, settings}, {followerA, zeta}, {followerC}, {alpha}}

	var tail string // the Services of the first render
	check := func(t *testing.T, name string, paths []string, stdin string, read []string) (stderr string) {
		t.Helper()
		out, stderr, err := runRender(t, RenderOptions{Paths: paths}, stdin)
		require.NoError(t, err, "%s: %s", name, stderr)
		inputs := strings.Join(read, "---\n") + "---\n"
		require.True(t, strings.HasPrefix(out, inputs), "%s: the input objects, as written, in the order read:\n%s", name, out)
		svcs := out[len(inputs):]
		if tail == "" {
			require.Equal(t, services, objects(t, svcs), name)
			tail = svcs
		}
		assert.Equal(t, tail, svcs, "%s: the Services depend on the input order", name)
		var got []string
		for _, line := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
			_, warning, ok := strings.Cut(line, ": FLApp ")
			require.True(t, ok && strings.HasPrefix(line, "warning: "), "%s: %q", name, line)
			got = append(got, "FLApp "+strings.TrimSuffix(warning, ": the operator pairs them one to one and the leader waits for the follower until both counts are equal"))
		}
		assert.ElementsMatch(t, warnings, got, name)
		return stderr
	}

	// PATHs in every order: files, a directory and stdin, each file's
	// documents forwards and backwards.
	for _, backwards := range []bool{false, true} {
		docs := make([][]string, len(groups))
		for i, g := range groups {
			docs[i] = slices.Clone(g)
			if backwards {
				slices.Reverse(docs[i])
			}
		}
		dir := writeFiles(t, map[string]string{"x.yaml": strings.Join(docs[0], "---\n"), "y.yaml": strings.Join(docs[1], "---\n"), "sub/z.yaml": strings.Join(docs[2], "---\n")})
		paths := []string{filepath.Join(dir, "x.yaml"), filepath.Join(dir, "y.yaml"), filepath.Join(dir, "sub"), "-"}
		var stderr string
		for _, order := range permutations(len(paths)) {
			var ps []string
			var read []string
			for _, i := range order {
				ps = append(ps, paths[i])
				read = append(read, docs[i]...)
			}
			name := fmt.Sprintf("backwards %v, PATHs %v", backwards, order)
			got := check(t, name, ps, strings.Join(docs[3], "---\n"), read)
			if stderr == "" {
				stderr = got
			}
			assert.Equal(t, stderr, got, name)
		}
	}

	// One directory, the groups in files of every lexical order.
	names := []string{"a.yaml", "b.yml", "c/d.yaml", "e.yaml"}
	for _, order := range permutations(len(groups)) {
		files := map[string]string{}
		read := make([][]string, len(groups))
		for i, g := range order { // group g in the i-th file
			files[names[i]] = strings.Join(groups[g], "---\n")
			read[i] = groups[g]
		}
		check(t, fmt.Sprintf("files %v", order), []string{writeFiles(t, files)}, "", slices.Concat(read...))
	}
}

// permutations are every order of 0..n-1.
func permutations(n int) [][]int {
	if n == 0 {
		return [][]int{{}}
	}
	var all [][]int
	for _, p := range permutations(n - 1) {
		for i := 0; i <= len(p); i++ {
			all = append(all, slices.Insert(slices.Clone(p), i, n-1))
		}
	}
	return all
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
	var stdout, stderrAll bytes.Buffer
	code := Main("test", []string{"render", "--check", committed, apps}, strings.NewReader(""), &stdout, &stderrAll)
	assert.Equal(t, 1, code)
	assert.Empty(t, stdout.String())
	stderr = stderrAll.String()
	assert.True(t, strings.HasPrefix(stderr, "error: rendered.yaml is out of date"), stderr)
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
	assert.Contains(t, stderr, "--check out.yaml is a symlink to ../outside/rendered.yaml, which does not lead to a file inside the current directory and every PATH")
	assert.NotContains(t, stderr, "resolves to", "the path it resolves to is not named")
	assert.NotContains(t, stderr, "out of date")

	code, _, stderr = runMain([]string{"render", "--check", "in.yaml", "apps"}, "")
	assert.Equal(t, 0, code, "a link that stays inside is followed: %s", stderr)
}

// --config has the node ceilings of any input, at and one past them, by
// its bytes before it is parsed and by its expanded aliases after.
func TestRenderConfigFileNodeCeilings(t *testing.T) {
	// Annotations make it larger than the FLApp, which the same
	// ceilings hold.
	config := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations:\n" + strings.Repeat("    a: b\n", 40) + "data: {ownerReferences: Never}\n"
	dir := writeFiles(t, map[string]string{
		"flapp.yaml":  goodFLApp,
		"config.yaml": config,
		// Few bytes, many nodes once the aliases are expanded.
		"aliases.yaml": config + "x: &a [1, 2, 3, 4, 5, 6, 7, 8]\ny: &b [*a, *a, *a, *a, *a, *a, *a, *a]\nz: [*b, *b, *b, *b, *b, *b, *b, *b]\n",
	})
	flapp := filepath.Join(dir, "flapp.yaml")
	bound := yamlnodes.Bound(config)
	for _, c := range []struct {
		file          string
		docNodes, obj int
		refusal       string
	}{
		{"config.yaml", bound, 0, ""},
		{"config.yaml", bound - 1, 0, fmt.Sprintf("may hold up to %d YAML nodes, over the ceiling of %d (--max-document-nodes)", bound, bound-1)},
		{"aliases.yaml", 0, 765, ""}, // 1 map; config 94 (metadata 86); x 10; y 2+8*9; z 2+8*73
		{"aliases.yaml", 0, 764, "has over 764 YAML nodes (--max-object-nodes)"},
	} {
		out, stderr, err := runRender(t, RenderOptions{Config: filepath.Join(dir, c.file), Paths: []string{flapp},
			MaxDocumentNodes: c.docNodes, MaxObjectNodes: c.obj}, "")
		if c.refusal == "" {
			require.NoError(t, err, stderr)
			continue
		}
		assert.ErrorIs(t, err, ErrFailed)
		assert.Empty(t, out)
		assert.Contains(t, stderr, c.refusal)
	}
}
