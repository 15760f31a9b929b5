// Package kustomize runs the image built by `make image` as a `container:`
// transformer of the real kustomize v5.8.1 (which calls `docker`: here
// podman's, first in PATH), and checks that its output equals the `exec:`
// transformer's, byte for byte, on examples/kustomize and on a
// multi-namespace kustomization.
package kustomize

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fedlearner/flapp-services/test/e2e/clients/internal/engine"
)

// kustomizeVersion is the kustomize the examples are tested with (the same
// as test/integration's).
const kustomizeVersion = "v5.8.1"

var env struct {
	engine.Suite        // the image the examples name, and a work folder
	kustomize    string // the kustomize binary
}

func TestMain(m *testing.M) {
	flag.Parse()
	// The examples run verbatim: the image is built under the name their
	// function configs use, as the README says.
	os.Exit(engine.RunSuite(m, "clients/kustomize", "examples/kustomize/leader/flapp-services.yaml", imageRe,
		func() (err error) { env.kustomize, err = installKustomize(); return err }, &env.Suite))
}

// installKustomize returns <repo>/.cache/bin/kustomize, installing
// kustomizeVersion there with `go install` when it is missing or another
// version (as test/integration does).
func installKustomize() (string, error) {
	dir := filepath.Join(engine.Repo(), ".cache", "bin")
	path := filepath.Join(dir, "kustomize")
	if out, err := exec.Command(path, "version").Output(); err == nil && strings.Contains(string(out), kustomizeVersion) {
		return path, nil
	}
	start := time.Now()
	fmt.Fprintf(os.Stderr, "clients/kustomize: installing kustomize %s into %s\n", kustomizeVersion, dir)
	cmd := exec.Command("go", "install", "sigs.k8s.io/kustomize/kustomize/v5@"+kustomizeVersion)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOTOOLCHAIN=local", "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("installing kustomize %s: %w\n%s", kustomizeVersion, err, b)
	}
	fmt.Fprintf(os.Stderr, "clients/kustomize: kustomize installed in %s\n", time.Since(start).Round(time.Second))
	return path, nil
}

// imageRe finds the image an example function config runs.
var imageRe = regexp.MustCompile(`(?m)^      container:\n        image: (\S+)$`)

// readmeLines returns the lines of examples/kustomize/README.md that start
// with prefix.
func readmeLines(t *testing.T, prefix string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(engine.Repo(), "examples/kustomize/README.md"))
	require.NoError(t, err)
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, prefix) {
			lines = append(lines, l)
		}
	}
	return lines
}

// sandbox is a temporary repository root with examples/kustomize and
// kustomize at .cache/bin/kustomize, where the README's commands run
// verbatim. There is no bin/flapp-services: the container form cannot fall
// back to a local binary.
func sandbox(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	engine.CopyTree(t, filepath.Join(engine.Repo(), "examples/kustomize"), filepath.Join(root, "examples/kustomize"))
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".cache/bin"), 0o755))
	require.NoError(t, os.Symlink(env.kustomize, filepath.Join(root, ".cache/bin/kustomize")))
	return root
}

// toExec applies the README's "Development: exec" line to the sandbox and
// puts the image's own binary at bin/flapp-services.
func toExec(t *testing.T, root string) {
	t.Helper()
	lines := readmeLines(t, "perl -pi -e ")
	require.Len(t, lines, 1, "examples/kustomize/README.md: the exec-form line")
	res := engine.Run(t, root, nil, nil, "bash", "-eo", "pipefail", "-c", lines[0])
	require.Equal(t, 0, res.ExitCode, "%s\n%s", lines[0], res.Stderr)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "bin"), 0o755))
	require.NoError(t, os.Symlink(env.Image.Binary, filepath.Join(root, "bin", "flapp-services")))
}

func bash(t *testing.T, root, line string) string {
	t.Helper()
	res := engine.Run(t, root, nil, nil, "bash", "-eo", "pipefail", "-c", line)
	require.Equal(t, 0, res.ExitCode, "%s\n%s", line, res.Stderr)
	require.NotEmpty(t, strings.TrimSpace(res.Stdout), line)
	return res.Stdout
}

var serviceRe = regexp.MustCompile(`(?m)^kind: Service$`)

