// Package release runs the release path of .github/workflows/release.yml and
// the signed Flux artifact of examples/flux against real parts, all on
// 127.0.0.1: the CNCF distribution registry and cosign, built from source by
// hack/build-release-tools.sh; `make image-push`, `make sbom` (syft, built
// from source by the Makefile), `make image-push-floating` and `make dist`,
// the targets the workflow runs; podman from Debian; the real kpt and
// kustomize pulling the function from the registry by digest.
//
// One step differs from the workflow, and cannot be otherwise here: the
// workflow signs keyless (a Fulcio certificate for the GitHub OIDC identity,
// logged in Rekor), and no machine of this project reaches Fulcio or Rekor.
// The suite signs with a key pair from `cosign generate-key-pair` instead
// (`cosign sign --key … --tlog-upload=false`, `cosign verify --key …
// --insecure-ignore-tlog=true`). Everything around the signature (what is
// signed, by digest; the attestation and its SPDX predicate; what a verifier
// fetches and rejects) is the same code path in cosign.
//
// The registry serves plain HTTP on loopback: podman (and kpt's and
// kustomize's podman) reach it through a registries.conf that marks it
// insecure (CONTAINERS_REGISTRIES_CONF, no system-wide change), cosign with
// --allow-http-registry, syft with SYFT_REGISTRY_INSECURE_USE_HTTP. TLS with
// a self-made CA would need the CA in podman's system certificate folders;
// and transport security is not what the suite proves: a verifier must
// reject a changed or re-tagged image whatever the registry serves, which
// TestRelease shows by changing the registry's own storage.
package release

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fedlearner/flapp-services/test/e2e/clients/internal/engine"
	"github.com/fedlearner/flapp-services/test/e2e/internal/testenv"
)

var env struct {
	tools     string // hack/build-release-tools.sh's folder: registry, cosign, fluxoci
	kpt       string
	kustomize string
	work      string // this run's temporary folder
	flapp     string // the binary under test ($FLAPP_SERVICES_BIN)
	registry  string // host:port of the registry
	storage   string // the registry's storage root
	key, pub  string // the cosign key pair that signs
	otherPub  string // the public key of another pair, that signed nothing
}

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "clients/release:", err)
		return 1
	}
	if err := engine.Setup(); err != nil {
		return fail(err)
	}
	if _, err := exec.LookPath("jq"); err != nil {
		// The example workflow's push step reads flux's JSON with jq, as
		// Flux's own docs do; GitHub's runners have it.
		return fail(errors.New("jq is needed (apt-get install jq)"))
	}
	var err error
	if env.tools, err = testenv.Hack(engine.Repo(), "build-release-tools.sh"); err != nil {
		return fail(err)
	}
	if env.kpt, err = testenv.Hack(engine.Repo(), "build-kpt.sh"); err != nil {
		return fail(err)
	}
	if env.kustomize, err = engine.Kustomize(); err != nil {
		return fail(err)
	}
	if err := buildSyft(); err != nil {
		return fail(err)
	}
	ws, err := testenv.NewWorkspace("release")
	if err != nil {
		return fail(err)
	}
	defer ws.Close()
	env.work, env.flapp = ws.Dir, ws.Binary

	stop, err := startRegistry()
	if err != nil {
		return fail(err)
	}
	defer stop()
	if err := trustRegistry(); err != nil {
		return fail(err)
	}
	if env.key, env.pub, err = keyPair("signer"); err != nil {
		return fail(err)
	}
	if _, env.otherPub, err = keyPair("other"); err != nil {
		return fail(err)
	}

	code := m.Run()
	cleanImages()
	return code
}

