package argocd

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/argoproj/argo-cd/v3/reposerver/repository"
	"github.com/argoproj/argo-cd/v3/util/cmp"
)

// socketProxy stands between the repo-server code and a plugin's socket,
// as <dir>/<name>.sock, and counts what the repo-server sends (the
// repository streams, the gRPC framing included).
type socketProxy struct {
	dir   string
	sent  atomic.Int64
	conns atomic.Int64
	open  sync.WaitGroup
	ln    net.Listener
}

func newSocketProxy(t *testing.T, target, name string) *socketProxy {
	t.Helper()
	dir, err := os.MkdirTemp("", "argocd-proxy-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	ln, err := net.Listen("unix", filepath.Join(dir, name+".sock"))
	require.NoError(t, err)
	p := &socketProxy{dir: dir, ln: ln}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.conns.Add(1)
			p.open.Add(1)
			go p.forward(c, target)
		}
	}()
	return p
}

func (p *socketProxy) forward(c net.Conn, target string) {
	defer p.open.Done()
	defer func() { _ = c.Close() }()
	s, err := net.Dial("unix", target)
	if err != nil {
		return
	}
	defer func() { _ = s.Close() }()
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(c, s)
		_ = c.(*net.UnixConn).CloseWrite()
		close(done)
	}()
	n, _ := io.Copy(s, c)
	p.sent.Add(n)
	_ = s.(*net.UnixConn).CloseWrite()
	<-done
}

// measure runs f and returns the bytes and connections it sent through the
// proxy, once every connection has closed.
func (p *socketProxy) measure(t *testing.T, f func()) (sent, conns int64) {
	t.Helper()
	s0, c0 := p.sent.Load(), p.conns.Load()
	f()
	done := make(chan struct{})
	go func() { p.open.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the repo-server code left a plugin connection open")
	}
	return p.sent.Load() - s0, p.conns.Load() - c0
}

// commandsRun counts, in an argocd-cmp-server log, the commands it ran
// whose arguments contain each of subs (argocd-cmp-server logs every
// command before running it); each ran on a repository stream of its own.
func commandsRun(t *testing.T, logPath string, subs ...string) []int {
	t.Helper()
	data, err := os.ReadFile(logPath)
	require.NoError(t, err)
	counts := make([]int, len(subs))
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.Contains(line, `"dir":`) {
			continue
		}
		for i, s := range subs {
			if strings.Contains(line, s) {
				counts[i]++
			}
		}
	}
	return counts
}

