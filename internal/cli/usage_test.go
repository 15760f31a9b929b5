package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
// pseudo-version of go build in a clone), else the commit.
func TestResolveVersion(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	tests := map[string]struct {
		stamped string
		info    *debug.BuildInfo
		want    string
	}{
		"-ldflags -X wins":   {"v0.3.0", &debug.BuildInfo{Main: debug.Module{Version: "v0.2.0"}}, "v0.3.0"},
		"go install ...@vX":  {"dev", &debug.BuildInfo{Main: debug.Module{Version: "v0.2.0"}}, "v0.2.0"},
		"go build, a commit": {"dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("0123456789abcdef0123", "false")}, "0123456789ab"},
		"go build, changes":  {"dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("0123456789abcdef0123", "true")}, "0123456789ab+dirty"},
		"nothing recorded":   {"dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
	}
	for name, tt := range tests {
		assert.Equal(t, tt.want, resolveVersion(tt.stamped, tt.info, true), name)
	}
	assert.Equal(t, "dev", resolveVersion("dev", nil, false))
}

// A plain go build in a git checkout reports the version Go records for it
// (a pseudo-version of the commit, +dirty with changes), not dev. The
// checkout is a fresh repository holding this module's Go files as they are
// now: Go records nothing for a git worktree (its .git is a file).
func TestVersionOfPlainGoBuild(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	git := func(dir string, args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
		return string(out)
	}
	if err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Run(); err != nil {
		t.Skip("not a git checkout: go build records no version")
	}
	repo := t.TempDir()
	files := strings.Fields(git(root, "ls-files", "-co", "--exclude-standard", "--", "*.go", "go.mod", "go.sum", ":!test/"))
	require.NotEmpty(t, files)
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(root, f))
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(repo, f)), 0o750))
		require.NoError(t, os.WriteFile(filepath.Join(repo, f), data, 0o600))
	}
	git(repo, "init", "--quiet")
	git(repo, "add", ".")
	git(repo, "-c", "user.name=test", "-c", "user.email=test@example.com", "commit", "--quiet", "-m", "snapshot")
	commit := strings.TrimSpace(git(repo, "rev-parse", "HEAD"))[:12]

	build := func() string {
		bin := filepath.Join(t.TempDir(), "flapp-services")
		cmd := exec.Command("go", "build", "-buildvcs=true", "-o", bin, ".")
		cmd.Dir = repo
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		flag, err := exec.Command(bin, "--version").Output()
		require.NoError(t, err)
		command, err := exec.Command(bin, "version").Output()
		require.NoError(t, err)
		assert.Equal(t, string(flag), string(command))
		return string(flag)
	}
	assert.Regexp(t, `^flapp-services v0\.0\.0-\d{14}-`+commit+`\n$`, build())

	require.NoError(t, os.WriteFile(filepath.Join(repo, "extra.go"), []byte("package main\n"), 0o600))
	assert.Regexp(t, `^flapp-services v0\.0\.0-\d{14}-`+commit+`\+dirty\n$`, build())
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
