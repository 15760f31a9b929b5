package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Processes: each component runs as a child with a parent-death signal,
// logs to <Dir>/<name>.log and is stopped by PID.

type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
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