// A plugin with discover costs a second copy of the repository per
// generate: Argo CD v3.6.1 streams the whole repository (not the
// Application's directory) once to run discover and once more to run
// generate, also for an Application that names the plugin; one naming no
// plugin costs a third (source-type detection runs discover, then the
// generate's plugin detection runs it again). Without discover a named
// plugin costs one. Measured through a proxy in front of argocd-cmp-server's
// socket, on testdata/monorepo as a Git checkout; reposerver.plugin.tar.exclusions
// (GenerateManifests' excluded globs) removes .git from every stream.
func TestRepositoryStreams(t *testing.T) {
	root := gitCheckout(t, filepath.Join("testdata", "monorepo"))
	const path = "kustomize/flapp/overlays/prod"
	app := application{name: "mnist-prod", namespace: "fl", path: path}

	// The compressed repository Argo CD's code sends, with and without the
	// exclusion the Argo CD docs recommend.
	for _, globs := range [][]string{nil, {".git/**"}} {
		tgz, _, err := cmp.GetCompressedRepoAndMetadata(root, filepath.Join(root, path), nil, globs, nil)
		require.NoError(t, err)
		info, err := tgz.Stat()
		require.NoError(t, err)
		_ = tgz.Close()
		_ = os.Remove(tgz.Name())
		logf("repository stream of testdata/monorepo as a Git checkout, exclusions %q: %d bytes compressed", globs, info.Size())
	}

	// A second argocd-cmp-server with plugin.yaml less its discover block.
	tmp, err := os.MkdirTemp("", "argocd-nodiscover-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(tmp) })
	shipped, err := os.ReadFile(filepath.Join(env.repo, "examples", "argocd", "plugin.yaml"))
	require.NoError(t, err)
	noDiscover := withoutDiscover(t, string(shipped))
	config := filepath.Join(tmp, "plugin.yaml")
	require.NoError(t, os.WriteFile(config, []byte(noDiscover), 0o644))
	sockDir := filepath.Join(tmp, "plugins")
	require.NoError(t, os.MkdirAll(sockDir, 0o755))
	stop, err := startPlugin(context.Background(), tmp, pluginSpec{config: config, name: pluginName, sockDir: sockDir})
	require.NoError(t, err)
	t.Cleanup(stop)
	noDiscoverLog := filepath.Join(tmp, pluginName, "argocd-cmp-server.log")

	cases := []struct {
		name      string
		target    string // the cmp-server's socket
		log       string
		plugin    bool // the Application names the plugin
		globs     []string
		discovers int // discover commands run
	}{
		{"named, with discover", filepath.Join(env.sockDir, pluginName+".sock"), env.cmpLog, true, nil, 1},
		{"named, with discover, .git excluded", filepath.Join(env.sockDir, pluginName+".sock"), env.cmpLog, true, []string{".git/**"}, 1},
		{"unnamed, with discover", filepath.Join(env.sockDir, pluginName+".sock"), env.cmpLog, false, nil, 2},
		{"named, without discover", filepath.Join(sockDir, pluginName+".sock"), noDiscoverLog, true, nil, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			proxy := newSocketProxy(t, c.target, pluginName)
			a := app
			if c.plugin {
				a.plugin = namedPlugin(nil, nil)
			}
			before := commandsRun(t, c.log, "discover --argocd-env", "render --argocd-env")
			var services int
			sent, conns := proxy.measure(t, func() {
				withSockDir(t, proxy.dir, func() {
					resp, err := generateCtx(ctxFor(t), root, a, repository.WithCMPTarExcludedGlobs(c.globs))
					require.NoError(t, err)
					services = len(serviceNames(objectsOf(t, resp)))
				})
			})
			after := commandsRun(t, c.log, "discover --argocd-env", "render --argocd-env")
			discovers, renders := after[0]-before[0], after[1]-before[1]
			assert.Equal(t, c.discovers, discovers, "discover commands")
			assert.Equal(t, 1, renders, "render commands")
			assert.Equal(t, 5, services)
			logf("one GenerateManifests of %s (%s, exclusions %q): %d repository streams (%d discover, %d generate), %d bytes sent to argocd-cmp-server over %d connections",
				path, c.name, c.globs, discovers+renders, discovers, renders, sent, conns)
		})
	}
}

// withoutDiscover is plugin.yaml without its discover block.
func withoutDiscover(t *testing.T, plugin string) string {
	t.Helper()
	start := strings.Index(plugin, "  discover:\n")
	require.GreaterOrEqual(t, start, 0)
	end := strings.Index(plugin[start:], "  parameters:\n")
	require.Greater(t, end, 0)
	return plugin[:start] + plugin[start+end:]
}

// gitCheckout copies dir into a fresh Git repository with one commit, as
// the repo-server's checkout holds it (.git included).
func gitCheckout(t *testing.T, dir string) string {
	t.Helper()
	root := t.TempDir()
	copyDir(t, dir, root)
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "-A"},
		{"-c", "user.name=e2e", "-c", "user.email=e2e@example.com", "commit", "-q", "-m", "monorepo"},
	} {
		out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput()
		require.NoError(t, err, "git %s: %s", strings.Join(args, " "), out)
	}
	return root
}

