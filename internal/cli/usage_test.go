package cli

import (
	"bytes"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/fedlearner/flapp-services/fn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --version and version print the same line.
func TestVersionFlag(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		code, out, stderr := runMain(args, "")
		assert.Equal(t, 0, code, args)
		assert.Equal(t, "flapp-services v1.2.3\n", out, args)
		assert.Empty(t, stderr, args)
	}
}

// The version comes from -ldflags -X when stamped, else from what Go
// records in the binary: the module version (go install ...@vX, or the
// pseudo-version of go build in a clone), else the commit. The build infos
// are the ones Go writes for each way of building; main.go's version is
// "dev" when nothing stamps it, and what -X stamps when it does (TestVersionStamped in package main).
func TestResolveVersion(t *testing.T) {
	const commit = "0123456789abcdef0123456789abcdef01234567"
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{
			{Key: "-buildmode", Value: "exe"}, {Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: rev}, {Key: "vcs.time", Value: "2026-12-01T09:30:00Z"}, {Key: "vcs.modified", Value: modified},
		}
	}
	module := func(version string, settings []debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{Path: "github.com/fedlearner/flapp-services", Main: debug.Module{Path: "github.com/fedlearner/flapp-services", Version: version}, Settings: settings}
	}
	tests := map[string]struct {
		stamped string
		info    *debug.BuildInfo
		want    string
	}{
		"-ldflags -X wins":  {"v0.3.0", module("v0.2.0", nil), "v0.3.0"},
		"-X wins over vcs":  {"v0.3.0", module("v0.0.0-20261201093000-0123456789ab+dirty", vcs(commit, "true")), "v0.3.0"},
		"go install ...@vX": {"dev", module("v0.2.0", nil), "v0.2.0"},
		"an empty -X":       {"", module("v0.2.0", nil), "v0.2.0"},
		// go build in a clone (Go 1.24 and later): a pseudo-version of the
		// commit, +dirty when the tree has changes.
		"go build in a clone":              {"dev", module("v0.0.0-20261201093000-0123456789ab", vcs(commit, "false")), "v0.0.0-20261201093000-0123456789ab"},
		"go build in a clone with changes": {"dev", module("v0.0.0-20261201093000-0123456789ab+dirty", vcs(commit, "true")), "v0.0.0-20261201093000-0123456789ab+dirty"},
		"go build on a tag":                {"dev", module("v1.4.0", vcs(commit, "false")), "v1.4.0"},
		// No module version recorded, only the commit (older toolchains).
		"a commit":              {"dev", module("(devel)", vcs(commit, "false")), "0123456789ab"},
		"a commit with changes": {"dev", module("(devel)", vcs(commit, "true")), "0123456789ab+dirty"},
		"no version at all":     {"dev", module("", vcs(commit, "false")), "0123456789ab"},
		"a short revision":      {"dev", module("(devel)", vcs("0123abc", "false")), "0123abc"},
		// -buildvcs=false, a git worktree (its .git is a file), no VCS.
		"nothing recorded": {"dev", module("(devel)", []debug.BuildSetting{{Key: "-buildmode", Value: "exe"}}), "dev"},
	}
	for name, tt := range tests {
		assert.Equal(t, tt.want, resolveVersion(tt.stamped, tt.info, true), name)
	}
	assert.Equal(t, "dev", resolveVersion("dev", nil, false), "no build info")
	assert.Equal(t, "dev", resolveVersion("", nil, false), "no build info, an empty -X")
}

func TestCompletion(t *testing.T) {
	for shell, marker := range map[string]string{
		"bash": "complete -o default -F __start_flapp-services flapp-services",
		"zsh":  "#compdef flapp-services",
		"fish": "complete -c flapp-services",
	} {
		code, out, stderr := runMain([]string{"completion", shell}, "")
		assert.Equal(t, 0, code, shell)
		assert.Contains(t, out, marker, shell)
		assert.Empty(t, stderr, shell)
	}
}

