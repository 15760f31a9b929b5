// Package cluster runs a throw-away Kubernetes control plane (etcd,
// kube-apiserver, kube-controller-manager) on loopback for the e2e tests.
//
// Everything lives in one temporary directory: data, keys, certificates,
// logs and the kubeconfig. Every process is started with a parent-death
// signal, recorded by PID and stopped by PID in Stop; nothing listens on
// anything but 127.0.0.1.
package cluster

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Options says where the binaries are and how to run them.
type Options struct {
	// BinDir holds etcd, kube-apiserver, kube-controller-manager and kubectl.
	BinDir string
	// Dir is the working directory; a new temporary directory when empty.
	Dir string
	// BeforeControllers runs once the API server is ready and before
	// kube-controller-manager starts, e.g. to install CRDs so the garbage
	// collector watches them from its first discovery.
	BeforeControllers func(c *Cluster) error
	// Log receives progress lines; nil means silent.
	Log func(format string, args ...any)
}

// Cluster is a running control plane.
type Cluster struct {
	Dir        string // working directory (removed by Stop unless kept)
	BinDir     string
	Kubeconfig string // path of an admin kubeconfig
	Server     string // https://127.0.0.1:<port>
	Token      string // bearer token of the admin user (group system:masters)
	CAFile     string // CA bundle of the serving certificate

	etcdURL string
	opts    Options
	ownDir  bool
	mu      sync.Mutex
	procs   []*proc
	stopped bool
}

type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

// Start starts etcd, kube-apiserver and kube-controller-manager and waits
// until the API server reports ready. On error everything already started
// is stopped again.
func Start(ctx context.Context, o Options) (c *Cluster, err error) {
	c = &Cluster{BinDir: o.BinDir, opts: o, Dir: o.Dir}
	if c.Dir == "" {
		if c.Dir, err = os.MkdirTemp("", "flapp-e2e-"); err != nil {
			return nil, err
		}
		c.ownDir = true
	}
	defer func() {
		if err != nil {
			c.Stop()
			c = nil
		}
	}()
	for _, b := range []string{"etcd", "kube-apiserver", "kube-controller-manager"} {
		if _, err := os.Stat(filepath.Join(o.BinDir, b)); err != nil {
			return c, fmt.Errorf("binary missing: %w", err)
		}
	}
	if err := c.startEtcd(ctx); err != nil {
		return c, err
	}
	if err := c.startAPIServer(ctx); err != nil {
		return c, err
	}
	if o.BeforeControllers != nil {
		if err := o.BeforeControllers(c); err != nil {
			return c, fmt.Errorf("before controllers: %w", err)
		}
	}
	if err := c.startControllerManager(ctx); err != nil {
		return c, err
	}
	return c, nil
}

func (c *Cluster) logf(format string, args ...any) {
	if c.opts.Log != nil {
		c.opts.Log(format, args...)
	}
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func freePorts(n int) ([]int, error) {
	// Hold all listeners open together so the ports are distinct.
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func (c *Cluster) start(name string, args ...string) (*proc, error) {
	return c.startPath(name, filepath.Join(c.BinDir, name), nil, args...)
}

// StartProcess starts another long-running process beside the control plane
// (a controller under test, say) the same way as the control plane's own:
// log in <Dir>/<name>.log (see Log), the minimal environment plus env, a
// parent-death signal, and stopped by PID in Stop, before the control plane.
func (c *Cluster) StartProcess(name, path string, env []string, args ...string) error {
	_, err := c.startPath(name, path, env, args...)
	return err
}

func (c *Cluster) startPath(name, path string, env []string, args ...string) (*proc, error) {
	logPath := filepath.Join(c.Dir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, args...)
	cmd.Dir = c.Dir
	cmd.Stdout = f
	cmd.Stderr = f
	// Minimal environment: no proxies, so all traffic stays on loopback.
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + c.Dir, "NO_PROXY=*"}, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// Killed by the kernel if the test binary dies without cleaning up
		// (for example when `go test -timeout` aborts it).
		Pdeathsig: syscall.SIGKILL,
		// Own process group: a terminal's ^C reaches only the test binary,
		// which then stops the processes in order.
		Setpgid: true,
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		_ = f.Close()
		return nil, errors.New("cluster stopped")
	}
	if err := cmd.Start(); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		_ = f.Close()
		close(p.done)
	}()
	c.procs = append(c.procs, p)
	c.recordPIDs()
	c.logf("started %s (pid %d), log %s", name, cmd.Process.Pid, logPath)
	return p, nil
}

