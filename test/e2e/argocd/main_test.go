// Package argocd proves examples/argocd against the real Argo CD v3.6.1:
// argocd-cmp-server (built by hack/build-argocd.sh) runs examples/argocd/plugin.yaml
// exactly as shipped, Argo CD's own repo-server code
// (reposerver/repository.GenerateManifests) asks it for manifests, and Argo
// CD's sync engine (gitops-engine v3.6.1, pkg/engine + pkg/sync, the library
// the application controller syncs with) applies and prunes them in a real
// kube-apiserver. See README.md.
package argocd

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/fedlearner/flapp-services/test/e2e/internal/cluster"
)

// pluginName is metadata.name of examples/argocd/plugin.yaml (no spec.version).
const pluginName = "flapp-services"

// env is the shared state of the suite, set up once by TestMain.
var env struct {
	repo      string          // repository root
	flapp     string          // flapp-services binary
	cmpServer string          // argocd-cmp-server binary
	sockDir   string          // ARGOCD_PLUGINSOCKFILEPATH
	cmpLog    string          // the log of the shipped plugin's argocd-cmp-server
	ctx       context.Context // cancelled on SIGINT/SIGTERM
	addStop   func(func())    // registers a cleanup run when the suite ends
	cluster   *cluster.Cluster
	cfg       *rest.Config
	kube      kubernetes.Interface
	dyn       dynamic.Interface
}

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "e2e-argocd: "+format+"\n", args...)
}

func run(m *testing.M) int {
	start := time.Now()
	wd, err := os.Getwd()
	if err != nil {
		logf("%v", err)
		return 1
	}
	env.repo = filepath.Clean(filepath.Join(wd, "..", "..", ".."))

	// Short paths: the plugin socket lives here and a unix socket path has
	// at most 107 bytes.
	tmp, err := os.MkdirTemp("", "argocd-e2e-")
	if err != nil {
		logf("%v", err)
		return 1
	}
	defer func() { _ = os.RemoveAll(tmp) }()

	// 1. The binaries: argocd-cmp-server (built once, cached under
	// <repo>/.cache) and the binary under test. Kubernetes comes with the
	// control plane, which only the sync tests start (needCluster).
	t0 := time.Now()
	if env.cmpServer, err = script("build-argocd.sh", "ARGOCD_CMP_SERVER"); err != nil {
		logf("building argocd-cmp-server: %v", err)
		return 1
	}
	if env.flapp, err = flappServicesBinary(tmp); err != nil {
		logf("flapp-services binary: %v", err)
		return 1
	}
	logf("binaries ready in %s: %s, %s", time.Since(t0).Round(time.Second), env.cmpServer, env.flapp)

	// Stop what we start on SIGINT/SIGTERM too.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		mu      sync.Mutex
		stops   []func()
		stopAll = func() {
			mu.Lock()
			defer mu.Unlock()
			for i := len(stops) - 1; i >= 0; i-- {
				stops[i]()
			}
			stops = nil
		}
	)
	defer stopAll()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		s := <-sigs
		logf("got %v, stopping", s)
		cancel()
		stopAll()
		_ = os.RemoveAll(tmp)
		os.Exit(130)
	}()

	// 2. argocd-cmp-server with examples/argocd/plugin.yaml as shipped.
	t0 = time.Now()
	stopCMP, err := startCMPServer(ctx, tmp)
	if err != nil {
		logf("starting argocd-cmp-server: %v", err)
		return 1
	}
	mu.Lock()
	stops = append(stops, stopCMP)
	mu.Unlock()
	logf("argocd-cmp-server ready in %s (socket %s)", time.Since(t0).Round(100*time.Millisecond), filepath.Join(env.sockDir, pluginName+".sock"))

	env.ctx = ctx
	env.addStop = func(f func()) {
		mu.Lock()
		defer mu.Unlock()
		stops = append(stops, f)
	}
	code := m.Run()
	logf("suite finished in %s", time.Since(start).Round(time.Second))
	return code
}

var clusterOnce struct {
	sync.Once
	err error
}

