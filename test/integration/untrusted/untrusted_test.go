// Package untrusted checks the promises of SECURITY.md on the binary, the
// way Argo CD's plugin and CI run it on a repository anyone can push to:
// no file from outside the rendered tree is read (symlinks), a run is
// bounded (Services, input size), and a Leader/Follower pair whose paired
// replica counts differ is reported.
package untrusted

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	h "github.com/fedlearner/flapp-services/test/integration/internal/harness"
)

func TestMain(m *testing.M) { os.Exit(h.Main(m)) }

const secretMarker = "hunter2-SECRET-MARKER"

const secretObject = "apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: leader}\nstringData: {password: " + secretMarker + "}\n"

// flapp is a minimal valid FLApp with one Worker type.
func flapp(name, namespace, role string, workers int, pair bool) string {
	return fmt.Sprintf(`apiVersion: fedlearner.k8s.io/v1alpha1
kind: FLApp
metadata: {name: %s, namespace: %s}
spec:
  role: %s
  flReplicaSpecs:
    Master: {replicas: 1, template: {spec: {containers: [{name: tensorflow}]}}}
    Worker: {replicas: %d, pair: %t, template: {spec: {containers: [{name: tensorflow}]}}}
`, name, namespace, role, workers, pair)
}

type result struct {
	stdout, stderr string
	exitCode       int
}

