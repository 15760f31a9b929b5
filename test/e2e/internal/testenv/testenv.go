// Package testenv is the common set-up of the client suites under
// test/e2e/clients/: where the repository is, the flapp-services binary under
// test, the cached tool builds of test/e2e/hack/, and (for suites that need
// one) a control plane from internal/cluster with the FLApp CRD and any
// further CRDs installed. It must never import a client's own packages: each
// suite brings its client in as a built binary.
package testenv

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/fedlearner/flapp-services/test/e2e/internal/cluster"
)

// FLAppCRD is the CRD every cluster gets, relative to the repository root.
const FLAppCRD = "examples/crd/flapp-crd.yaml"

// Logf prints a progress line of the suite on stderr.
func Logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "e2e: "+format+"\n", args...)
}

// Repo returns the repository root: the nearest parent of the working
// directory whose go.mod is the main module's.
func Repo() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && strings.HasPrefix(string(b), "module github.com/fedlearner/flapp-services\n") {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no repository root above %s", dir)
		}
	}
}

// FlappServices returns $FLAPP_SERVICES_BIN, or builds the binary from the
// repository root into dir.
func FlappServices(repo, dir string) (string, error) {
	if p := os.Getenv("FLAPP_SERVICES_BIN"); p != "" {
		if !filepath.IsAbs(p) {
			return "", fmt.Errorf("FLAPP_SERVICES_BIN must be absolute, got %q", p)
		}
		_, err := os.Stat(p)
		return p, err
	}
	bin := filepath.Join(dir, "flapp-services")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOTOOLCHAIN=local")
	cmd.Stdout = os.Stderr
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build in %s: %w", repo, err)
	}
	return bin, nil
}

// Workspace is where a client suite starts: the repository root, a
// temporary folder and the binary under test.
type Workspace struct {
	Repo   string
	Dir    string // removed by Close
	Binary string // $FLAPP_SERVICES_BIN, or built into Dir
}

// NewWorkspace finds the repository, makes a temporary folder named for the
// suite and finds (or builds) the binary under test.
func NewWorkspace(suite string) (*Workspace, error) {
	repo, err := Repo()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "flapp-e2e-"+suite+"-")
	if err != nil {
		return nil, err
	}
	bin, err := FlappServices(repo, dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("flapp-services binary: %w", err)
	}
	return &Workspace{Repo: repo, Dir: dir, Binary: bin}, nil
}

// Close removes the temporary folder.
func (w *Workspace) Close() { _ = os.RemoveAll(w.Dir) }

// Hack runs test/e2e/hack/<script> (a cached, stamped tool build), passing
// its progress lines through to stderr, and returns the last line of its
// stdout: the directory holding what it built.
func Hack(repo, script string) (string, error) {
	cmd := exec.Command("bash", filepath.Join(repo, "test", "e2e", "hack", script))
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s: %w", script, err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	return lines[len(lines)-1], nil
}

// Cluster is a running control plane with clients for it.
type Cluster struct {
	*cluster.Cluster
	Kubectl string // the kubectl built with it
	Cfg     *rest.Config
	Kube    kubernetes.Interface
	Dyn     dynamic.Interface
}

// StartCluster builds (or finds cached) the Kubernetes binaries, starts a
// control plane, and installs the FLApp CRD and the CRDs in crds (files or
// directories of YAML files) before the controllers start, waiting until
// every CRD is Established. The caller stops it with Stop.
func StartCluster(ctx context.Context, repo string, crds ...string) (*Cluster, error) {
	binDir, err := Hack(repo, "build-k8s.sh")
	if err != nil {
		return nil, err
	}
	kubectl := filepath.Join(binDir, "kubectl")
	files := []string{filepath.Join(repo, FLAppCRD)}
	for _, p := range crds {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			files = append(files, p)
			continue
		}
		m, err := filepath.Glob(filepath.Join(p, "*.yaml"))
		if err != nil {
			return nil, err
		}
		files = append(files, m...)
	}
	install := func(c *cluster.Cluster) error {
		args := []string{"apply", "--server-side", "--field-manager=e2e"}
		for _, f := range files {
			args = append(args, "-f", f)
		}
		for _, a := range [][]string{args, {"wait", "--for=condition=Established", "--timeout=60s", "crd", "--all"}} {
			cmd := exec.Command(kubectl, append([]string{"--kubeconfig", c.Kubeconfig}, a...)...)
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("kubectl %s: %v\n%s", strings.Join(a, " "), err, out)
			}
		}
		return nil
	}
	c, err := cluster.Start(ctx, cluster.Options{BinDir: binDir, BeforeControllers: install, Log: Logf})
	if err != nil {
		return nil, err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		c.Stop()
		return nil, err
	}
	cfg.QPS, cfg.Burst, cfg.Proxy = 200, 400, nil
	out := &Cluster{Cluster: c, Kubectl: kubectl, Cfg: cfg}
	if out.Kube, err = kubernetes.NewForConfig(cfg); err == nil {
		out.Dyn, err = dynamic.NewForConfig(cfg)
	}
	if err != nil {
		c.Stop()
		return nil, err
	}
	return out, nil
}

// Run runs kubectl against the cluster and returns its stdout; on failure
// the error carries stderr.
func (c *Cluster) Run(stdin []byte, args ...string) (string, error) {
	cmd := exec.Command(c.Kubectl, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.Kubeconfig)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("kubectl %s: %w\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String(), nil
}
