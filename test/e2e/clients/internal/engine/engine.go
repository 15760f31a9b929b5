// Package engine gives the e2e-clients suites a real container engine and the
// real image: podman from Debian (installed by hack/podman.sh when missing),
// configured only through CONTAINERS_CONF, with podman-docker's `docker`
// first in PATH, and the flapp-services image built by `make image`.
//
// Every command it runs, and every process those start (kpt, kustomize and
// the engine they call), inherit the environment set by Setup.
package engine

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ClientRunArgs are the arguments kustomize's `container:` and kpt's `image:`
// put before the image name (kyaml runtimeutil/container, kpt
// internal/fnruntime/container.go).
var ClientRunArgs = []string{"run", "--rm", "-i", "--network", "none", "--user", "nobody", "--security-opt=no-new-privileges"}

// Repo returns the repository root (four levels above this file).
func Repo() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("engine: cannot locate source file")
	}
	// <repo>/test/e2e/clients/internal/engine/engine.go
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", "..", "..", ".."))
}

// Setup installs podman when missing (hack/podman.sh), and sets
// CONTAINERS_CONF and PATH (podman-docker's docker first) in this process's
// environment, so that every child sees them. Call it from TestMain.
func Setup() error {
	cmd := exec.Command("bash", filepath.Join(Repo(), "test/e2e/hack/podman.sh"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("hack/podman.sh: %w", err)
	}
	vars := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			vars[k] = v
		}
	}
	conf, shim := vars["CONTAINERS_CONF"], vars["DOCKER_SHIM_DIR"]
	if conf == "" || shim == "" {
		return fmt.Errorf("hack/podman.sh printed %q", out)
	}
	if err := os.Setenv("CONTAINERS_CONF", conf); err != nil {
		return err
	}
	return os.Setenv("PATH", shim+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// Result is what a finished command left behind.
type Result struct {
	Stdout, Stderr string
	ExitCode       int
}

// Run runs name with args in dir (env added to the current environment) and
// returns its output and exit code; it fails the test only when the command
// cannot be started.
func Run(t testing.TB, dir string, env []string, stdin []byte, name string, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := Result{Stdout: stdout.String(), Stderr: stderr.String()}
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("running %s %v: %v", name, args, err)
		}
		res.ExitCode = ee.ExitCode()
	}
	return res
}

// MustRun is Run that fails the test on a non-zero exit and returns stdout.
func MustRun(t testing.TB, dir string, name string, args ...string) string {
	t.Helper()
	res := Run(t, dir, nil, nil, name, args...)
	if res.ExitCode != 0 {
		t.Fatalf("%s %s: exit %d\nstdout:\n%s\nstderr:\n%s", name, strings.Join(args, " "), res.ExitCode, res.Stdout, res.Stderr)
	}
	return res.Stdout
}

// Lock serialises image builds across the suite's test processes (go test
// runs packages in parallel; all of them write bin/ and build into the same
// store). It returns the unlock function.
func Lock() (func(), error) {
	dir := filepath.Join(Repo(), ".cache")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, "e2e-clients-image.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	}, nil
}

// command runs name with args at the repository root and returns its stdout;
// the error carries stderr.
func command(name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = Repo()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w\n%s%s", name, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), nil
}

// Image is an image built by `make image`.
type Image struct {
	Name string // the IMAGE= it was built as
	ID   string // podman's image ID
	// Binary is a copy of the binary packed into the image
	// (bin/linux_<arch>/flapp-services of that build), for exec-mode runs of
	// the very same bytes.
	Binary string
}

// BuildImage runs `make image IMAGE=name ENGINE=podman` at the repository
// root (holding Lock) and returns the image. When binDir is not empty it
// receives a copy of the binary the image packs.
func BuildImage(name, binDir string) (Image, error) {
	unlock, err := Lock()
	if err != nil {
		return Image{}, err
	}
	defer unlock()
	start := time.Now()
	if _, err := command("make", "image", "IMAGE="+name, "ENGINE=podman"); err != nil {
		return Image{}, err
	}
	fmt.Fprintf(os.Stderr, "engine: make image IMAGE=%s done in %s\n", name, time.Since(start).Round(time.Second))
	id, err := ImageID(name)
	if err != nil {
		return Image{}, err
	}
	img := Image{Name: name, ID: id}
	if binDir != "" {
		b, err := os.ReadFile(filepath.Join(Repo(), "bin", "linux_"+runtime.GOARCH, "flapp-services"))
		if err != nil {
			return Image{}, err
		}
		img.Binary = filepath.Join(binDir, "flapp-services")
		if err := os.WriteFile(img.Binary, b, 0o755); err != nil {
			return Image{}, err
		}
	}
	return img, nil
}

// ImageID is the ID of a local image.
func ImageID(name string) (string, error) {
	out, err := command("podman", "image", "inspect", "--format", "{{.Id}}", name)
	return strings.TrimSpace(out), err
}

// RemoveImage removes a local image by name.
func RemoveImage(name string) error {
	_, err := command("podman", "rmi", name)
	return err
}

// PruneDangling removes the untagged images this project's Dockerfile made
// (label org.opencontainers.image.title=flapp-services): those a rebuild under
// the same name left behind, and the per-platform images of a removed
// image-oci index. It holds Lock, so no build of the suite is in progress.
func PruneDangling() error {
	unlock, err := Lock()
	if err != nil {
		return err
	}
	defer unlock()
	out, err := command("podman", "images", "--quiet", "--no-trunc", "--filter", "dangling=true",
		"--filter", "label=org.opencontainers.image.title=flapp-services")
	if err != nil {
		return err
	}
	ids := strings.Fields(out)
	if len(ids) == 0 {
		return nil
	}
	_, err = command("podman", append([]string{"rmi"}, ids...)...)
	return err
}

// CopyTree copies the directory src into dst (created), keeping file modes.
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

// Snapshot maps every file under dir (relative, slash-separated) to its
// content.
func Snapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
