package hostile

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The hostile world one run of the binary sees (kustomize_test.go): a
// repository written by the case, secrets and canaries beside it, fake
// programs first in PATH, a kustomize plugin home, a fresh TMPDIR and HOME,
// and a TCP listener every URL of the case points at. Nothing of it is
// shared between runs.

// The sidecar's settings (examples/argocd): its memory limit and the
// deadline of a generate.
const (
	sidecarMemory   = 640 << 20 // bytes of peak RSS
	sidecarDeadline = 60 * time.Second
	// straceDeadline is the backstop under strace: ptrace slows a
	// multi-threaded Go process's scheduling (futexes) many times over
	// (SECURITY.md, Hostile-input suite, has the measurement), so the
	// sidecar's deadline is checked by the runs without it.
	straceDeadline = 3 * sidecarDeadline
	// rssKill stops a run whose process tree passes it (a safety net for
	// the machine running the suite: an alias bomb grows by GiB a second).
	rssKill = 3 << 30
)

// fakePrograms are put first in PATH, each a canary: kustomize finds git
// and helm there, a container function docker or podman, and anything that
// starts a shell by name finds sh.
var fakePrograms = []string{
	"git", "helm", "docker", "podman", "nerdctl", "kustomize", "kubectl", "kpt", "sh", "bash", "ssh", "curl", "wget",
}

// pluginPath is the external kustomize plugin the cases configure
// (someteam.example.com/v1, kind Evil), as a plugin home holds it: its
// executable, a canary, waits in every plugin home kustomize looks in.
const pluginPath = "someteam.example.com/v1/evil/Evil"

// envSecretName is an environment variable of every run holding the
// secret marker (a token a sidecar might hold): no output may show it.
const envSecretName = "FLAPP_HOSTILE_TOKEN"

// hostileEnv is one run's world, under one fresh directory:
//
//	<dir>/repo                     the repository, the case's tree
//	<dir>/outside, <dir>/secret-dir-that-exists
//	                               kustomizations and files holding the secret
//	<dir>/canary/bin/<program>     fake programs, first in PATH
//	<dir>/canary/abs/canary.sh     the absolute canary cases name
//	<dir>/canary/FIRED-<name>      what a canary leaves when it runs
//	<dir>/xdg, <dir>/plugins, <dir>/home
//	                               kustomize plugin homes (XDG_CONFIG_HOME,
//	                               KUSTOMIZE_PLUGIN_HOME, HOME/.config)
//	<dir>/tmp                      TMPDIR, empty
type hostileEnv struct {
	dir, repo                    string
	canary, canaryBin, absCanary string
	tmp, home, xdg, plugins      string
	secret                       string
	straceLog                    string
	extraEnv                     []string // the mode's (Argo CD's variables)
	ln                           *listener
	canaryListing                []string
	replacer                     *strings.Replacer
	closeOnce                    sync.Once
	connections                  []string
}

// newEnv makes the world under dir (which must exist and be empty).
func newEnv(dir string) (_ *hostileEnv, err error) {
	ln, err := newListener()
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			ln.close()
		}
	}()
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, err
	}
	e := &hostileEnv{
		dir:       dir,
		repo:      filepath.Join(dir, "repo"),
		canary:    filepath.Join(dir, "canary"),
		canaryBin: filepath.Join(dir, "canary", "bin"),
		absCanary: filepath.Join(dir, "canary", "abs", "canary.sh"),
		tmp:       filepath.Join(dir, "tmp"),
		home:      filepath.Join(dir, "home"),
		xdg:       filepath.Join(dir, "xdg"),
		plugins:   filepath.Join(dir, "plugins"),
		straceLog: filepath.Join(dir, "strace.log"),
		secret:    "hunter2-SECRET-" + hex.EncodeToString(rnd[:]),
		ln:        ln,
	}
	e.replacer = strings.NewReplacer(
		"{{ADDR}}", ln.addr,
		"{{CASE}}", dir,
		"{{CANARY}}", e.absCanary,
		"{{SECRET}}", e.secret,
		"{{REPO}}", e.repo,
	)
	canary := func(name string) string {
		// An absolute interpreter, and a builtin redirection: the canary
		// itself starts nothing (the fake sh must not catch it).
		return fmt.Sprintf("#!/bin/sh\n: > '%s'\nexit 1\n", filepath.Join(e.canary, "FIRED-"+name))
	}
	for _, d := range []string{e.repo, e.canaryBin, e.tmp, e.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	for _, p := range fakePrograms {
		if err := writeFile(filepath.Join(e.canaryBin, p), canary(p), 0o755); err != nil {
			return nil, err
		}
	}
	scripts := map[string]string{
		e.absCanary: canary("abs"),
		filepath.Join(e.canary, "abs", "flapp-services"):                    canary("abs-flapp-services"),
		filepath.Join(e.xdg, "kustomize", "plugin", pluginPath):             canary("plugin"),
		filepath.Join(e.plugins, pluginPath):                                canary("plugin"),
		filepath.Join(e.home, ".config", "kustomize", "plugin", pluginPath): canary("plugin"),
	}
	for p, s := range scripts {
		if err := writeFile(p, s, 0o755); err != nil {
			return nil, err
		}
	}
	for rel, content := range outsideTree {
		if err := writeFile(filepath.Join(dir, rel), e.expand(content), 0o644); err != nil {
			return nil, err
		}
	}
	if e.canaryListing, err = listTree(e.canary); err != nil {
		return nil, err
	}
	return e, nil
}

