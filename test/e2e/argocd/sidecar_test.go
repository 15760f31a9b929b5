package argocd

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
)

// sidecarImage is the function image as `make image` builds it, under this
// suite's own tag.
const sidecarImage = "localhost/flapp-services-e2e-argocd:sidecar"

// podmanEnv is the environment for podman: hack/podman.sh installs it when
// missing and names the containers.conf that lets it run here.
func podmanEnv(t *testing.T) []string {
	t.Helper()
	cmd := exec.Command("bash", filepath.Join(env.repo, "test", "e2e", "hack", "podman.sh"))
	cmd.Env = projectGoEnv()
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	require.NoError(t, err, "hack/podman.sh")
	vars := projectGoEnv()
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "CONTAINERS_CONF=") {
			vars = append(vars, sc.Text())
		}
	}
	return vars
}

func podman(t *testing.T, vars []string, args ...string) (string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("podman", args...)
	cmd.Env = vars
	// conmon writes a file named oom into its working directory when the
	// container is OOM-killed: not into the source tree.
	cmd.Dir = t.TempDir()
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("podman %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// sidecarRunArgs translates the sidecar of the patched repo-server (from
// `kustomize build examples/argocd`) into `podman run` arguments: its
// command, user, group and security settings, and each volume mount backed
// by a host path standing for the pod's volume. The socket directory stands
// for the plugins volume the repo-server shares.
func sidecarRunArgs(t *testing.T, b installBuild, cmpServer, sockDir string) []string {
	t.Helper()
	var d appsv1.Deployment
	toTyped(t, findObject(t, b.objs, "Deployment", "argocd-repo-server"), &d)
	var cm corev1.ConfigMap
	toTyped(t, findObject(t, b.objs, "ConfigMap", "flapp-services-cmp-"), &cm)
	var c *corev1.Container
	for i := range d.Spec.Template.Spec.Containers {
		if d.Spec.Template.Spec.Containers[i].Name == sidecarName {
			c = &d.Spec.Template.Spec.Containers[i]
		}
	}
	require.NotNil(t, c)
	volumes := map[string]corev1.Volume{}
	for _, v := range d.Spec.Template.Spec.Volumes {
		volumes[v.Name] = v
	}

	sc := c.SecurityContext
	require.NotNil(t, sc)
	require.NotNil(t, sc.RunAsUser)
	require.NotNil(t, sc.RunAsGroup)
	args := []string{"run", "-d", "--rm", "--network", "none", "--user", fmt.Sprintf("%d:%d", *sc.RunAsUser, *sc.RunAsGroup)}
	if sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem {
		args = append(args, "--read-only", "--read-only-tmpfs=false")
	}
	if sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation {
		args = append(args, "--security-opt", "no-new-privileges")
	}
	if sc.Capabilities != nil {
		for _, cp := range sc.Capabilities.Drop {
			args = append(args, "--cap-drop", string(cp))
		}
	}
	// The container's memory limit (swap counts toward it, as in a pod) and
	// its environment.
	if limit, ok := c.Resources.Limits[corev1.ResourceMemory]; ok {
		args = append(args, "--memory", strconv.FormatInt(limit.Value(), 10), "--memory-swap", strconv.FormatInt(limit.Value(), 10))
	}
	for _, e := range c.Env {
		require.Nil(t, e.ValueFrom, "env %s: only plain values have a stand-in", e.Name)
		args = append(args, "-e", e.Name+"="+e.Value)
	}
	host := t.TempDir()
	for _, m := range c.VolumeMounts {
		v, ok := volumes[m.Name]
		require.True(t, ok, "volume %s", m.Name)
		var src string
		switch {
		case m.Name == "var-files":
			// What the copyutil init container leaves there: Argo CD's
			// static binary under the name argocd-cmp-server.
			src = filepath.Join(host, m.Name)
			require.NoError(t, os.MkdirAll(src, 0o755))
			bin, err := os.ReadFile(cmpServer)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(src, "argocd-cmp-server"), bin, 0o755))
		case m.Name == "plugins":
			src = sockDir
		case v.ConfigMap != nil:
			require.Equal(t, cm.Name, v.ConfigMap.Name)
			require.NotEmpty(t, m.SubPath)
			shipped, err := os.ReadFile(filepath.Join(env.repo, "examples", "argocd", m.SubPath))
			require.NoError(t, err)
			require.Equal(t, string(shipped), cm.Data[m.SubPath], "the ConfigMap holds %s as shipped", m.SubPath)
			src = filepath.Join(host, m.Name, m.SubPath)
			require.NoError(t, writeFile(src, cm.Data[m.SubPath]))
		case v.EmptyDir != nil:
			src = filepath.Join(host, m.Name)
			require.NoError(t, os.MkdirAll(src, 0o777))
			require.NoError(t, os.Chmod(src, 0o777)) // an emptyDir is world-writable
		default:
			t.Fatalf("volume %s: no stand-in for %+v", m.Name, v.VolumeSource)
		}
		opt := src + ":" + m.MountPath
		if m.ReadOnly || v.ConfigMap != nil {
			opt += ":ro"
		}
		args = append(args, "-v", opt)
	}
	require.Len(t, c.Command, 1)
	require.Empty(t, c.Args)
	return append(args, "--entrypoint", c.Command[0], sidecarImage)
}

