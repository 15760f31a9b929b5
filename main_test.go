package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The version the binary reports: make build (and the image and release
// binaries, built with the same LDFLAGS) stamp main.version with -ldflags -X.
// -X sets a package-level string variable and silently ignores anything else
// (a constant, another type, another name): only a built binary shows
// whether it took. What an unstamped binary reports is TestResolveVersion's.
func TestVersionStamped(t *testing.T) {
	makefile, err := os.ReadFile("Makefile")
	require.NoError(t, err)
	assert.Regexp(t, regexp.MustCompile(`(?m)^LDFLAGS\s*:=.*-X main\.version=\$\(VERSION\)`), string(makefile))

	bin := filepath.Join(t.TempDir(), "flapp-services")
	build := exec.Command("go", "build", "-o", bin, "-ldflags", "-s -w -X main.version=v9.8.7-stamp", ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	out, err = exec.Command(bin, "version").Output()
	require.NoError(t, err)
	assert.Equal(t, "flapp-services v9.8.7-stamp\n", string(out))
}