// render runs `flapp-services render args...` in dir.
func render(t *testing.T, dir, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.Binary(t), append([]string{"render"}, args...)...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := result{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("render %v did not finish in 2 minutes", args)
	case errors.As(err, &ee):
		res.exitCode = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return res
}

// layout writes files (relative path -> content) and symlinks (relative
// path -> target, as written) under a fresh directory, and returns it.
func layout(t *testing.T, files, links map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, content := range files {
		full := filepath.Join(root, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
	}
	for p, target := range links {
		full := filepath.Join(root, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.Symlink(target, full))
	}
	return root
}

// refused checks a failed render: nothing on stdout, a reason naming each of
// want on stderr, and nothing of the secret anywhere.
func refused(t *testing.T, res result, want ...string) {
	t.Helper()
	assert.Equal(t, 1, res.exitCode, "stderr:\n%s", res.stderr)
	assert.Empty(t, res.stdout, "a refused render prints nothing")
	for _, w := range want {
		assert.Contains(t, res.stderr, w)
	}
	assert.NotContains(t, res.stderr, secretMarker, "the target's content leaked into the error")
}

// The repository is <root>/repo; the secret lives beside it, outside.
var repoFiles = map[string]string{
	"secret.yaml":            secretObject,
	"private/creds.yaml":     secretObject,
	"repo/apps/flapp.yaml":   flapp("normal", "leader", "Leader", 2, true),
	"repo/fn-config.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {ownerReferences: Never}\n",
	"outside-config.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {ownerReferences: " + secretMarker + "}\n",
	"repo/rendered/all.yaml": "",
}

func TestSymlinkOutOfTheTreeIsRefused(t *testing.T) {
	tests := map[string]struct {
		links map[string]string
		args  []string
		want  []string
	}{
		"file link": {
			links: map[string]string{"repo/apps/link.yaml": "../../secret.yaml"},
			args:  []string{"apps"}, want: []string{"apps/link.yaml", "../../secret.yaml"},
		},
		"absolute file link": {
			links: map[string]string{"repo/apps/link.yaml": "/etc/hostname"},
			args:  []string{"apps"}, want: []string{"apps/link.yaml", "/etc/hostname"},
		},
		"chain of links, the last one leaving": {
			links: map[string]string{ // the hops are not manifests: only link.yaml is read
				"repo/apps/link.yaml":    "hops/one.txt",
				"repo/apps/hops/one.txt": "two.txt",
				"repo/apps/hops/two.txt": "../../../secret.yaml",
			},
			args: []string{"apps"}, want: []string{"apps/link.yaml", "hops/one.txt"},
		},
		"directory link": {
			links: map[string]string{"repo/apps/vendor": "../../private"},
			args:  []string{"apps"}, want: []string{"apps/vendor", "../../private"},
		},
		"link inside the tree to a link out": {
			links: map[string]string{"repo/apps/inner": "../outer", "repo/outer": "../private"},
			args:  []string{"apps"}, want: []string{"apps/inner", "../outer"},
		},
		"the PATH itself is a link out": {
			links: map[string]string{"repo/deploy": "../private"},
			args:  []string{"deploy"}, want: []string{"deploy", "../private"},
		},
		"a file PATH is a link out": {
			links: map[string]string{"repo/apps/other.yaml": "../../secret.yaml"},
			args:  []string{"apps/other.yaml"}, want: []string{"apps/other.yaml", "../../secret.yaml"},
		},
		"a link to a sibling PATH is outside its own PATH": {
			links: map[string]string{"repo/team-b/shared.yaml": "../apps/flapp.yaml"},
			args:  []string{"team-b"}, want: []string{"team-b/shared.yaml", "../apps/flapp.yaml"},
		},
		"--config through a link": {
			links: map[string]string{"repo/cfg.yaml": "../outside-config.yaml"},
			args:  []string{"--config", "cfg.yaml", "apps"}, want: []string{"cfg.yaml", "../outside-config.yaml"},
		},
		"--config outside the current directory and the PATHs": {
			args: []string{"--config", "../outside-config.yaml", "apps"}, want: []string{"--config", "../outside-config.yaml"},
		},
		"--check through a link": {
			links: map[string]string{"repo/rendered/old.yaml": "../../secret.yaml"},
			args:  []string{"--check", "rendered/old.yaml", "apps"}, want: []string{"rendered/old.yaml", "../../secret.yaml"},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			root := layout(t, repoFiles, tt.links)
			res := render(t, filepath.Join(root, "repo"), "", tt.args...)
			refused(t, res, tt.want...)
			assert.Contains(t, res.stderr, "--load-restrictor", "the error says how to lift the restriction")
		})
	}
}

func TestSymlinksInsideTheTreeAreFollowed(t *testing.T) {
	// A common layout: the live version is a link into a hidden store.
	root := layout(t, map[string]string{
		"repo/apps/.versions/v2/flapp.yaml": flapp("versioned", "leader", "Leader", 1, false),
		"repo/apps/.store/cm.txt":           "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: linked, namespace: leader}\n",
	}, map[string]string{
		"repo/apps/current":         ".versions/v2",
		"repo/apps/configmap.yaml":  ".store/cm.txt",
		"repo/apps/chain.yaml":      "hop.yml",
		"repo/apps/hop.yml":         "configmap.yaml",
		"repo/apps/nested/up.yaml":  "../.store/cm.txt",
		"repo/apps/nested/x/y.yaml": "../../.store/cm.txt",
	})
	res := render(t, filepath.Join(root, "repo"), "", "apps/current", "apps/configmap.yaml")
	require.Equal(t, 0, res.exitCode, res.stderr)
	assert.Contains(t, res.stdout, "name: versioned-leader-master-0", "the FLApp behind the directory link was rendered")
	assert.Contains(t, res.stdout, "name: linked")

	res = render(t, filepath.Join(root, "repo"), "", "apps")
	require.Equal(t, 0, res.exitCode, res.stderr)
	assert.Contains(t, res.stdout, "name: versioned-leader-master-0", "a directory link inside the PATH is walked")
	assert.Equal(t, 5, strings.Count(res.stdout, "name: linked"), "each file link inside the PATH is read (chain.yaml, configmap.yaml, hop.yml, nested/up.yaml, nested/x/y.yaml):\n%s", res.stdout)
}

func TestSymlinkLoopsAreErrors(t *testing.T) {
	tests := map[string]struct {
		links map[string]string
		want  []string
	}{
		"file loop":             {map[string]string{"repo/apps/a.yaml": "b.yaml", "repo/apps/b.yaml": "a.yaml"}, []string{"apps/a.yaml", "loop"}},
		"directory to .":        {map[string]string{"repo/apps/here": "."}, []string{"apps/here", "loop"}},
		"directory to ..":       {map[string]string{"repo/apps/sub/up": ".."}, []string{"apps/sub/up", "loop"}},
		"directories in a ring": {map[string]string{"repo/apps/x/to-y": "../y", "repo/apps/y/to-x": "../x"}, []string{"loop"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			root := layout(t, repoFiles, tt.links)
			done := make(chan result, 1)
			go func() { done <- render(t, filepath.Join(root, "repo"), "", "apps") }()
			select {
			case res := <-done:
				refused(t, res, tt.want...)
			case <-time.After(90 * time.Second):
				t.Fatal("render did not come back: a symlink loop must be an error, not a hang")
			}
		})
	}
}

func TestLoadRestrictorNoneLiftsTheRestriction(t *testing.T) {
	root := layout(t, repoFiles, map[string]string{
		"repo/apps/link.yaml": "../../secret.yaml",
		"repo/cfg.yaml":       "../outside-config.yaml",
	})
	repo := filepath.Join(root, "repo")
	res := render(t, repo, "", "--load-restrictor=LoadRestrictionsNone", "apps")
	require.Equal(t, 0, res.exitCode, res.stderr)
	assert.Contains(t, res.stdout, secretMarker, "a trusted tree may link anywhere")

	res = render(t, repo, "", "--load-restrictor", "LoadRestrictionsRootOnly", "apps")
	refused(t, res, "apps/link.yaml")

	res = render(t, repo, "", "--load-restrictor", "Sometimes", "apps")
	refused(t, res, "LoadRestrictionsRootOnly", "LoadRestrictionsNone")

	// Loops stay errors without the restriction.
	root = layout(t, repoFiles, map[string]string{"repo/apps/sub/up": ".."})
	res = render(t, filepath.Join(root, "repo"), "", "--load-restrictor=LoadRestrictionsNone", "apps")
	refused(t, res, "loop")
}

func TestStdinIsUnaffected(t *testing.T) {
	root := layout(t, repoFiles, map[string]string{"repo/apps/link.yaml": "../../secret.yaml"})
	res := render(t, filepath.Join(root, "repo"), flapp("piped", "leader", "Leader", 1, false), "-")
	require.Equal(t, 0, res.exitCode, res.stderr)
	assert.Contains(t, res.stdout, "name: piped-leader-worker-0")
}

// manyFLApps writes n FLApps of `replicas` Workers each (plus one Master).
func manyFLApps(n, replicas int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "---\napiVersion: fedlearner.k8s.io/v1alpha1\nkind: FLApp\nmetadata: {name: big%02d, namespace: default}\n"+
			"spec: {role: Leader, flReplicaSpecs: {Worker: {replicas: %d, template: {spec: {containers: [{name: tensorflow}]}}}}}\n", i, replicas-i)
	}
	return b.String()
}

