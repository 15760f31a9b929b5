package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func runMain(args []string, stdin string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = Main("v1.2.3", args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestMainVersion(t *testing.T) {
	code, out, stderr := runMain([]string{"version"}, "")
	assert.Equal(t, 0, code)
	assert.Equal(t, "flapp-services v1.2.3\n", out)
	assert.Empty(t, stderr)
}

// A usage error is printed once; a failure already reported (ErrFailed)
// is not printed again.
func TestMainErrors(t *testing.T) {
	code, out, stderr := runMain([]string{"render", "--no-such-flag"}, "")
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Equal(t, "error: unknown flag: --no-such-flag\nRun 'flapp-services render --help' for usage.\n", stderr)

	code, out, stderr = runMain([]string{"render", "-"}, "kind: Foo\n")
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Equal(t, 1, strings.Count(stderr, "error"), stderr)
	assert.Contains(t, stderr, "not a Kubernetes object")
}

func TestMainKRMMode(t *testing.T) {
	code, out, stderr := runMain(nil, "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n")
	assert.Equal(t, 0, code, stderr)
	assert.Equal(t, "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n", out)
}