// Every example, verbatim from the README: the container form (as
// committed) and the exec form (the README's development line) print the
// same bytes.
func TestExamplesContainerEqualsExec(t *testing.T) {
	containerLines := readmeLines(t, ".cache/bin/kustomize build --enable-alpha-plugins examples/kustomize/")
	execLines := readmeLines(t, ".cache/bin/kustomize build --enable-alpha-plugins --enable-exec examples/kustomize/")
	require.Len(t, containerLines, 4, "README: container-form build commands")
	require.Len(t, execLines, 4, "README: exec-form build commands")

	root := sandbox(t)
	container := map[string]string{}
	for _, l := range containerLines {
		dir := l[strings.LastIndex(l, " ")+1:]
		container[dir] = bash(t, root, l)
	}
	toExec(t, root)
	for _, l := range execLines {
		dir := l[strings.LastIndex(l, " ")+1:]
		out := bash(t, root, l)
		require.Contains(t, container, dir, "exec-form command for a directory the container form does not build")
		assert.Equal(t, container[dir], out, "%s: container and exec outputs differ", dir)
		assert.GreaterOrEqual(t, len(serviceRe.FindAllString(out, -1)), 3, "%s: Services generated", dir)
	}
}

// FLApps of the same name in two namespaces, and a third FLApp, in one
// kustomization without `namespace:`: container and exec give the same
// bytes, and every Service lands in its FLApp's namespace.
func TestMultiNamespaceContainerEqualsExec(t *testing.T) {
	flapp := func(name, ns string, workers int) string {
		return fmt.Sprintf(`apiVersion: fedlearner.k8s.io/v1alpha1
kind: FLApp
metadata:
  name: %s
  namespace: %s
spec:
  role: Leader
  peerSpecs:
    Follower:
      peerURL: peer.example.com:443
  flReplicaSpecs:
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
                - name: metrics
                  containerPort: 9125
                  protocol: UDP
`, name, ns, workers)
	}
	root := sandbox(t)
	dir := filepath.Join(root, "examples/kustomize/multi")
	files := map[string]string{
		"a.yaml": flapp("mnist", "team-a", 2),
		"b.yaml": flapp("mnist", "team-b", 3),
		"c.yaml": flapp("eval", "team-b", 1),
		"kustomization.yaml": `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - a.yaml
  - b.yaml
  - c.yaml
transformers:
  - flapp-services.yaml
`,
	}
	leaderFn, err := os.ReadFile(filepath.Join(root, "examples/kustomize/leader/flapp-services.yaml"))
	require.NoError(t, err)
	files["flapp-services.yaml"] = string(leaderFn)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for name, content := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}

	container := bash(t, root, ".cache/bin/kustomize build --enable-alpha-plugins examples/kustomize/multi")
	toExec(t, root)
	out := bash(t, root, ".cache/bin/kustomize build --enable-alpha-plugins --enable-exec examples/kustomize/multi")
	assert.Equal(t, container, out, "container and exec outputs differ")

	for ns, svcs := range map[string][]string{
		"team-a": {"mnist-leader-worker-0", "mnist-leader-worker-1"},
		"team-b": {"mnist-leader-worker-0", "mnist-leader-worker-1", "mnist-leader-worker-2", "eval-leader-worker-0"},
	} {
		for _, s := range svcs {
			assert.Regexp(t, "(?m)^kind: Service\nmetadata:\n(  .*\n)*  name: "+s+"\n  namespace: "+ns+"\n", container, "%s/%s", ns, s)
		}
	}
	assert.Len(t, serviceRe.FindAllString(container, -1), 6)
	assert.Contains(t, container, "protocol: UDP", "the UDP port keeps its protocol")
}

// A bad FLApp fails the container-form build: nothing on stdout, the
// function's message (from inside the container) on stderr.
func TestBadFLAppFailsContainerBuild(t *testing.T) {
	root := sandbox(t)
	dir := filepath.Join(root, "examples/kustomize/leader")
	b, err := os.ReadFile(filepath.Join(dir, "mnist-leader.yaml"))
	require.NoError(t, err)
	bad := strings.Replace(string(b), "- name: tensorflow", "- name: main", 1)
	require.NotEqual(t, string(b), bad)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "mnist-leader.yaml"), []byte(bad), 0o644))

	res := engine.Run(t, root, nil, nil, env.kustomize, "build", "--enable-alpha-plugins", "examples/kustomize/leader")
	assert.NotEqual(t, 0, res.ExitCode, "kustomize build must fail on a bad FLApp")
	assert.Empty(t, strings.TrimSpace(res.Stdout), "nothing on stdout when the build fails")
	assert.Contains(t, res.Stderr, `FLApp fl-leader/mnist: spec.flReplicaSpecs[Master].template.spec.containers: Required value: no container named "tensorflow"`)
}