func TestServiceCeilingPerRun(t *testing.T) {
	// 40 FLApps just under 10,000 replicas each (a
	// 10 kB file) would make about 400,000 Services.
	root := layout(t, map[string]string{"apps/big.yaml": manyFLApps(40, 10000)}, nil)
	res := render(t, root, "", "apps")
	refused(t, res, "maxServices", "100000", "399220",
		"default/big00 (10000)", "default/big01 (9999)", "default/big02 (9998)")
	assert.Less(t, len(res.stderr), 4096, "one short error, not one per FLApp")

	t.Run("flag", func(t *testing.T) {
		root := layout(t, map[string]string{"apps/basic.yaml": flapp("a", "x", "Leader", 3, false) + "---\n" + flapp("b", "x", "Leader", 2, false)}, nil)
		res := render(t, root, "", "--max-services", "6", "apps") // 4 + 3 = 7 Services
		refused(t, res, "maxServices", "7", "6", "x/a (4)", "x/b (3)")
		res = render(t, root, "", "--max-services", "7", "apps")
		assert.Equal(t, 0, res.exitCode, res.stderr)
		assert.Equal(t, 7, strings.Count(res.stdout, "kind: Service\n"))
		res = render(t, root, "", "--max-services", "0", "apps")
		refused(t, res, "--max-services")
	})
	for _, cfg := range []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {maxServices: \"6\"}\n",
		"apiVersion: fn.fedlearner.k8s.io/v1alpha1\nkind: FLAppServices\nmetadata: {name: cfg}\nspec: {maxServices: 6}\n",
	} {
		t.Run("config "+strings.Fields(cfg)[3], func(t *testing.T) {
			root := layout(t, map[string]string{
				"apps/basic.yaml": flapp("a", "x", "Leader", 3, false) + "---\n" + flapp("b", "x", "Leader", 2, false),
				"cfg.yaml":        cfg,
			}, nil)
			res := render(t, root, "", "--config", "cfg.yaml", "apps")
			refused(t, res, "maxServices (6)", "x/a (4)")
			res = render(t, root, "", "--config", "cfg.yaml", "--max-services", "7", "apps")
			assert.Equal(t, 0, res.exitCode, "the flag overrides the config: %s", res.stderr)
		})
	}
}