// outsideTree is beside the repository in every world: what an escape
// would read. Each holds the secret.
var outsideTree = map[string]string{
	"outside/kustomization.yaml": "resources: [secret.yaml]\n",
	"outside/secret.yaml":        secretYAML,
	"outside/labels.yaml": "apiVersion: builtin\nkind: LabelTransformer\nmetadata: {name: leak}\n" +
		"labels: {leak: {{SECRET}}}\nfieldSpecs: [{path: metadata/labels, create: true}]\n",
	"outside/generator.yaml": "apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata: {name: leak}\nliterals: [leak={{SECRET}}]\n",
	"outside/flapp-services.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: flapp-services\n  annotations:\n" +
		"    config.kubernetes.io/function: |\n      container:\n        image: ghcr.io/fedlearner/flapp-services:v0.1.0\n" +
		"data: {ownerReferences: {{SECRET}}}\n",
	"outside/secret.env":                        "password={{SECRET}}\n",
	"secret-dir-that-exists/kustomization.yaml": "resources: [secret.yaml]\n",
	"secret-dir-that-exists/secret.yaml":        secretYAML,
}

const secretYAML = "apiVersion: v1\nkind: Secret\nmetadata: {name: db}\nstringData: {password: {{SECRET}}}\n"

func (e *hostileEnv) expand(s string) string { return e.replacer.Replace(s) }

// write writes a file of the case, rel to the repository ("../x" is beside
// it), its placeholders expanded.
func (e *hostileEnv) write(rel, content string) error {
	return writeFile(filepath.Join(e.repo, rel), e.expand(content), 0o644)
}

// link makes the symlink rel (to the repository) pointing at target, its
// placeholders expanded.
func (e *hostileEnv) link(rel, target string) error {
	full := filepath.Join(e.repo, rel)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return err
	}
	return os.Symlink(e.expand(target), full)
}

func writeFile(path, content string, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), mode)
}

// environ is the whole environment of a run: nothing of the test process's
// but PATH (after the fake programs) and a coverage directory.
func (e *hostileEnv) environ() []string {
	proxy := "http://" + e.ln.addr
	env := []string{
		"PATH=" + e.canaryBin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + e.home,
		"TMPDIR=" + e.tmp,
		"XDG_CONFIG_HOME=" + e.xdg,
		"KUSTOMIZE_PLUGIN_HOME=" + e.plugins,
		"GOMEMLIMIT=256MiB",
		"GOTRACEBACK=all",
		// A host that is not the listener is reached through it: a request
		// to github.com or example.com lands here, not on the Internet.
		"HTTP_PROXY=" + proxy, "HTTPS_PROXY=" + proxy, "ALL_PROXY=" + proxy,
		"http_proxy=" + proxy, "https_proxy=" + proxy, "all_proxy=" + proxy,
		envSecretName + "=" + e.secret,
	}
	if d := os.Getenv("GOCOVERDIR"); d != "" {
		env = append(env, "GOCOVERDIR="+d)
	}
	return append(env, e.extraEnv...)
}