// needCluster starts the control plane (etcd, kube-apiserver,
// kube-controller-manager from hack/build-k8s.sh, the FLApp CRD) the first
// time a test needs it; it runs until the suite ends.
func needCluster(t *testing.T) {
	t.Helper()
	clusterOnce.Do(func() {
		t0 := time.Now()
		binDir, err := script("build-k8s.sh", "K8S_BIN_DIR")
		if err != nil {
			clusterOnce.err = fmt.Errorf("building Kubernetes binaries: %w", err)
			return
		}
		c, err := cluster.Start(env.ctx, cluster.Options{BinDir: binDir, BeforeControllers: installCRD, Log: logf})
		if err != nil {
			clusterOnce.err = fmt.Errorf("starting the control plane: %w", err)
			return
		}
		env.cluster = c
		env.addStop(c.Stop)
		logf("control plane ready at %s in %s", c.Server, time.Since(t0).Round(100*time.Millisecond))
		clusterOnce.err = setupClients()
	})
	if clusterOnce.err != nil {
		t.Fatal(clusterOnce.err)
	}
}

// script runs hack/<name> (a no-op when its cached build is current) and
// returns the last line it prints, unless the environment variable override
// names the result already.
func script(name, override string) (string, error) {
	if p := os.Getenv(override); p != "" {
		return p, nil
	}
	cmd := exec.Command("bash", filepath.Join(env.repo, "test", "e2e", "hack", name))
	cmd.Env = projectGoEnv()
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return "", err
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	return lines[len(lines)-1], nil
}

// projectGoEnv is the environment without the Go 1.27 toolchain that `go
// test` put first on PATH: the scripts pick their own toolchain (the project's
// Go for Kubernetes, go1.27.3 for Argo CD), and their cache stamps record it.
func projectGoEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		switch {
		case strings.HasPrefix(kv, "GOROOT="), strings.HasPrefix(kv, "GOTOOLCHAIN="):
			continue
		case strings.HasPrefix(kv, "PATH="):
			var keep []string
			for _, dir := range filepath.SplitList(strings.TrimPrefix(kv, "PATH=")) {
				if !strings.Contains(dir, "golang.org/toolchain@") {
					keep = append(keep, dir)
				}
			}
			kv = "PATH=" + strings.Join(keep, string(os.PathListSeparator))
		}
		out = append(out, kv)
	}
	return out
}

// flappServicesBinary returns $FLAPP_SERVICES_BIN, or builds the binary from
// the repository root (with the project's own Go, not this module's 1.27).
func flappServicesBinary(dir string) (string, error) {
	if p := os.Getenv("FLAPP_SERVICES_BIN"); p != "" {
		if !filepath.IsAbs(p) {
			return "", fmt.Errorf("FLAPP_SERVICES_BIN must be absolute, got %q", p)
		}
		_, err := os.Stat(p)
		return p, err
	}
	bin := filepath.Join(dir, "flapp-services")
	cmd := exec.Command("make", "-C", env.repo, "build", "BIN="+bin)
	cmd.Env = append(projectGoEnv(), "GOTOOLCHAIN=local")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("make build: %w", err)
	}
	return bin, nil
}

// pluginSpec is one plugin sidecar: its plugin.yaml, its name (the socket's)
// and the tools on its PATH besides flapp-services.
type pluginSpec struct {
	config  string
	name    string
	tools   map[string]string // name on PATH -> binary
	shell   bool              // bash and coreutils on PATH too
	flapp   string            // the flapp-services binary; env.flapp when empty
	sockDir string            // its socket directory; env.sockDir when empty
	env     []string          // more environment for argocd-cmp-server
	pid     *int              // when set, receives argocd-cmp-server's process id
}

// startCMPServer starts argocd-cmp-server with examples/argocd/plugin.yaml
// as shipped and points Argo CD's repo-server code at its socket directory
// (GenerateManifests finds plugins through ARGOCD_PLUGINSOCKFILEPATH).
func startCMPServer(ctx context.Context, tmp string) (stop func(), err error) {
	env.sockDir = filepath.Join(tmp, "plugins")
	if err := os.MkdirAll(env.sockDir, 0o755); err != nil {
		return nil, err
	}
	if err := os.Setenv("ARGOCD_PLUGINSOCKFILEPATH", env.sockDir); err != nil {
		return nil, err
	}
	env.cmpLog = filepath.Join(tmp, pluginName, "argocd-cmp-server.log")
	return startPlugin(ctx, tmp, pluginSpec{config: filepath.Join(env.repo, "examples", "argocd", "plugin.yaml"), name: pluginName})
}