func TestServiceCeilingKRM(t *testing.T) {
	var rl strings.Builder
	rl.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	for i := 0; i < 12; i++ {
		fmt.Fprintf(&rl, "- {apiVersion: fedlearner.k8s.io/v1alpha1, kind: FLApp, metadata: {name: big%02d, namespace: default}, "+
			"spec: {role: Leader, flReplicaSpecs: {Worker: {replicas: %d, template: {spec: {containers: [{name: tensorflow}]}}}}}}\n", i, 10000-i)
	}
	cmd := exec.Command(h.Binary(t))
	cmd.Stdin = strings.NewReader(rl.String())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "12 FLApps of about 10,000 Services: over the default 100,000")
	assert.Equal(t, 1, ee.ExitCode())
	assert.Contains(t, stdout.String(), "severity: error")
	assert.Contains(t, stdout.String(), "maxServices (100000)")
	assert.Contains(t, stderr.String(), "default/big00 (10000)")
	assert.NotContains(t, stdout.String(), "kind: Service\n", "no Service was generated")
}

func TestInputSizeCeilings(t *testing.T) {
	// A huge comment costs nothing to parse: only the ceiling can stop it.
	big := "# " + strings.Repeat("x", 9<<20) + "\n" + flapp("a", "x", "Leader", 1, false)
	t.Run("default per file", func(t *testing.T) {
		root := layout(t, map[string]string{"apps/big.yaml": big, "apps/ok.yaml": flapp("b", "x", "Leader", 1, false)}, nil)
		res := render(t, root, "", "apps")
		refused(t, res, "apps/big.yaml", "--max-file-size", "8Mi")
	})
	t.Run("stdin", func(t *testing.T) {
		res := render(t, t.TempDir(), big, "-")
		refused(t, res, "<stdin>", "--max-file-size")
	})
	t.Run("flags", func(t *testing.T) {
		root := layout(t, map[string]string{
			"apps/a.yaml": flapp("a", "x", "Leader", 1, false),
			"apps/b.yaml": flapp("b", "x", "Leader", 1, false),
			"apps/c.yaml": flapp("c", "x", "Leader", 1, false),
		}, nil)
		size := len(flapp("a", "x", "Leader", 1, false))
		res := render(t, root, "", "--max-file-size", fmt.Sprint(size-1), "apps")
		refused(t, res, "apps/a.yaml", "--max-file-size")
		res = render(t, root, "", "--max-input-size", fmt.Sprint(2*size+1), "apps")
		refused(t, res, "--max-input-size", "apps/c.yaml")
		res = render(t, root, "", "--max-input-size", "4Ki", "--max-file-size", "1Ki", "apps")
		assert.Equal(t, 0, res.exitCode, res.stderr)
		res = render(t, root, "", "--max-input-size", "lots", "apps")
		refused(t, res, "--max-input-size")
	})
	t.Run("a device is read no further than the ceiling", func(t *testing.T) {
		root := layout(t, nil, map[string]string{"apps/zero.yaml": "/dev/zero"})
		done := make(chan result, 1)
		go func() {
			done <- render(t, root, "", "--load-restrictor=LoadRestrictionsNone", "--max-file-size", "1Mi", "apps")
		}()
		select {
		case res := <-done:
			refused(t, res, "apps/zero.yaml")
		case <-time.After(90 * time.Second):
			t.Fatal("reading /dev/zero did not stop at the ceiling")
		}
	})
}