// buildSyft builds the Makefile's syft (what `make sbom` runs) before the
// tests, outside engine.Lock: cold, it takes minutes.
func buildSyft() error {
	b, err := os.ReadFile(filepath.Join(engine.Repo(), "Makefile"))
	if err != nil {
		return err
	}
	m := regexp.MustCompile(`(?m)^SYFT_VERSION\s*:=\s*(\S+)$`).FindSubmatch(b)
	if m == nil {
		return errors.New("Makefile: no SYFT_VERSION")
	}
	// The rule's target is $(CURDIR)/.cache/bin/syft-<version>.
	cmd := exec.Command("make", "--no-print-directory", filepath.Join(engine.Repo(), ".cache/bin/syft-"+string(m[1])))
	cmd.Dir = engine.Repo()
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

// startRegistry starts the distribution registry on a free loopback port,
// storing into the work folder, waits until GET /v2/ answers 200, and
// returns the function that stops it (by PID: SIGTERM, then SIGKILL).
func startRegistry() (func(), error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	env.registry = fmt.Sprintf("127.0.0.1:%d", port)
	env.storage = filepath.Join(env.work, "registry")
	config := filepath.Join(env.work, "registry.yml")
	err = os.WriteFile(config, []byte(fmt.Sprintf(`version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %s
http:
  addr: %s
`, env.storage, env.registry)), 0o644)
	if err != nil {
		return nil, err
	}
	logFile, err := os.Create(filepath.Join(env.work, "registry.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(filepath.Join(env.tools, "registry"), "serve", config)
	// No OpenTelemetry exporter: nothing listens for one.
	cmd.Env = append(os.Environ(), "OTEL_TRACES_EXPORTER=none", "OTEL_METRICS_EXPORTER=none", "OTEL_LOGS_EXPORTER=none")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Stopped by stop below; and killed with this process should a panic
	// skip TestMain's deferred calls.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		_ = logFile.Close()
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + env.registry + "/v2/")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				fmt.Fprintf(os.Stderr, "clients/release: registry on %s (pid %d)\n", env.registry, cmd.Process.Pid)
				return stop, nil
			}
		}
		select {
		case <-exited:
			b, _ := os.ReadFile(logFile.Name())
			return nil, fmt.Errorf("the registry exited:\n%s", b)
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			b, _ := os.ReadFile(logFile.Name())
			return nil, fmt.Errorf("the registry did not answer on %s within 30s:\n%s", env.registry, b)
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// trustRegistry points podman, in this process and every child (make, kpt,
// kustomize), at a registries.conf that marks the loopback registry
// insecure (plain HTTP).
func trustRegistry() error {
	conf := filepath.Join(env.work, "registries.conf")
	err := os.WriteFile(conf, []byte(fmt.Sprintf("[[registry]]\nlocation = %q\ninsecure = true\n", env.registry)), 0o644)
	if err != nil {
		return err
	}
	return os.Setenv("CONTAINERS_REGISTRIES_CONF", conf)
}

// cosignPassword protects the suite's throw-away private keys.
const cosignPassword = "e2e-release"

// cosignEnv is the environment of every cosign run: the key's password, and
// a TUF cache of this run's own (a verification with a key reads none).
func cosignEnv() []string {
	return []string{"COSIGN_PASSWORD=" + cosignPassword, "TUF_ROOT=" + filepath.Join(env.work, "tuf"), "HOME=" + env.work}
}

// keyPair runs `cosign generate-key-pair` in a folder of its own and returns
// the private and public key files.
func keyPair(name string) (string, string, error) {
	dir := filepath.Join(env.work, "keys-"+name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", err
	}
	cmd := exec.Command(filepath.Join(env.tools, "cosign"), "generate-key-pair")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), cosignEnv()...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("cosign generate-key-pair: %w\n%s", err, out)
	}
	return filepath.Join(dir, "cosign.key"), filepath.Join(dir, "cosign.pub"), nil
}

// cosign runs the built cosign with args.
func cosign(t *testing.T, args ...string) engine.Result {
	t.Helper()
	return engine.Run(t, env.work, cosignEnv(), nil, filepath.Join(env.tools, "cosign"), args...)
}

// localImages are the names this suite left in podman's store (manifest
// lists of image-push, images pulled by kpt and kustomize), removed at the end.
var localImages []string

func cleanImages() {
	for _, name := range localImages {
		if err := exec.Command("podman", "manifest", "rm", name).Run(); err != nil {
			_ = exec.Command("podman", "rmi", name).Run()
		}
	}
	if err := engine.PruneDangling(); err != nil {
		fmt.Fprintln(os.Stderr, "clients/release:", err)
	}
}

// makeTarget runs `make args...` at the repository root, holding
// engine.Lock (bin/ and podman's store are shared with the other suites);
// after is called before the lock is released, to copy what the target
// left in bin/.
func makeTarget(t *testing.T, extraEnv []string, after func(), args ...string) engine.Result {
	t.Helper()
	unlock, err := engine.Lock()
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	start := time.Now()
	res := runLong(t, engine.Repo(), extraEnv, "make", args...)
	t.Logf("make %s: exit %d in %s", strings.Join(args, " "), res.ExitCode, time.Since(start).Round(time.Second))
	if res.ExitCode == 0 && after != nil {
		after()
	}
	return res
}

// runLong is engine.Run for builds that may take longer than its 10
// minutes: a cold cross-build of six platforms on a busy 2-core machine.
func runLong(t *testing.T, dir string, extraEnv []string, name string, args ...string) engine.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), extraEnv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := engine.Result{Stdout: stdout.String(), Stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		res.ExitCode = ee.ExitCode()
	case err != nil:
		t.Fatalf("running %s %v: %v", name, args, err)
	}
	return res
}