// sleepPlugin is a plugin whose generate takes the given seconds.
func sleepPlugin(seconds int) string {
	return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: ConfigManagementPlugin
metadata:
  name: sleeper
spec:
  generate:
    command: [bash, -c]
    args:
      - |
        sleep "${ARGOCD_ENV_SLEEP:-%d}"
        printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: slept\n'
`, seconds)
}

// What bounds a plugin command's time in Argo CD v3.6.1: the deadline of the
// repo-server's request (server.repo.server.timeout.seconds and
// controller.repo.server.timeout.seconds, 60 s by default, are the
// deadlines of the calls that reach it), which argocd-cmp-server applies
// less 100 ms; ARGOCD_EXEC_TIMEOUT on the sidecar does not (its
// cmpserver/plugin runs commands under the request's context only, unlike
// the repo-server's own tools).
func TestPluginCommandTimeouts(t *testing.T) {
	tmp, err := os.MkdirTemp("", "argocd-sleeper-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(tmp) })
	config := filepath.Join(tmp, "plugin.yaml")
	require.NoError(t, os.WriteFile(config, []byte(sleepPlugin(3)), 0o644))
	stop, err := startPlugin(context.Background(), tmp, pluginSpec{config: config, name: "sleeper", shell: true,
		env: []string{"ARGOCD_EXEC_TIMEOUT=1s", "ARGOCD_EXEC_FATAL_TIMEOUT=1s"}})
	require.NoError(t, err)
	t.Cleanup(stop)
	sleeper := namedPluginNamed("sleeper")
	root := repoDir(t, map[string]string{"app/README.md": "#\n"})

	t.Run("ARGOCD_EXEC_TIMEOUT=1s on the sidecar does not stop a 3 s command", func(t *testing.T) {
		start := time.Now()
		resp, err := generateCtx(ctxFor(t), root, application{name: "app", namespace: "fl", path: "app", plugin: sleeper})
		require.NoError(t, err)
		assert.Len(t, resp.Manifests, 1)
		logf("a 3 s plugin command under ARGOCD_EXEC_TIMEOUT=1s: succeeded after %s", time.Since(start).Round(100*time.Millisecond))
	})
	t.Run("the request's deadline stops it", func(t *testing.T) {
		p := namedPluginNamed("sleeper")
		p.Env = append(p.Env, namedPlugin(map[string]string{"SLEEP": "60"}, nil).Env...)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		start := time.Now()
		_, err := generateCtx(ctx, root, application{name: "app", namespace: "fl", path: "app", plugin: p})
		require.Error(t, err)
		assert.Regexp(t, "failed signal: (terminated|killed)", err.Error(), "argocd-cmp-server stops the command at the request's deadline")
		logf("a 60 s plugin command under a 3 s request deadline: failed after %s: %v", time.Since(start).Round(100*time.Millisecond), err)
	})
}

// The sidecar's memory against concurrency: argocd-cmp-server starts one
// process per request (discover, then the render), holds each render's
// output and answers with it, and the repo-server's parallelism is
// unlimited by default (reposerver.parallelism.limit: 0). N Applications
// generating at once (N = 1, 2, 4, 8) on the worst input of `make
// bench-memory` (5,000 FLApp files, 100,000 Services; SECURITY.md, Known
// limits, gives its output's size):
// the peak of the sidecar's summed RSS (argocd-cmp-server and the processes
// it started, sampled every 5 ms from /proc), with the sidecar's environment
// as shipped and with GOMEMLIMIT set on it. A measurement: it runs only when
// FLAPP_BENCH_MEMORY_DIR names the inputs `go run ./bench/gen -memory-only`
// wrote (its memory/ directory).
func TestSidecarMemoryUnderConcurrency(t *testing.T) {
	inputs := os.Getenv("FLAPP_BENCH_MEMORY_DIR")
	if inputs == "" {
		t.Skip("FLAPP_BENCH_MEMORY_DIR is not set: a measurement, see README.md")
	}
	root := t.TempDir()
	const path = "apps/render-5000-files"
	copyDir(t, filepath.Join(inputs, "render-5000-files"), filepath.Join(root, filepath.FromSlash(path)))
	for _, sidecarEnv := range [][]string{nil, {"GOMEMLIMIT=256MiB"}} {
		t.Run(fmt.Sprintf("env %q", sidecarEnv), func(t *testing.T) {
			tmp, err := os.MkdirTemp("", "argocd-memory-")
			require.NoError(t, err)
			t.Cleanup(func() { _ = os.RemoveAll(tmp) })
			sockDir := filepath.Join(tmp, "plugins")
			require.NoError(t, os.MkdirAll(sockDir, 0o755))
			var pid int
			stop, err := startPlugin(context.Background(), tmp, pluginSpec{config: filepath.Join(env.repo, "examples", "argocd", "plugin.yaml"),
				name: pluginName, sockDir: sockDir, pid: &pid, env: sidecarEnv})
			require.NoError(t, err)
			t.Cleanup(stop)
			for _, n := range []int{1, 2, 4, 8} {
				t.Run(strconv.Itoa(n), func(t *testing.T) {
					sampler := newRSSSampler(pid)
					start := time.Now()
					var wg sync.WaitGroup
					errs := make([]error, n)
					manifests := make([]int, n)
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
					defer cancel()
					withSockDir(t, sockDir, func() {
						for i := 0; i < n; i++ {
							wg.Add(1)
							go func() {
								defer wg.Done()
								resp, err := generateCtx(ctx, root, application{name: fmt.Sprintf("app-%d", i), namespace: "fl", path: path, plugin: namedPlugin(nil, nil)})
								errs[i] = err
								if err == nil {
									manifests[i] = len(resp.Manifests)
								}
							}()
						}
						wg.Wait()
					})
					peak := sampler.stop()
					for i := range errs {
						require.NoError(t, errs[i])
						assert.Equal(t, 105000, manifests[i], "5,000 FLApps and 100,000 Services")
					}
					logf("sidecar env %q, %d concurrent generates of %s: peak RSS %d MiB in all (argocd-cmp-server alone %d MiB, largest command %d MiB), %s",
						sidecarEnv, n, path, peak.sum>>20, peak.server>>20, peak.command>>20, time.Since(start).Round(100*time.Millisecond))
				})
			}
		})
	}
}

// rssSampler samples the summed RSS of a process and its descendants.
type rssSampler struct {
	done     chan struct{}
	finished chan struct{}
	peak     rssPeak
	root     int
	pageSize int64
}

// rssPeak is the highest RSS seen: of the whole tree, of its root, and of
// the largest descendant.
type rssPeak struct{ sum, server, command int64 }

func newRSSSampler(pid int) *rssSampler {
	s := &rssSampler{done: make(chan struct{}), finished: make(chan struct{}), root: pid, pageSize: int64(os.Getpagesize())}
	go func() {
		defer close(s.finished)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			s.sample()
			select {
			case <-s.done:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *rssSampler) stop() rssPeak {
	close(s.done)
	<-s.finished
	return s.peak
}

// sample sums the resident pages of the tree rooted at s.root.
func (s *rssSampler) sample() {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	parent := map[int]int{}
	rss := map[int]int64{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces, so split after ')'.
		i := strings.LastIndexByte(string(stat), ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) < 22 {
			continue
		}
		ppid, _ := strconv.Atoi(fields[1])
		pages, _ := strconv.ParseInt(fields[21], 10, 64) // rss, field 24
		parent[pid], rss[pid] = ppid, pages*s.pageSize
	}
	var sum int64
	for pid, r := range rss {
		for p := pid; p > 1; p = parent[p] {
			if p != s.root {
				continue
			}
			sum += r
			if pid == s.root {
				s.peak.server = max(s.peak.server, r)
			} else {
				s.peak.command = max(s.peak.command, r)
			}
			break
		}
	}
	s.peak.sum = max(s.peak.sum, sum)
}