// recordPIDs writes the PIDs to <dir>/pids, to find leftovers by hand.
func (c *Cluster) recordPIDs() {
	var b strings.Builder
	for _, p := range c.procs {
		fmt.Fprintf(&b, "%d %s\n", p.cmd.Process.Pid, p.name)
	}
	_ = os.WriteFile(filepath.Join(c.Dir, "pids"), []byte(b.String()), 0o644)
}

// waitFor polls check until it returns nil, the process exits, or the
// timeout passes.
func (c *Cluster) waitFor(ctx context.Context, p *proc, what string, timeout time.Duration, check func() error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		if last = check(); last == nil {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited while waiting for %s (%v); last lines of %s:\n%s", p.name, what, p.err, p.log, Tail(p.log, 30))
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.Canceled) {
				return fmt.Errorf("interrupted while waiting for %s", what)
			}
			return fmt.Errorf("timed out after %s waiting for %s: %v; last lines of %s:\n%s", timeout, what, last, p.log, Tail(p.log, 30))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Tail returns the last n lines of a file.
func Tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func (c *Cluster) startEtcd(ctx context.Context) error {
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		ports, err := freePorts(2)
		if err != nil {
			return err
		}
		client := "http://127.0.0.1:" + strconv.Itoa(ports[0])
		peer := "http://127.0.0.1:" + strconv.Itoa(ports[1])
		dataDir := filepath.Join(c.Dir, "etcd-data")
		_ = os.RemoveAll(dataDir)
		p, err := c.start("etcd",
			"--name=e2e",
			"--data-dir="+dataDir,
			"--listen-client-urls="+client,
			"--advertise-client-urls="+client,
			"--listen-peer-urls="+peer,
			"--initial-advertise-peer-urls="+peer,
			"--initial-cluster=e2e="+peer,
			"--initial-cluster-state=new",
			"--unsafe-no-fsync",
			"--quota-backend-bytes=1073741824",
			"--log-level=warn",
		)
		if err != nil {
			return err
		}
		hc := &http.Client{Timeout: 2 * time.Second}
		lastErr = c.waitFor(ctx, p, "etcd /health", 60*time.Second, func() error {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, client+"/health", nil)
			if err != nil {
				return err
			}
			resp, err := hc.Do(req)
			if err != nil {
				return err
			}
			body := readAll(resp)
			if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"health":"true"`) {
				return fmt.Errorf("etcd /health: %d %s", resp.StatusCode, body)
			}
			return nil
		})
		if lastErr == nil {
			c.etcdURL = client
			return nil
		}
		c.stopProc(p)
		if ctx.Err() != nil {
			return lastErr
		}
	}
	return lastErr
}

func readAll(resp *http.Response) string {
	defer func() { _ = resp.Body.Close() }()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return b.String()
}

func writeServiceAccountKey(path string) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
}

func (c *Cluster) startAPIServer(ctx context.Context) error {
	saKey := filepath.Join(c.Dir, "sa.key")
	if err := writeServiceAccountKey(saKey); err != nil {
		return err
	}
	tok := make([]byte, 16)
	if _, err := rand.Read(tok); err != nil {
		return err
	}
	c.Token = hex.EncodeToString(tok)
	tokenFile := filepath.Join(c.Dir, "tokens.csv")
	if err := os.WriteFile(tokenFile, []byte(c.Token+`,e2e-admin,e2e-admin-uid,"system:masters"`+"\n"), 0o600); err != nil {
		return err
	}
	certDir := filepath.Join(c.Dir, "certs")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return err
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := FreePort()
		if err != nil {
			return err
		}
		c.Server = "https://127.0.0.1:" + strconv.Itoa(port)
		p, err := c.start("kube-apiserver",
			"--etcd-servers="+c.etcdURL,
			"--etcd-prefix=/registry",
			"--bind-address=127.0.0.1",
			"--advertise-address=127.0.0.1",
			"--secure-port="+strconv.Itoa(port),
			"--cert-dir="+certDir,
			"--token-auth-file="+tokenFile,
			"--authorization-mode=RBAC",
			"--service-account-key-file="+saKey,
			"--service-account-signing-key-file="+saKey,
			"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
			"--service-cluster-ip-range=10.96.0.0/16",
			"--endpoint-reconciler-type=none",
			"--enable-priority-and-fairness=false",
			"--profiling=false",
		)
		if err != nil {
			return err
		}
		lastErr = c.waitFor(ctx, p, "kube-apiserver /readyz", 120*time.Second, func() error {
			return c.checkReady(ctx)
		})
		if lastErr == nil {
			break
		}
		c.stopProc(p)
		if !strings.Contains(lastErr.Error(), "address already in use") {
			return lastErr
		}
	}
	if lastErr != nil {
		return lastErr
	}
	return c.writeKubeconfig()
}

// checkReady asks /readyz with the admin token. The serving certificate is
// self-signed and written by the API server into its cert dir; until the
// server is up the CA is not there, so the first checks skip verification
// and the kubeconfig then pins the CA.
func (c *Cluster) checkReady(ctx context.Context) error {
	hc := &http.Client{
		Timeout:   3 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, Proxy: nil}, //nolint:gosec // loopback, self-signed
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.Server+"/readyz", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	body := readAll(resp)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("/readyz: %d %s", resp.StatusCode, strings.TrimSpace(body))
	}
	return nil
}

func (c *Cluster) writeKubeconfig() error {
	c.CAFile = filepath.Join(c.Dir, "certs", "apiserver.crt")
	if _, err := os.Stat(c.CAFile); err != nil {
		return fmt.Errorf("serving certificate: %w", err)
	}
	c.Kubeconfig = filepath.Join(c.Dir, "kubeconfig")
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: %s
    certificate-authority: %s
users:
- name: e2e-admin
  user:
    token: %s
contexts:
- name: e2e
  context:
    cluster: e2e
    user: e2e-admin
current-context: e2e
`, c.Server, c.CAFile, c.Token)
	return os.WriteFile(c.Kubeconfig, []byte(kc), 0o600)
}

func (c *Cluster) startControllerManager(ctx context.Context) error {
	p, err := c.start("kube-controller-manager",
		"--kubeconfig="+c.Kubeconfig,
		"--controllers=garbagecollector,namespace",
		"--leader-elect=false",
		"--secure-port=0",
		"--concurrent-gc-syncs=5",
	)
	if err != nil {
		return err
	}
	// The controller manager has no serving port here; wait until it logs
	// that the garbage collector has synced its caches.
	return c.waitFor(ctx, p, "garbage collector caches", 120*time.Second, func() error {
		b, err := os.ReadFile(p.log)
		if err != nil {
			return err
		}
		for _, marker := range []string{"all resource monitors have synced", "not all resource monitors could be synced"} {
			if bytes.Contains(b, []byte(marker)) {
				return nil
			}
		}
		return errors.New("garbage collector not synced yet")
	})
}

// Log returns the last lines of a component's log, for failure messages.
func (c *Cluster) Log(name string, lines int) string {
	return Tail(filepath.Join(c.Dir, name+".log"), lines)
}

func (c *Cluster) stopProc(p *proc) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// Stop stops every process by PID, newest first, and removes the working
// directory unless keep is true. It is safe to call more than once and
// from a signal handler goroutine.
func (c *Cluster) Stop() {
	c.StopKeep(false)
}

// StopKeep is Stop, optionally keeping the directory (logs) for inspection.
func (c *Cluster) StopKeep(keep bool) {
	if c == nil {
		return
	}
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return
	}
	c.stopped = true
	procs := c.procs
	c.mu.Unlock()
	for i := len(procs) - 1; i >= 0; i-- {
		c.stopProc(procs[i])
		c.logf("stopped %s (pid %d)", procs[i].name, procs[i].cmd.Process.Pid)
	}
	if c.ownDir && !keep {
		_ = os.RemoveAll(c.Dir)
	}
}
