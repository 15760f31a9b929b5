package engine

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// KustomizeVersion is the kustomize the suites run (the same as test/integration's).
const KustomizeVersion = "v5.8.1"

// Kustomize returns <repo>/.cache/bin/kustomize, installing KustomizeVersion
// there with `go install` when it is missing or another version.
func Kustomize() (string, error) {
	dir := filepath.Join(Repo(), ".cache", "bin")
	path := filepath.Join(dir, "kustomize")
	if out, err := exec.Command(path, "version").Output(); err == nil && strings.Contains(string(out), KustomizeVersion) {
		return path, nil
	}
	start := time.Now()
	fmt.Fprintf(os.Stderr, "engine: installing kustomize %s into %s\n", KustomizeVersion, dir)
	cmd := exec.Command("go", "install", "sigs.k8s.io/kustomize/kustomize/v5@"+KustomizeVersion)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOTOOLCHAIN=local", "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("installing kustomize %s: %w\n%s", KustomizeVersion, err, b)
	}
	fmt.Fprintf(os.Stderr, "engine: kustomize installed in %s\n", time.Since(start).Round(time.Second))
	return path, nil
}
