package kpt

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fedlearner/flapp-services/test/e2e/clients/internal/engine"
)

// `kpt fn doc --image` runs the image with --help (kpt's commands/fn/doc:
// `<engine> run --rm -i --stdin IMAGE --help`, an empty ResourceList on
// stdin) and prints what it prints: the README's mdtogo sections, the
// Short, the Long with its FunctionConfig settings table, and the Examples,
// the way the catalog's functions show theirs.
//
// kpt v1.0.0-beta.60.1 to beta.64 pass that --stdin, which neither podman
// 4.3.1 nor docker knows, so beta.61's fn doc fails with every engine; kpt
// v1.0.0-beta.65 drops it (https://github.com/kptdev/kpt/pull/4577). The
// test shows the failure, then runs the same kpt with a podman wrapper that
// drops that one argument and nothing else: the emulated part is kpt's fix.
func TestFnDoc(t *testing.T) {
	args := []string{"fn", "doc", "--image", env.Image.Name}
	res := engine.Run(t, engine.Repo(), []string{"KRM_FN_RUNTIME=podman"}, nil, env.kpt, args...)
	require.NotEqual(t, 0, res.ExitCode, "kpt fn doc ran without the wrapper: kpt no longer passes --stdin (fixed in v1.0.0-beta.65), drop podmanWithoutStdin")
	require.Contains(t, res.Stderr, "unknown flag: --stdin", "kpt fn doc failed for another reason")

	res = engine.Run(t, engine.Repo(), []string{"KRM_FN_RUNTIME=podman", "PATH=" + podmanWithoutStdin(t) + string(os.PathListSeparator) + os.Getenv("PATH")},
		nil, env.kpt, args...)
	require.Equal(t, 0, res.ExitCode, "kpt fn doc --image %s:\n%s\n%s", env.Image.Name, res.Stdout, res.Stderr)
	// Other checkouts on this machine build images under the same name.
	id, err := engine.ImageID(env.Image.Name)
	require.NoError(t, err)
	require.Equal(t, env.Image.ID, id, "%s was rebuilt while the suite ran", env.Image.Name)

	help := engine.MustRun(t, engine.Repo(), env.Image.Binary, "--help")
	assert.Equal(t, help+"\n", res.Stdout, "kpt fn doc prints the image's --help")

	b, err := os.ReadFile(filepath.Join(engine.Repo(), "README.md"))
	require.NoError(t, err)
	readme := string(b)
	words := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	shown := words(res.Stdout)
	assert.Contains(t, shown, words(mdtogo(t, readme, "Short")), "the README's Short")

	// Each row of the README's settings table, its setting and default
	// leading a line, as the help lays the table out.
	row := regexp.MustCompile("(?m)^\\| `([A-Za-z]+)` \\| `([^`]+)` \\| ")
	rows := row.FindAllStringSubmatch(mdtogo(t, readme, "Long"), -1)
	require.Len(t, rows, 3, "the README's FunctionConfig table")
	for _, r := range rows {
		assert.Regexp(t, "(?m)^"+regexp.QuoteMeta(r[1])+" +"+regexp.QuoteMeta(r[2])+" +\\S", res.Stdout, "the settings table's %s row", r[1])
	}

	for _, line := range strings.Split(mdtogo(t, readme, "Examples"), "\n") {
		if strings.HasPrefix(line, "kpt ") || strings.HasPrefix(line, "flapp-services ") {
			assert.Contains(t, res.Stdout, "\n  "+line+"\n", "the README's example")
		}
	}
}

// podmanWithoutStdin writes a `podman` that runs the real one, dropping the
// --stdin of kpt fn doc's `run --rm -i --stdin`, and returns its folder.
func podmanWithoutStdin(t *testing.T) string {
	t.Helper()
	podman, err := exec.LookPath("podman")
	require.NoError(t, err)
	dir := t.TempDir()
	script := `#!/bin/sh
if [ "$1" = run ] && [ "$2" = --rm ] && [ "$3" = -i ] && [ "$4" = --stdin ]; then
	shift 4
	exec '` + podman + `' run --rm -i "$@"
fi
exec '` + podman + `' "$@"
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "podman"), []byte(script), 0o755))
	return dir
}

// mdtogo is the README's section between <!--mdtogo:NAME--> and <!--mdtogo-->.
func mdtogo(t *testing.T, readme, name string) string {
	t.Helper()
	_, rest, ok := strings.Cut(readme, "<!--mdtogo:"+name+"-->")
	require.True(t, ok, "README.md has no <!--mdtogo:%s-->", name)
	section, _, ok := strings.Cut(rest, "<!--mdtogo-->")
	require.True(t, ok, "README.md: <!--mdtogo:%s--> is not closed", name)
	return section
}