// close stops the listener (once) and returns the connections it took.
func (e *hostileEnv) closeListener() []string {
	e.closeOnce.Do(func() { e.connections = e.ln.close() })
	return e.connections
}

// fired is what appeared in the canary directory since the world was made.
func (e *hostileEnv) fired() []string {
	now, err := listTree(e.canary)
	if err != nil {
		return []string{"cannot list the canary directory: " + err.Error()}
	}
	var out []string
	for _, n := range now {
		if !slices.Contains(e.canaryListing, n) {
			out = append(out, n)
		}
	}
	return out
}

// tmpLeft is what TMPDIR holds after the run.
func (e *hostileEnv) tmpLeft() []string {
	left, err := listTree(e.tmp)
	if err != nil {
		return []string{"cannot list TMPDIR: " + err.Error()}
	}
	return left
}

func listTree(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	return out, err
}

// listener accepts on 127.0.0.1 and records every connection (with the
// first bytes it sent), then closes it.
type listener struct {
	l     net.Listener
	addr  string
	mu    sync.Mutex
	conns []string
	wg    sync.WaitGroup
}

func newListener() (*listener, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	ln := &listener{l: l, addr: l.Addr().String()}
	ln.wg.Add(1)
	go func() {
		defer ln.wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			ln.wg.Add(1)
			go func() {
				defer ln.wg.Done()
				_ = c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
				buf := make([]byte, 80)
				n, _ := c.Read(buf)
				_ = c.Close()
				ln.mu.Lock()
				ln.conns = append(ln.conns, fmt.Sprintf("from %s: %q", c.RemoteAddr(), buf[:n]))
				ln.mu.Unlock()
			}()
		}
	}()
	return ln, nil
}

func (ln *listener) close() []string {
	_ = ln.l.Close()
	ln.wg.Wait()
	ln.mu.Lock()
	defer ln.mu.Unlock()
	return slices.Clone(ln.conns)
}

// outcome is what one run left behind.
type outcome struct {
	stdout, stderr *capture
	exitCode       int
	signal         string
	wall           time.Duration
	maxRSS         int64 // bytes, the process tree's largest
	timedOut       bool  // killed at the deadline
	deadline       time.Duration
	killedRSS      bool
	connections    []string
	fired          []string
	tmpLeft        []string
	trace          *straceLog // under strace only
}

// runIn runs argv (argv[0] absolute) in dir with the world's environment,
// in a process group of its own, killed at the deadline or when its tree
// passes rssKill.
func (e *hostileEnv) runIn(dir string, argv, needles []string, deadline time.Duration) (*outcome, error) {
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = e.environ()
	cmd.Stdin = nil
	o := &outcome{stdout: newCapture(1<<20, needles), stderr: newCapture(1<<20, needles)}
	cmd.Stdout, cmd.Stderr = o.stdout, o.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	pid := cmd.Process.Pid
	// The child was cloned sharing this process's memory (vfork), and
	// exec records that memory's high-water mark as the child's: its
	// rusage's Maxrss is at least this process's peak. Below that, the
	// polled VmHWM of the tree is the measure.
	inherited := procStat(os.Getpid(), "VmHWM")
	stop := make(chan struct{})
	var watch sync.WaitGroup
	var polled int64
	var killed bool
	watch.Add(1)
	go func() {
		defer watch.Done()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			polled = max(polled, treeStat(pid, "VmHWM", 0))
			if treeStat(pid, "VmRSS", 0) > rssKill {
				killed = true
				_ = syscall.Kill(-pid, syscall.SIGKILL)
				return
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	err := cmd.Wait()
	o.wall = time.Since(start)
	close(stop)
	watch.Wait()
	_ = syscall.Kill(-pid, syscall.SIGKILL) // whatever the run left running
	o.timedOut, o.deadline = ctx.Err() != nil, deadline
	o.killedRSS = killed
	o.maxRSS = polled
	if ps := cmd.ProcessState; ps != nil {
		o.exitCode = ps.ExitCode()
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			o.signal = ws.Signal().String()
		}
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok && ru.Maxrss*1024 > inherited { // KiB on Linux
			o.maxRSS = max(o.maxRSS, ru.Maxrss*1024)
		}
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) && !errors.Is(err, exec.ErrWaitDelay) {
		return nil, err
	}
	o.connections = e.closeListener()
	o.fired = e.fired()
	o.tmpLeft = e.tmpLeft()
	return o, nil
}

// treeStat is the largest value of a /proc/<pid>/status field in kB
// (VmRSS, VmHWM) over pid and its descendants, in bytes.
func treeStat(pid int, field string, depth int) int64 {
	v := procStat(pid, field)
	if depth > 20 {
		return v
	}
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return v
	}
	for _, task := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, task.Name()))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if child, err := strconv.Atoi(f); err == nil {
				v = max(v, treeStat(child, field, depth+1))
			}
		}
	}
	return v
}