// startPlugin starts argocd-cmp-server as a plugin sidecar does: plugin.yaml
// (copied byte for byte) in its config dir, flapp-services and the spec's
// tools on PATH (bash only when the spec asks for a shell: the plain
// plugin's sidecar image has none), its socket in the shared socket
// directory. It returns once the socket exists.
func startPlugin(ctx context.Context, tmp string, spec pluginSpec) (stop func(), err error) {
	if spec.flapp == "" {
		spec.flapp = env.flapp
	}
	if spec.sockDir == "" {
		spec.sockDir = env.sockDir
	}
	base := filepath.Join(tmp, spec.name)
	configDir := filepath.Join(base, "config")
	pathDir := filepath.Join(base, "path")
	workDir := filepath.Join(base, "work")
	for _, d := range []string{configDir, pathDir, workDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	plugin, err := os.ReadFile(spec.config)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(configDir, "plugin.yaml"), plugin, 0o644); err != nil {
		return nil, err
	}
	tools := map[string]string{"flapp-services": spec.flapp}
	for k, v := range spec.tools {
		tools[k] = v
	}
	for name, bin := range tools {
		if err := os.Symlink(bin, filepath.Join(pathDir, name)); err != nil {
			return nil, err
		}
	}
	// What the sidecar image has: the tools, and for a shell plugin bash
	// and coreutils.
	path := pathDir
	if spec.shell {
		bash, err := exec.LookPath("bash")
		if err != nil {
			return nil, err
		}
		path += ":" + filepath.Dir(bash) + ":/usr/bin:/bin"
	}

	logPath := filepath.Join(base, "argocd-cmp-server.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(env.cmpServer, "--config-dir-path", configDir, "--loglevel", "info")
	cmd.Env = []string{
		"PATH=" + path,
		"HOME=" + base,
		"ARGOCD_PLUGINSOCKFILEPATH=" + spec.sockDir,
		"ARGOCD_CMP_WORKDIR=" + workDir,
	}
	cmd.Env = append(cmd.Env, spec.env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, err
	}
	if spec.pid != nil {
		*spec.pid = cmd.Process.Pid
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	sock := filepath.Join(spec.sockDir, spec.name+".sock")
	var once sync.Once
	stop = func() {
		once.Do(func() {
			// It removes its socket on SIGTERM but keeps running.
			_ = cmd.Process.Signal(syscall.SIGTERM)
			for i := 0; i < 50; i++ {
				if _, err := os.Stat(sock); os.IsNotExist(err) {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			_ = cmd.Process.Kill()
			<-done
			_ = logFile.Close()
		})
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(sock); err == nil {
			return stop, nil
		}
		select {
		case <-done:
			stop()
			return nil, fmt.Errorf("argocd-cmp-server exited:\n%s", cluster.Tail(logPath, 20))
		case <-ctx.Done():
			stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("no socket %s after 60s:\n%s", sock, cluster.Tail(logPath, 20))
		}
	}
}

// installCRD installs the FLApp CRD before the controller manager starts,
// so that the garbage collector watches FLApps from its first discovery.
func installCRD(c *cluster.Cluster) error {
	kc := filepath.Join(c.BinDir, "kubectl")
	for _, args := range [][]string{
		{"apply", "--server-side", "--field-manager=e2e", "-f", filepath.Join(env.repo, "examples", "crd", "flapp-crd.yaml")},
		{"wait", "--for=condition=Established", "--timeout=60s", "crd/flapps.fedlearner.k8s.io"},
	} {
		out, err := exec.Command(kc, append([]string{"--kubeconfig", c.Kubeconfig}, args...)...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}

func setupClients() error {
	cfg, err := clientcmd.BuildConfigFromFlags("", env.cluster.Kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 100, 200
	env.cfg = cfg
	if env.kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	env.dyn, err = dynamic.NewForConfig(cfg)
	return err
}
