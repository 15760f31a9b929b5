package main

import (
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The version the binary reports: make build (and the image and release
// binaries, built with the same LDFLAGS) stamp main.version with -ldflags -X;
// a plain go build leaves it at "dev", which internal/cli replaces with what
// Go records in the binary (TestResolveVersion).
func TestVersionUnstamped(t *testing.T) {
	// -X sets a package-level string variable and silently ignores anything
	// else: a constant (whose address does not compile), another type,
	// another name.
	stamped := &version
	assert.Equal(t, "dev", *stamped, "a plain go build must report what Go records, not a version of its own")

	makefile, err := os.ReadFile("Makefile")
	require.NoError(t, err)
	assert.Regexp(t, regexp.MustCompile(`(?m)^LDFLAGS\s*:=.*-X main\.version=\$\(VERSION\)`), string(makefile))
}
