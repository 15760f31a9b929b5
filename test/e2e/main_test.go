// Package e2e proves flapp-services' output against a real Kubernetes
// control plane (etcd, kube-apiserver, kube-controller-manager v1.37.2) built
// from source and run on loopback. See README.md.
package e2e

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

	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/fedlearner/flapp-services/test/e2e/internal/cluster"
)

// env is the shared state of the suite, set up once by TestMain.
var env struct {
	repo      string // repository root
	flapp     string // flapp-services binary
	binDir    string // etcd, kube-apiserver, kube-controller-manager, kubectl
	kubectl   string
	cluster   *cluster.Cluster
	cfg       *rest.Config
	kube      kubernetes.Interface
	dyn       dynamic.Interface
	mapper    *restmapper.DeferredDiscoveryRESTMapper
	startTime time.Time
}

const crdPath = "examples/crd/flapp-crd.yaml"

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "e2e: "+format+"\n", args...)
}

func run(m *testing.M) int {
	env.startTime = time.Now()
	wd, err := os.Getwd()
	if err != nil {
		logf("%v", err)
		return 1
	}
	env.repo = filepath.Clean(filepath.Join(wd, "..", ".."))

	// 1. Kubernetes binaries (built once, cached in <repo>/.cache/k8s-bin).
	t0 := time.Now()
	if env.binDir, err = buildKubernetes(); err != nil {
		logf("building Kubernetes binaries: %v", err)
		return 1
	}
	env.kubectl = filepath.Join(env.binDir, "kubectl")
	logf("Kubernetes binaries ready in %s (%s)", env.binDir, time.Since(t0).Round(time.Second))

	// 2. The binary under test.
	tmp, err := os.MkdirTemp("", "flapp-e2e-bin-")
	if err != nil {
		logf("%v", err)
		return 1
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	if env.flapp, err = flappServicesBinary(tmp); err != nil {
		logf("flapp-services binary: %v", err)
		return 1
	}
	logf("binary under test: %s", env.flapp)

	// 3. The control plane, stopped on return, on SIGINT and on SIGTERM.
	// A signal cancels a start in progress (which then stops what it
	// started) or stops the running control plane, then exits.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	var (
		mu        sync.Mutex
		running   *cluster.Cluster
		startDone = make(chan struct{})
	)
	go func() {
		s := <-sigs
		logf("got %v, stopping the control plane", s)
		cancel()
		<-startDone
		mu.Lock()
		c := running
		mu.Unlock()
		c.Stop()
		_ = os.RemoveAll(tmp)
		os.Exit(130)
	}()

	t0 = time.Now()
	c, err := cluster.Start(ctx, cluster.Options{
		BinDir:            env.binDir,
		BeforeControllers: installCRD,
		Log:               logf,
	})
	mu.Lock()
	running = c
	mu.Unlock()
	close(startDone)
	if err != nil {
		logf("starting the control plane: %v", err)
		return 1
	}
	env.cluster = c
	keep := os.Getenv("E2E_KEEP_DIR") != ""
	code := 1
	defer func() {
		if code != 0 {
			logf("kube-controller-manager log tail:\n%s", c.Log("kube-controller-manager", 15))
		}
		c.StopKeep(keep)
		if keep {
			logf("kept %s", c.Dir)
		}
	}()
	logf("control plane ready at %s in %s (dir %s)", c.Server, time.Since(t0).Round(100*time.Millisecond), c.Dir)

	if err := setupClients(); err != nil {
		logf("clients: %v", err)
		return 1
	}
	code = m.Run()
	logf("suite finished in %s", time.Since(env.startTime).Round(time.Second))
	return code
}

// buildKubernetes runs hack/build-k8s.sh, which is a no-op when the cached
// binaries match the pinned versions. K8S_BIN_DIR overrides the cache dir.
func buildKubernetes() (string, error) {
	cmd := exec.Command("bash", filepath.Join("hack", "build-k8s.sh"))
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return "", err
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	return lines[len(lines)-1], nil
}

// flappServicesBinary returns $FLAPP_SERVICES_BIN, or builds the binary from
// the repository root into dir.
func flappServicesBinary(dir string) (string, error) {
	if p := os.Getenv("FLAPP_SERVICES_BIN"); p != "" {
		if !filepath.IsAbs(p) {
			return "", fmt.Errorf("FLAPP_SERVICES_BIN must be absolute, got %q", p)
		}
		if _, err := os.Stat(p); err != nil {
			return "", err
		}
		return p, nil
	}
	bin := filepath.Join(dir, "flapp-services")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = env.repo
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOTOOLCHAIN=local")
	cmd.Stdout = os.Stderr
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build in %s: %w", env.repo, err)
	}
	return bin, nil
}

// installCRD installs the FLApp CRD before the controller manager starts,
// so that the garbage collector watches FLApps from its first discovery.
func installCRD(c *cluster.Cluster) error {
	kc := filepath.Join(c.BinDir, "kubectl")
	for _, args := range [][]string{
		{"apply", "--server-side", "--field-manager=e2e", "-f", filepath.Join(env.repo, crdPath)},
		{"wait", "--for=condition=Established", "--timeout=60s", "crd/flapps.fedlearner.k8s.io"},
	} {
		cmd := exec.Command(kc, append([]string{"--kubeconfig", c.Kubeconfig}, args...)...)
		out, err := cmd.CombinedOutput()
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
	cfg.QPS = 200
	cfg.Burst = 400
	cfg.Proxy = nil
	env.cfg = cfg
	if env.kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	if env.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		return err
	}
	env.mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(env.kube.Discovery()))
	return nil
}