// The sidecar as deployed: the function image (FROM scratch, no shell),
// built by `make image`, runs the real argocd-cmp-server v3.6.1 from the
// shared volume under podman, with the user, mounts and security settings
// of the patched repo-server and plugin.yaml from the generated ConfigMap.
// Argo CD's repo-server code renders through its socket.
func TestSidecarInTheFunctionImage(t *testing.T) {
	vars := podmanEnv(t)
	b := buildInstall(t)

	build := exec.Command("make", "-C", env.repo, "image", "IMAGE="+sidecarImage)
	build.Env = append(append([]string{}, vars...), "GOTOOLCHAIN=local")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "make image: %s", out)
	t.Cleanup(func() { _, _ = podman(t, vars, "rmi", "-f", sidecarImage) })
	inspect, err := podman(t, vars, "image", "inspect", "--format", "{{json .Config.Env}}", sidecarImage)
	require.NoError(t, err)
	assert.Contains(t, inspect, "/usr/local/bin", "argocd-cmp-server finds flapp-services through the image's PATH")

	// A socket directory of its own: the suite's host cmp-server serves a
	// plugin of the same name.
	sockDir, err := os.MkdirTemp("", "argocd-sidecar-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(sockDir) })
	require.NoError(t, os.Chmod(sockDir, 0o777))
	t.Setenv("ARGOCD_PLUGINSOCKFILEPATH", sockDir)

	args := sidecarRunArgs(t, b, env.cmpServer, sockDir)
	id, err := podman(t, vars, args...)
	require.NoError(t, err)
	id = strings.TrimSpace(id)
	t.Cleanup(func() {
		// argocd-cmp-server as PID 1 ignores SIGTERM: kill it.
		_, _ = podman(t, vars, "rm", "-f", "-t", "0", id)
	})
	sock := filepath.Join(sockDir, pluginName+".sock")
	waitUntil(t, 60*time.Second, "the plugin socket "+sock, func() (bool, error) {
		if _, err := os.Stat(sock); err == nil {
			return true, nil
		}
		state, err := podman(t, vars, "inspect", "--format", "{{.State.Status}}", id)
		if err == nil && strings.TrimSpace(state) != "running" {
			logs, _ := podman(t, vars, "logs", id)
			t.Fatalf("the sidecar stopped (%s):\n%s", strings.TrimSpace(state), logs)
		}
		return false, err
	})

	t.Run("the example Application", func(t *testing.T) {
		root := t.TempDir()
		copyDir(t, filepath.Join(env.repo, "examples", "argocd", "app"), filepath.Join(root, "app"))
		want := render(t, root, "--owner-references", "Never", "app")
		for _, plugin := range []*v1alpha1.ApplicationSourcePlugin{namedPlugin(nil, nil), nil} {
			resp, err := generate(t, root, application{name: "mnist-leader", namespace: "fl-leader", path: "app", plugin: plugin})
			require.NoError(t, err, "named=%v", plugin != nil)
			assert.Equal(t, string(v1alpha1.ApplicationSourceTypePlugin), resp.SourceType, "discover ran in the image")
			assert.Equal(t, want, manifestValues(t, resp))
			assert.Len(t, serviceNames(objectsOf(t, resp)), 7)
		}
	})

	const uid = "0f4e3a3e-8c53-4d1c-9d0e-6f0b7a1d2c3b"
	exported := flapp("mnist", "", 2)
	exported["metadata"].(map[string]any)["uid"] = uid
	root := repoDir(t, map[string]string{
		"export/flapps.yaml":     toYAML(t, map[string]any{"apiVersion": "v1", "kind": "List", "items": []any{exported}}),
		"git/flapp.yaml":         toYAML(t, flapp("mnist", "", 3)),
		"git/config/strict.yaml": "apiVersion: fn.fedlearner.k8s.io/v1alpha1\nkind: FLAppServices\nmetadata:\n  name: strict\nspec:\n  maxServicesPerFLApp: 2\n",
		"bad/flapp.yaml":         toYAML(t, replaceRole(flapp("boss", "", 1), "Boss")),
	})
	owners := func(t *testing.T, plugin *v1alpha1.ApplicationSourcePlugin) []string {
		t.Helper()
		resp, err := generate(t, root, application{name: "app", namespace: "fl", path: "export", plugin: plugin})
		require.NoError(t, err)
		var uids []string
		for _, o := range objectsOf(t, resp) {
			if isService(o) {
				var u []string
				for _, r := range o.GetOwnerReferences() {
					u = append(u, string(r.UID))
				}
				uids = append(uids, strings.Join(u, ","))
			}
		}
		require.Len(t, uids, 3)
		return uids
	}
	t.Run("parameters and env", func(t *testing.T) {
		assert.Equal(t, []string{"", "", ""}, owners(t, namedPlugin(nil, nil)), "default Never")
		assert.Equal(t, []string{uid, uid, uid}, owners(t, namedPlugin(map[string]string{"FLAPP_OWNER_REFERENCES": "IfKnown"}, nil)), "plugin env")
		assert.Equal(t, []string{uid, uid, uid}, owners(t, namedPlugin(nil, map[string]string{"owner-references": "IfKnown"})), "parameter")
		assert.Equal(t, []string{"", "", ""}, owners(t,
			namedPlugin(map[string]string{"FLAPP_OWNER_REFERENCES": "IfKnown"}, map[string]string{"owner-references": "Never"})), "the parameter wins")
	})
	failures := map[string]struct {
		path   string
		plugin *v1alpha1.ApplicationSourcePlugin
		reason string
	}{
		"a bad FLApp": {"bad", namedPlugin(nil, nil), `FLApp boss: spec.role: Invalid value: "Boss"`},
		"a wrong parameter": {"git", namedPlugin(nil, map[string]string{"owner-references": "Sometimes"}),
			`the plugin parameter owner-references (PARAM_OWNER_REFERENCES) must be one of IfKnown, Required, Never, not "Sometimes"`},
		"FLAPP_CONFIG with a ceiling of 2": {"git", namedPlugin(map[string]string{"FLAPP_CONFIG": "config/strict.yaml"}, nil),
			"more than maxServicesPerFLApp (2)"},
	}
	for name, c := range failures {
		t.Run(name, func(t *testing.T) {
			resp, err := generate(t, root, application{name: "app", namespace: "fl", path: c.path, plugin: c.plugin})
			require.Error(t, err)
			assert.Nil(t, resp)
			assert.Contains(t, err.Error(), c.reason)
		})
	}

	// Last: past its limit the sidecar is killed.
	t.Run("the memory limit", func(t *testing.T) {
		sidecarMemoryLimit(t, vars, id)
	})
}