func procStat(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				kib, _ := strconv.ParseInt(f[0], 10, 64)
				return kib * 1024
			}
		}
	}
	return 0
}

// capture keeps the head of a stream and its size, and finds needles
// anywhere in it (an output may be gigabytes).
type capture struct {
	limit   int
	head    bytes.Buffer
	n       int64
	tail    []byte
	needles []string
	found   map[string]bool
	keep    int
}

func newCapture(limit int, needles []string) *capture {
	c := &capture{limit: limit, needles: needles, found: map[string]bool{}}
	for _, n := range needles {
		c.keep = max(c.keep, len(n))
	}
	return c
}

func (c *capture) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	if room := c.limit - c.head.Len(); room > 0 {
		c.head.Write(p[:min(room, len(p))])
	}
	if len(c.needles) > 0 {
		window := slices.Concat(c.tail, p)
		for _, n := range c.needles {
			if !c.found[n] && bytes.Contains(window, []byte(n)) {
				c.found[n] = true
			}
		}
		if k := c.keep; len(window) > k {
			window = window[len(window)-k:]
		}
		c.tail = window
	}
	return len(p), nil
}

// has says whether s occurred anywhere in the stream (s must be a needle).
func (c *capture) has(s string) bool {
	if c.found[s] {
		return true
	}
	return strings.Contains(c.head.String(), s)
}

func (c *capture) String() string { return c.head.String() }

// straceLog is what `strace -f -e trace=execve,execveat,connect,socket`
// wrote.
type straceLog struct {
	execs    []string // each execve/execveat: the program, and its result when it failed
	connects []string
	sockets  []string
}

var (
	straceCall = regexp.MustCompile(`^\d+\s+(execve|execveat|connect|socket)\((.*)$`)
	firstArg   = regexp.MustCompile(`^(?:[^,]*,\s*)?"((?:[^"\\]|\\.)*)"`)
)

func parseStrace(path string) (*straceLog, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	l := &straceLog{}
	for _, line := range strings.Split(string(b), "\n") {
		m := straceCall.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		switch m[1] {
		case "execve", "execveat":
			prog := m[2]
			if a := firstArg.FindStringSubmatch(m[2]); a != nil {
				prog = a[1]
			}
			if i := strings.LastIndex(line, " = -1 "); i >= 0 {
				prog += " (" + strings.TrimSpace(line[i+len(" = -1 "):]) + ")"
			}
			l.execs = append(l.execs, prog)
		case "connect":
			l.connects = append(l.connects, strings.TrimSpace(line))
		case "socket":
			l.sockets = append(l.sockets, strings.TrimSpace(line))
		}
	}
	return l, nil
}

// straceBin is strace: STRACE_BIN (what `make integration` passes, from
// test/integration/hack/strace.sh), else the one on PATH.
func straceBin() (string, error) {
	if p := os.Getenv("STRACE_BIN"); p != "" {
		return p, nil
	}
	if p, err := exec.LookPath("strace"); err == nil {
		return p, nil
	}
	return "", errors.New("no strace: set STRACE_BIN or put strace on PATH; `make integration` installs Debian's " +
		"(test/integration/hack/strace.sh)")
}

// straceArgv wraps argv: every process of the run, its execs, connects
// and sockets, to the world's log. --seccomp-bpf stops the traced
// processes at these calls only: stopped at every call, a run that
// stats thousands of files takes many times as long (SECURITY.md,
// Hostile-input suite).
func (e *hostileEnv) straceArgv(strace string, argv []string) []string {
	return append([]string{strace, "-f", "--seccomp-bpf", "-qq", "-e", "trace=execve,execveat,connect,socket", "-e", "signal=none",
		"-o", e.straceLog}, argv...)
}
