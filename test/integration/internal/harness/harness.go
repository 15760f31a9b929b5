// Package harness holds what every integration test needs: the path of the
// flapp-services binary (FLAPP_SERVICES_BIN, or a fresh build), the repository
// root, a pinned kustomize installed with `go install`, and helpers to run
// commands and to read Kubernetes objects out of YAML streams.
package harness

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// KustomizeVersion is the kustomize release the examples are tested with. It
// is the newest release that builds with Go 1.26.
const KustomizeVersion = "v5.8.1"

var (
	binOnce sync.Once
	binPath string
	binErr  error
	tmpDirs []string
	tmpMu   sync.Mutex
)

// RepoRoot returns the absolute path of the repository root (two levels
// above test/integration).
func RepoRoot() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("harness: cannot locate source file")
	}
	// file = <root>/test/integration/internal/harness/harness.go
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", "..", ".."))
}

// Main runs the tests of a package and removes what the harness created.
func Main(m interface{ Run() int }) int {
	code := m.Run()
	tmpMu.Lock()
	defer tmpMu.Unlock()
	for _, d := range tmpDirs {
		_ = os.RemoveAll(d)
	}
	return code
}

// Binary returns the absolute path of the flapp-services binary: the one
// named by FLAPP_SERVICES_BIN, or one built from the repository root into a
// temporary directory (once per test process).
func Binary(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		if p := os.Getenv("FLAPP_SERVICES_BIN"); p != "" {
			abs, err := filepath.Abs(p)
			if err != nil {
				binErr = err
				return
			}
			if _, err := os.Stat(abs); err != nil {
				binErr = fmt.Errorf("FLAPP_SERVICES_BIN=%s: %w", p, err)
				return
			}
			binPath = abs
			return
		}
		dir, err := os.MkdirTemp("", "flapp-services-bin-")
		if err != nil {
			binErr = err
			return
		}
		tmpMu.Lock()
		tmpDirs = append(tmpDirs, dir)
		tmpMu.Unlock()
		out := filepath.Join(dir, "flapp-services")
		cmd := exec.Command("go", "build", "-o", out, ".")
		cmd.Dir = RepoRoot()
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOTOOLCHAIN=local")
		if b, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("building flapp-services from %s: %v\n%s", cmd.Dir, err, b)
			return
		}
		binPath = out
	})
	if binErr != nil {
		t.Fatalf("flapp-services binary: %v", binErr)
	}
	return binPath
}

// Kustomize returns the path of kustomize KustomizeVersion, installing it
// with `go install` into <repo>/.cache/bin when it is not there yet.
// Only Go is needed; the installed binary is reused by later runs.
func Kustomize(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(RepoRoot(), ".cache", "bin")
	path := filepath.Join(dir, "kustomize")
	if out, err := exec.Command(path, "version").Output(); err == nil &&
		strings.Contains(string(out), KustomizeVersion) {
		return path
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "install", "sigs.k8s.io/kustomize/kustomize/v5@"+KustomizeVersion)
	// Outside any module, with the local toolchain only.
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOTOOLCHAIN=local", "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("installing kustomize %s: %v\n%s", KustomizeVersion, err, b)
	}
	out, err := exec.Command(path, "version").Output()
	if err != nil || !strings.Contains(string(out), KustomizeVersion) {
		t.Fatalf("kustomize %s not usable after install: %v (%s)", KustomizeVersion, err, out)
	}
	return path
}

// Result is what a finished command left behind.
type Result struct {
	Stdout, Stderr string
	ExitCode       int
}

// Run runs name with args in dir with the extra environment env (added to
// the current one) and returns its output and exit code. It fails the test
// only when the command could not be started at all.
func Run(t testing.TB, dir string, env []string, name string, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := Result{Stdout: stdout.String(), Stderr: stderr.String()}
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("running %s %v: %v", name, args, err)
		}
		res.ExitCode = ee.ExitCode()
	}
	return res
}

// CopyTree copies the directory src into dst (created), files and
// directories only, keeping file modes.
func CopyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, info.Mode().Perm())
	})
	if err != nil {
		t.Fatalf("copying %s to %s: %v", src, dst, err)
	}
}

// Sandbox lays out a copy of the given repository-relative directories
// under a fresh temporary root, with the binary linked at
// <root>/bin/flapp-services, exactly where `make build` puts it. Examples can then be run verbatim,
// relative paths included, without touching the work tree.
func Sandbox(t testing.TB, dirs ...string) string {
	t.Helper()
	root := t.TempDir()
	for _, d := range dirs {
		CopyTree(t, filepath.Join(RepoRoot(), d), filepath.Join(root, d))
	}
	bin := Binary(t)
	if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bin, filepath.Join(root, "bin", "flapp-services")); err != nil {
		t.Fatal(err)
	}
	return root
}