// sidecarFits is how many generates of the largest input the render's
// default ceilings admit the patched sidecar's memory limit holds at once:
// the reposerver.parallelism.limit examples/argocd/README.md pairs with it.
const sidecarFits = 2

// sidecarMemoryLimit runs, in the sidecar as the patch deploys it (its
// memory limit and environment), sidecarFits concurrent generates of the
// worst input of `make bench-memory`: all succeed and the sidecar keeps
// running. Then twice as many, which the limit does not hold: logged, not
// checked. A measurement: only with FLAPP_BENCH_MEMORY_DIR.
func sidecarMemoryLimit(t *testing.T, vars []string, id string) {
	inputs := os.Getenv("FLAPP_BENCH_MEMORY_DIR")
	if inputs == "" {
		t.Skip("FLAPP_BENCH_MEMORY_DIR is not set: a measurement, see README.md")
	}
	root := t.TempDir()
	const path = "apps/render-5000-files"
	copyDir(t, filepath.Join(inputs, "render-5000-files"), filepath.Join(root, filepath.FromSlash(path)))
	cgroup, err := podman(t, vars, "inspect", "--format", "{{.State.CgroupPath}}", id)
	require.NoError(t, err)
	peak := func() string {
		b, err := os.ReadFile(filepath.Join("/sys/fs/cgroup/memory", strings.TrimSpace(cgroup), "memory.max_usage_in_bytes"))
		if err != nil {
			return "unknown (" + err.Error() + ")"
		}
		n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		return fmt.Sprintf("%d MiB", n>>20)
	}
	running := func() bool {
		state, err := podman(t, vars, "inspect", "--format", "{{.State.Status}}", id)
		return err == nil && strings.TrimSpace(state) == "running"
	}
	concurrently := func(n int) []error {
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
				defer cancel()
				resp, err := generateCtx(ctx, root, application{name: fmt.Sprintf("app-%d", i), namespace: "fl", path: path, plugin: namedPlugin(nil, nil)})
				if err == nil && len(resp.Manifests) != 105000 {
					err = fmt.Errorf("%d manifests, not 105,000", len(resp.Manifests))
				}
				errs[i] = err
			}()
		}
		wg.Wait()
		return errs
	}
	start := time.Now()
	for i, err := range concurrently(sidecarFits) {
		require.NoError(t, err, "generate %d", i)
	}
	require.True(t, running(), "the sidecar runs on")
	logf("the patched sidecar, %d concurrent generates of %s: all succeeded in %s; its cgroup's peak %s",
		sidecarFits, path, time.Since(start).Round(100*time.Millisecond), peak())

	start = time.Now()
	failed := 0
	var first error
	for _, err := range concurrently(2 * sidecarFits) {
		if err != nil {
			failed++
			if first == nil {
				first = err
			}
		}
	}
	logf("the patched sidecar, %d concurrent generates of %s: %d failed (%v), sidecar running: %v, after %s; its cgroup's peak %s",
		2*sidecarFits, path, failed, first, running(), time.Since(start).Round(100*time.Millisecond), peak())
}