func TestObjectCeiling(t *testing.T) {
	// 250,000 empty documents (1.75 MB), over --max-objects: refused before
	// they are parsed (SECURITY.md, Known limits, has what a flood costs).
	root := layout(t, map[string]string{"apps/flood.yaml": strings.Repeat("---\n{}\n", 250000)}, nil)
	res := render(t, root, "", "apps")
	refused(t, res, "apps/flood.yaml", "--max-objects", "200000")

	three := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n---\n" +
		flapp("c", "x", "Leader", 1, false)
	list := "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\n"
	root = layout(t, map[string]string{"docs/three.yaml": three, "list/list.yaml": list}, nil)
	refused(t, render(t, root, "", "--max-objects", "2", "docs"), "docs/three.yaml", "--max-objects")
	refused(t, render(t, root, "", "--max-objects", "2", "list"), "list/list.yaml", "3 objects", "--max-objects")
	res = render(t, root, "", "--max-objects", "3", "docs")
	assert.Equal(t, 0, res.exitCode, res.stderr)
	refused(t, render(t, root, "", "--max-objects", "0", "docs"), "--max-objects")
}

func TestPairCheckWarns(t *testing.T) {
	root := layout(t, map[string]string{
		"leader/job.yaml":   flapp("job", "party-a", "Leader", 2, true),
		"follower/job.yaml": flapp("job", "party-b", "Follower", 3, true),
		"other/solo.yaml":   flapp("solo", "party-a", "Leader", 5, true),
	}, nil)
	res := render(t, root, "", ".")
	require.Equal(t, 0, res.exitCode, "a mismatch is a warning, not an error: %s", res.stderr)
	assert.Contains(t, res.stdout, "name: job-follower-worker-2", "the render is complete")
	lines := strings.Split(strings.TrimSpace(res.stderr), "\n")
	require.Len(t, lines, 1, "one warning line:\n%s", res.stderr)
	for _, w := range []string{"warning", "party-a/job", "party-b/job", "Worker", "2", "3"} {
		assert.Contains(t, lines[0], w)
	}
	assert.NotContains(t, res.stderr, "Master", "Master is not paired")

	t.Run("equal counts, no warning", func(t *testing.T) {
		root := layout(t, map[string]string{
			"leader/job.yaml":    flapp("job", "party-a", "Leader", 2, true),
			"follower/job.yaml":  flapp("job", "party-b", "Follower", 2, true),
			"follower2/job.yaml": flapp("job", "party-c", "Follower2", 2, true),
		}, nil)
		res := render(t, root, "", ".")
		require.Equal(t, 0, res.exitCode, res.stderr)
		assert.Empty(t, res.stderr)
	})
	t.Run("unpaired types may differ", func(t *testing.T) {
		root := layout(t, map[string]string{
			"leader/job.yaml":   flapp("job", "party-a", "Leader", 2, false),
			"follower/job.yaml": flapp("job", "party-b", "Follower", 3, false),
		}, nil)
		res := render(t, root, "", ".")
		require.Equal(t, 0, res.exitCode, res.stderr)
		assert.Empty(t, res.stderr)
	})
}

// The render holds itself to a memory ceiling by construction (--max-memory,
// read from the Go runtime every 10 ms): a few kilobytes of JSON-patch copy
// operations, each doubling a ConfigMap's data, stop at the ceiling with
// exit 1 and nothing on stdout, where they would take the sidecar past its
// container's limit. At its default the same render of an
// ordinary repository passes.
func TestMemoryCeilingStopsTheRender(t *testing.T) {
	var ops strings.Builder
	for i := range 40 {
		fmt.Fprintf(&ops, "    - op: copy\n      from: /data\n      path: /data/d%d\n", i)
	}
	root := layout(t, map[string]string{
		"kustomization.yaml": "resources: [cm.yaml]\npatches:\n- target: {kind: ConfigMap}\n  patch: |-\n" + ops.String(),
		"cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n  a: " + strings.Repeat("x", 100_000) + "\n",
	}, nil)
	refused(t, render(t, root, "", "--max-memory", "128Mi", "."),
		"error: flapp-services passed its memory ceiling of 128Mi (render's --max-memory) and was stopped")
	// The CPU time of the whole render, a ceiling of 1 ms: passed before the
	// first document is read.
	refused(t, render(t, root, "", "--max-cpu-time", "1ms", "."),
		"error: flapp-services passed its CPU time ceiling of 1ms (render's --max-cpu-time) and was stopped")

	ok := layout(t, map[string]string{"apps/flapp.yaml": flapp("normal", "leader", "Leader", 2, true)}, nil)
	res := render(t, ok, "", "apps")
	assert.Equal(t, 0, res.exitCode, res.stderr)
}
