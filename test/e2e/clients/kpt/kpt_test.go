// Package kpt runs the real kpt v1.0.0-beta.61 (built by hack/build-kpt.sh)
// on examples/kpt and on test packages, with the function both as an
// `image:` (run by podman, the image built by `make image`) and as an
// `exec:` (the very binary that image packs, --allow-exec).
package kpt

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fedlearner/flapp-services/test/e2e/clients/internal/engine"
)

const examplePkg = "examples/kpt/mnist"

var env struct {
	engine.Suite        // the image examples/kpt/mnist names, and a work folder
	kpt          string // the kpt binary
}

func TestMain(m *testing.M) {
	flag.Parse()
	// The example runs verbatim: the image is built under the name its
	// Kptfile uses, as its README says.
	os.Exit(engine.RunSuite(m, "clients/kpt", examplePkg+"/Kptfile", imageLine,
		func() (err error) { env.kpt, err = buildKpt(); return err }, &env.Suite))
}

// buildKpt runs hack/build-kpt.sh (cached; logs its progress) and returns the
// path it prints last.
func buildKpt() (string, error) {
	cmd := exec.Command("bash", filepath.Join(engine.Repo(), "test/e2e/hack/build-kpt.sh"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("hack/build-kpt.sh: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1], nil
}

// imageLine finds the image the example Kptfile runs.
var imageLine = regexp.MustCompile(`(?m)^    - image: (\S+)$`)

// mode is how kpt runs the function.
type mode struct {
	name     string
	mutator  string   // the Kptfile's mutator line (without "- ")
	flags    []string // extra `kpt fn render` flags
	extraEnv []string
}

func modes() []mode {
	return []mode{
		{
			name:     "image",
			mutator:  "image: " + env.Image.Name,
			flags:    []string{"--image-pull-policy", "never"},
			extraEnv: []string{"KRM_FN_RUNTIME=podman"},
		},
		{
			name:    "exec",
			mutator: "exec: " + env.Image.Binary,
			flags:   []string{"--allow-exec"},
		},
	}
}

// render runs `kpt fn render PKG` from dir.
func render(t *testing.T, m mode, dir, pkg string) engine.Result {
	t.Helper()
	args := append([]string{"fn", "render", pkg}, m.flags...)
	return engine.Run(t, dir, m.extraEnv, nil, env.kpt, args...)
}

func mustRender(t *testing.T, m mode, dir, pkg string) {
	t.Helper()
	res := render(t, m, dir, pkg)
	require.Equal(t, 0, res.ExitCode, "kpt fn render %s (%s) failed:\n%s\n%s", pkg, m.name, res.Stdout, res.Stderr)
	if m.name == "image" {
		require.Contains(t, res.Stdout+res.Stderr, `[PASS] "`+env.Image.Name+`"`, "kpt ran the image")
	}
}

// writePkg lays out a kpt package: a Kptfile running the function as m says,
// the function config, and files (relative path -> content).
func writePkg(t *testing.T, m mode, files map[string]string) string {
	t.Helper()
	pkg := filepath.Join(t.TempDir(), "pkg")
	all := map[string]string{
		"Kptfile": `apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: pkg
  annotations:
    config.kubernetes.io/local-config: "true"
pipeline:
  mutators:
    - ` + m.mutator + `
      configPath: fn-config.yaml
`,
		"fn-config.yaml": `apiVersion: fn.fedlearner.k8s.io/v1alpha1
kind: FLAppServices
metadata:
  name: flapp-services
  annotations:
    config.kubernetes.io/local-config: "true"
spec:
  ownerReferences: Never
`,
	}
	for k, v := range files {
		all[k] = v
	}
	for rel, content := range all {
		writeFile(t, filepath.Join(pkg, rel), content)
	}
	return pkg
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

// flapp is an FLApp with a Master and `workers` Workers, formatted as kpt
// writes YAML (so that a render leaves the file byte for byte as it was).
func flapp(name, namespace, role string, workers int) string {
	return fmt.Sprintf(`apiVersion: fedlearner.k8s.io/v1alpha1
kind: FLApp
metadata:
  name: %s
  namespace: %s
spec:
  role: %s
  peerSpecs:
    Peer:
      peerURL: peer.example.com:443
  flReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
          - name: tensorflow
            image: fedlearner/fedlearner:v2.3.0
            ports:
            - name: flapp-port
              containerPort: 50051
    Worker:
      replicas: %d
      template:
        spec:
          containers:
          - name: tensorflow
            image: fedlearner/fedlearner:v2.3.0
            ports:
            - name: flapp-port
              containerPort: 50051
            - name: tf-port
              containerPort: 50052
`, name, namespace, role, workers)
}

// doc is one YAML document of a file, with the name and namespace of the
// Service it holds.
type doc struct{ ns, name, text string }

var (
	nameRe = regexp.MustCompile(`(?m)^  name: (\S+)$`)
	nsRe   = regexp.MustCompile(`(?m)^  namespace: (\S+)$`)
	kindRe = regexp.MustCompile(`(?m)^kind: (\S+)$`)
)

// services splits a file written by kpt into its Service documents.
func services(t *testing.T, file string) []doc {
	t.Helper()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	var docs []doc
	for _, part := range strings.Split(string(b), "\n---\n") {
		k := kindRe.FindStringSubmatch(part)
		require.NotNil(t, k, "%s: a document without kind:\n%s", file, part)
		require.Equal(t, "Service", k[1], "%s holds a %s", file, k[1])
		d := doc{text: strings.TrimRight(part, "\n")}
		if m := nameRe.FindStringSubmatch(part); m != nil {
			d.name = m[1]
		}
		if m := nsRe.FindStringSubmatch(part); m != nil {
			d.ns = m[1]
		}
		docs = append(docs, d)
	}
	return docs
}

func keys(docs []doc) []string {
	var k []string
	for _, d := range docs {
		k = append(k, d.ns+"/"+d.name)
	}
	sort.Strings(k)
	return k
}

func names(ns, prefix string, n int) []string {
	var s []string
	for i := 0; i < n; i++ {
		s = append(s, fmt.Sprintf("%s/%s-%d", ns, prefix, i))
	}
	return s
}

func sorted(parts ...[]string) []string {
	var s []string
	for _, p := range parts {
		s = append(s, p...)
	}
	sort.Strings(s)
	return s
}

// fileNames lists the files of a snapshot.
func fileNames(snap map[string]string) []string {
	var s []string
	for k := range snap {
		s = append(s, k)
	}
	sort.Strings(s)
	return s
}

// The example package, verbatim: it is committed rendered, so a render
// changes no byte; with its Services files deleted, a render writes them
// back exactly as committed. The image form is the committed Kptfile; the
// exec form is the README's development command applied to a copy.
func TestExamplePackage(t *testing.T) {
	committed := engine.Snapshot(t, filepath.Join(engine.Repo(), examplePkg))
	for _, m := range modes() {
		t.Run(m.name, func(t *testing.T) {
			root := t.TempDir()
			pkg := filepath.Join(root, examplePkg)
			engine.CopyTree(t, filepath.Join(engine.Repo(), examplePkg), pkg)
			if m.name == "exec" {
				require.NoError(t, os.MkdirAll(filepath.Join(root, "bin"), 0o755))
				require.NoError(t, os.Symlink(env.Image.Binary, filepath.Join(root, "bin", "flapp-services")))
				line := readmeExecForm(t)
				res := engine.Run(t, root, nil, nil, "bash", "-eo", "pipefail", "-c", line)
				require.Equal(t, 0, res.ExitCode, "%s\n%s", line, res.Stderr)
				require.Contains(t, engine.Snapshot(t, pkg)["Kptfile"], "    - exec: bin/flapp-services\n")
			}
			before := engine.Snapshot(t, pkg)

			mustRender(t, m, root, examplePkg)
			assert.Equal(t, before, engine.Snapshot(t, pkg), "rendering the committed package changed it: re-render %s and commit", examplePkg)

			for _, f := range []string{"leader/mnist.services.yaml", "follower/mnist.services.yaml"} {
				require.NoError(t, os.Remove(filepath.Join(pkg, f)))
			}
			mustRender(t, m, root, examplePkg)
			after := engine.Snapshot(t, pkg)
			assert.Equal(t, before, after, "a render from the FLApps alone must give the committed package")
			assert.Equal(t, committed["leader/mnist.services.yaml"], after["leader/mnist.services.yaml"])
			assert.Equal(t, sorted(names("fl-leader", "mnist-leader-master", 1), names("fl-leader", "mnist-leader-worker", 3)),
				keys(services(t, filepath.Join(pkg, "leader/mnist.services.yaml"))))
			assert.Equal(t, sorted(names("fl-follower", "mnist-follower-master", 1), names("fl-follower", "mnist-follower-worker", 3)),
				keys(services(t, filepath.Join(pkg, "follower/mnist.services.yaml"))))
		})
	}
}

// readmeExecForm is examples/kpt/README.md's one-line switch to exec.
func readmeExecForm(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(engine.Repo(), "examples/kpt/README.md"))
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "perl -pi -e ") && strings.HasSuffix(line, examplePkg+"/Kptfile") {
			return line
		}
	}
	t.Fatal("examples/kpt/README.md: no `perl -pi -e ... examples/kpt/mnist/Kptfile` line")
	return ""
}

// First render: every FLApp gets its Services in <dir>/<name>.services.yaml,
// nothing else changes; a second render changes no byte. Both modes give the
// same bytes.
func TestFirstAndSecondRender(t *testing.T) {
	var outputs []map[string]string
	for _, m := range modes() {
		t.Run(m.name, func(t *testing.T) {
			inputs := map[string]string{
				"team-a/train.yaml":       flapp("train", "team-a", "Leader", 2),
				"team-b/nested/eval.yaml": flapp("eval", "team-b", "Follower", 1),
			}
			pkg := writePkg(t, m, inputs)
			before := engine.Snapshot(t, pkg)

			mustRender(t, m, pkg, ".")
			first := engine.Snapshot(t, pkg)
			assert.Equal(t, []string{"Kptfile", "fn-config.yaml", "team-a/train.services.yaml", "team-a/train.yaml",
				"team-b/nested/eval.services.yaml", "team-b/nested/eval.yaml"}, fileNames(first))
			for f, content := range before {
				assert.Equal(t, content, first[f], "%s changed by the first render", f)
			}
			assert.Equal(t, sorted(names("team-a", "train-leader-master", 1), names("team-a", "train-leader-worker", 2)),
				keys(services(t, filepath.Join(pkg, "team-a/train.services.yaml"))))
			assert.Equal(t, sorted(names("team-b", "eval-follower-master", 1), names("team-b", "eval-follower-worker", 1)),
				keys(services(t, filepath.Join(pkg, "team-b/nested/eval.services.yaml"))))
			for f, content := range first {
				for _, a := range []string{"config.kubernetes.io/path", "config.kubernetes.io/index", "internal.config.kubernetes.io/"} {
					assert.NotContains(t, content, a, "%s: kpt's annotation leaked into the file", f)
				}
			}

			mustRender(t, m, pkg, ".")
			assert.Equal(t, first, engine.Snapshot(t, pkg), "the second render changed bytes")

			delete(first, "Kptfile") // names the mode
			outputs = append(outputs, first)
		})
	}
	if len(outputs) == 2 {
		assert.Equal(t, outputs[0], outputs[1], "image and exec renders differ")
	}
}

// Scale-down removes exactly the out-of-range Services and leaves the others
// byte for byte; deleting an FLApp deletes its Services file.
func TestScaleDownAndDelete(t *testing.T) {
	for _, m := range modes() {
		t.Run(m.name, func(t *testing.T) {
			pkg := writePkg(t, m, map[string]string{
				"jobs/train.yaml": flapp("train", "team-a", "Leader", 4),
				"jobs/eval.yaml":  flapp("eval", "team-a", "Leader", 2),
			})
			mustRender(t, m, pkg, ".")
			file := filepath.Join(pkg, "jobs/train.services.yaml")
			before := services(t, file)
			require.Len(t, before, 5)
			evalBefore := engine.Snapshot(t, pkg)["jobs/eval.services.yaml"]

			writeFile(t, filepath.Join(pkg, "jobs/train.yaml"), flapp("train", "team-a", "Leader", 2))
			mustRender(t, m, pkg, ".")
			after := services(t, file)
			assert.Equal(t, sorted(names("team-a", "train-leader-master", 1), names("team-a", "train-leader-worker", 2)), keys(after))
			var removed []string
			kept := map[string]string{}
			for _, d := range after {
				kept[d.name] = d.text
			}
			for _, d := range before {
				if text, ok := kept[d.name]; ok {
					assert.Equal(t, d.text, text, "%s changed although it stays", d.name)
				} else {
					removed = append(removed, d.name)
				}
			}
			assert.Equal(t, []string{"train-leader-worker-2", "train-leader-worker-3"}, removed)
			assert.Equal(t, evalBefore, engine.Snapshot(t, pkg)["jobs/eval.services.yaml"], "the other FLApp's Services changed")

			require.NoError(t, os.Remove(filepath.Join(pkg, "jobs/eval.yaml")))
			mustRender(t, m, pkg, ".")
			assert.Equal(t, []string{"Kptfile", "fn-config.yaml", "jobs/train.services.yaml", "jobs/train.yaml"},
				fileNames(engine.Snapshot(t, pkg)), "eval's Services file must go with it")
		})
	}
}

// Two FLApps named alike in two namespaces: in two directories, and in one
// directory (their Services then share one file).
func TestSameNameInTwoNamespaces(t *testing.T) {
	layouts := map[string]map[string]string{
		"two directories": {
			"a/mnist.yaml": flapp("mnist", "team-a", "Leader", 2),
			"b/mnist.yaml": flapp("mnist", "team-b", "Leader", 1),
		},
		"one directory": {
			"jobs/mnist-a.yaml": flapp("mnist", "team-a", "Leader", 2),
			"jobs/mnist-b.yaml": flapp("mnist", "team-b", "Leader", 1),
		},
	}
	wantA := sorted(names("team-a", "mnist-leader-master", 1), names("team-a", "mnist-leader-worker", 2))
	wantB := sorted(names("team-b", "mnist-leader-master", 1), names("team-b", "mnist-leader-worker", 1))
	for _, m := range modes() {
		for layout, files := range layouts {
			t.Run(m.name+"/"+layout, func(t *testing.T) {
				pkg := writePkg(t, m, files)
				mustRender(t, m, pkg, ".")
				if layout == "two directories" {
					assert.Equal(t, wantA, keys(services(t, filepath.Join(pkg, "a/mnist.services.yaml"))))
					assert.Equal(t, wantB, keys(services(t, filepath.Join(pkg, "b/mnist.services.yaml"))))
				} else {
					assert.Equal(t, sorted(wantA, wantB), keys(services(t, filepath.Join(pkg, "jobs/mnist.services.yaml"))))
				}
				first := engine.Snapshot(t, pkg)
				mustRender(t, m, pkg, ".")
				assert.Equal(t, first, engine.Snapshot(t, pkg), "the second render changed bytes")
			})
		}
	}
}

// A bad FLApp fails the render and leaves every file as it was, even the
// pending scale-down of a good FLApp in the same package.
func TestBadFLAppFailsAndWritesNothing(t *testing.T) {
	for _, m := range modes() {
		t.Run(m.name, func(t *testing.T) {
			pkg := writePkg(t, m, map[string]string{
				"jobs/train.yaml": flapp("train", "team-a", "Leader", 3),
			})
			mustRender(t, m, pkg, ".")
			writeFile(t, filepath.Join(pkg, "jobs/train.yaml"), flapp("train", "team-a", "Leader", 1))
			bad := strings.Replace(flapp("no-tf", "team-a", "Leader", 1), "- name: tensorflow", "- name: main", 1)
			writeFile(t, filepath.Join(pkg, "jobs/no-tf.yaml"), bad)
			before := engine.Snapshot(t, pkg)

			res := render(t, m, pkg, ".")
			assert.NotEqual(t, 0, res.ExitCode, "kpt fn render must fail on a bad FLApp")
			assert.Contains(t, res.Stdout+res.Stderr, "no-tf", "kpt shows the function's message naming the FLApp")
			assert.Contains(t, res.Stdout+res.Stderr, "tensorflow")
			assert.Equal(t, before, engine.Snapshot(t, pkg), "a failed render changed files")
		})
	}
}

// The image is the one make image built for this platform.
func TestImageIsTheLocalPlatform(t *testing.T) {
	out := engine.MustRun(t, engine.Repo(), "podman", "image", "inspect", "--format", "{{.Os}}/{{.Architecture}}", env.Image.Name)
	assert.Equal(t, "linux/"+runtime.GOARCH, strings.TrimSpace(out))
}