// Unknown flags and commands say where the usage is, in one line.
func TestUsageHints(t *testing.T) {
	tests := map[string]struct {
		args []string
		want string
	}{
		"unknown flag":              {[]string{"--bogus"}, "error: unknown flag: --bogus\nRun 'flapp-services --help' for usage.\n"},
		"unknown flag of a command": {[]string{"discover", "--bogus"}, "error: unknown flag: --bogus\nRun 'flapp-services discover --help' for usage.\n"},
		"bad flag value":            {[]string{"render", "--max-file-size", "x"}, "Run 'flapp-services render --help' for usage.\n"},
		"unknown command":           {[]string{"frobnicate"}, "error: unknown command \"frobnicate\" for \"flapp-services\"\nRun 'flapp-services --help' for usage.\n"},
		"unknown command, a typo":   {[]string{"rendr"}, "error: unknown command \"rendr\" for \"flapp-services\" (did you mean render?)\nRun 'flapp-services --help' for usage.\n"},
		"an argument to version":    {[]string{"version", "x"}, "error: unknown command \"x\" for \"flapp-services version\"\nRun 'flapp-services version --help' for usage.\n"},
	}
	for name, tt := range tests {
		code, out, stderr := runMain(tt.args, "")
		assert.Equal(t, 1, code, name)
		assert.Empty(t, out, name)
		assert.True(t, strings.HasSuffix(stderr, tt.want), "%s: %q", name, stderr)
		assert.Equal(t, 1, strings.Count(stderr, "Run '"), name)
	}
}

// Started by hand with nothing piped in, KRM mode says what to do and
// fails instead of waiting. /dev/null is a character device, as a terminal
// is; a pipe is what kustomize and kpt give it.
func TestKRMModeOnATerminal(t *testing.T) {
	devNull, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer devNull.Close() //nolint:errcheck // read-only
	var out, errOut bytes.Buffer
	code := Main("v1.2.3", nil, devNull, &out, &errOut)
	assert.Equal(t, 1, code)
	assert.Empty(t, out.String())
	assert.Contains(t, errOut.String(), "stdin is a terminal, not a ResourceList")
	assert.Contains(t, errOut.String(), "flapp-services < resource-list.yaml")
	assert.Contains(t, errOut.String(), "Run 'flapp-services --help' for usage")

	r, w, err := os.Pipe()
	require.NoError(t, err)
	go func() {
		_, _ = w.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n")
		_ = w.Close()
	}()
	out.Reset()
	errOut.Reset()
	code = Main("v1.2.3", nil, r, &out, &errOut)
	assert.Equal(t, 0, code, errOut.String())
	assert.Equal(t, "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n", out.String())
}

func TestMaxServicesHelp(t *testing.T) {
	code, out, _ := runMain([]string{"render", "--help"}, "")
	assert.Equal(t, 0, code)
	assert.Regexp(t, `--max-services int\s+most Services one run may generate; when unset, the config's maxServices applies \(default 100000\)`, out)
}

// The root's --help is the README's mdtogo sections (help_gen.go): Short,
// Long with the FunctionConfig settings, Examples; the commands keep their own.
func TestRootHelpIsTheReadme(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		code, out, stderr := runMain(args, "")
		assert.Equal(t, 0, code, args)
		assert.Empty(t, stderr, args)
		assert.True(t, strings.HasPrefix(out, readmeLong+"\n\n"), "%v: the help does not start with the README's Short and Long:\n%s", args, out)
		assert.Contains(t, out, "\nExamples:\n"+readmeExamples+"\n", args)
		// The settings table, each row with the default the code applies.
		def := fn.DefaultConfig()
		for setting, value := range map[string]any{"ownerReferences": def.OwnerReferences, "maxServicesPerFLApp": def.MaxServicesPerFLApp, "maxServices": def.MaxServices} {
			assert.Regexp(t, fmt.Sprintf(`\n%s +%v +\S`, setting, value), out, args)
		}
	}
	for _, command := range []string{"render", "discover", "version"} {
		code, out, _ := runMain([]string{command, "--help"}, "")
		assert.Equal(t, 0, code, command)
		assert.NotContains(t, out, "### FunctionConfig", command)
		assert.NotContains(t, out, readmeExamples, command)
	}
}
