package hostile

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	h "github.com/fedlearner/flapp-services/test/integration/internal/harness"
)

// Hostile kustomizations: a repository anyone can push a branch to, built
// by `flapp-services render` (as Argo CD's plugin and CI run it) and looked
// at by `discover`. Whatever the repository holds, the binary starts no
// process (not git, helm, a shell, a container engine, a plugin), opens no
// socket, writes nothing to TMPDIR, shows no byte from outside the tree,
// and stays within the Argo CD sidecar's limits (a 60 s deadline, 640 MiB;
// GOMEMLIMIT=256MiB); a refusal exits 1 with nothing on stdout and says
// where: the kustomization file and the entry. The cases are in
// kustomize_cases_test.go, the world each run sees in sandbox_test.go.

// mode is one way the binary meets a repository.
type mode struct {
	name     string
	argocd   bool // run in the Application's directory, with Argo CD's environment
	discover bool // `discover --argocd-env .`: only the common promises
}

var (
	modeRender   = mode{name: "render"}
	modeArgoCD   = mode{name: "argocd", argocd: true}
	modeDiscover = mode{name: "discover", argocd: true, discover: true}
	allModes     = []mode{modeRender, modeArgoCD, modeDiscover}
)

// heavy bounds how many heavy cases run at once, whatever -parallel says:
// before the fix one could hold GiB.
var heavy = make(chan struct{}, 2)

// prepare makes the case's world for one mode under dir: its tree, and
// where and how the binary runs. It returns the working directory and the
// arguments.
func prepare(c kcase, m mode, dir string) (*hostileEnv, string, []string, error) {
	e, err := newEnv(dir)
	if err != nil {
		return nil, "", nil, err
	}
	fail := func(err error) (*hostileEnv, string, []string, error) {
		e.closeListener()
		return nil, "", nil, err
	}
	if c.realGit {
		if err := os.Remove(filepath.Join(e.canaryBin, "git")); err != nil {
			return fail(err)
		}
		if e.canaryListing, err = listTree(e.canary); err != nil {
			return fail(err)
		}
	}
	for rel, content := range c.files {
		if err := e.write(rel, content); err != nil {
			return fail(err)
		}
	}
	for rel, target := range c.links {
		if err := e.link(rel, target); err != nil {
			return fail(err)
		}
	}
	if c.gen != nil {
		if err := c.gen(e); err != nil {
			return fail(fmt.Errorf("generating the tree: %w", err))
		}
	}
	app := c.appDir()
	if !m.argocd {
		return e, e.repo, []string{"render", app}, nil
	}
	e.extraEnv = []string{
		"ARGOCD_APP_SOURCE_PATH=" + app,
		"ARGOCD_APP_NAME=hostile",
		"ARGOCD_APP_NAMESPACE=argocd",
		"ARGOCD_APP_REVISION=0000000000000000000000000000000000000000",
		"ARGOCD_APP_SOURCE_REPO_URL=http://" + e.ln.addr + "/org/repo.git",
		"ARGOCD_APP_SOURCE_TARGET_REVISION=main",
	}
	cmd := "render"
	if m.discover {
		cmd = "discover"
	}
	return e, filepath.Join(e.repo, app), []string{cmd, "--argocd-env", "."}, nil
}

// wants are the case's stderr substrings for the mode, {app} and {root}
// spelt as the mode names paths (from its working directory).
func (c kcase) wants(m mode) []string {
	app, root := c.appDir()+"/", ""
	if app == "./" {
		app = ""
	}
	if m.argocd {
		if app != "" {
			rel, _ := filepath.Rel(filepath.Join("/r", c.appDir()), "/r")
			root = rel + "/"
		}
		app = ""
	}
	r := strings.NewReplacer("{app}", app, "{root}", root)
	out := make([]string, len(c.want))
	for i, w := range c.want {
		out[i] = r.Replace(w)
	}
	return out
}

func (c kcase) appDir() string {
	if c.app == "" {
		return "."
	}
	return c.app
}

// crashSigns on stderr are a Go crash.
var crashSigns = []string{"panic:", "goroutine ", "fatal error:"}

// runCase runs one case in one mode (under strace when strace is not
// ""), in a fresh world under dir, killed at the deadline.
func runCase(c kcase, m mode, dir, bin, strace string, deadline time.Duration) (*hostileEnv, *outcome, error) {
	e, wd, args, err := prepare(c, m, dir)
	if err != nil {
		return nil, nil, err
	}
	argv := append([]string{bin}, args...)
	if strace != "" {
		argv = e.straceArgv(strace, argv)
	}
	needles := slices.Concat(crashSigns, []string{e.secret}, c.wants(m), c.stdout)
	if c.heavy {
		heavy <- struct{}{}
		defer func() { <-heavy }()
	}
	o, err := e.runIn(wd, argv, needles, deadline)
	if err != nil {
		e.closeListener()
		return nil, nil, err
	}
	if strace != "" {
		if o.trace, err = parseStrace(e.straceLog); err != nil {
			return nil, nil, fmt.Errorf("reading strace's log (exit %d, stderr %s): %w", o.exitCode, head(o.stderr.String()), err)
		}
	}
	return e, o, nil
}

// check asserts every promise on one run.
func check(t *testing.T, c kcase, m mode, e *hostileEnv, o *outcome) {
	t.Helper()
	stderr := o.stderr.String()
	where := fmt.Sprintf("exit %d, %.1fs, %d MiB, %d bytes on stdout", o.exitCode, o.wall.Seconds(), o.maxRSS>>20, o.stdout.n)
	defer func() {
		if t.Failed() {
			t.Logf("%s %s: %s; stderr:\n%s", c.name, m.name, where, head(stderr))
		}
	}()
	if o.trace == nil {
		assert.False(t, o.timedOut, "past the sidecar's deadline of %s: killed (%s)", o.deadline, where)
	} else {
		assert.False(t, o.timedOut, "a hang: no exit in %s under strace, killed (%s)", o.deadline, where)
	}
	assert.False(t, o.killedRSS, "killed when its processes passed %d MiB (%s)", rssKill>>20, where)
	assert.Less(t, o.maxRSS, int64(sidecarMemory), "peak RSS %d MiB, over the sidecar's %d MiB (%s)", o.maxRSS>>20, sidecarMemory>>20, where)
	assert.Empty(t, o.fired, "canaries fired: a program was started (%s)", where)
	assert.Empty(t, o.connections, "connections to the listener (%s)", where)
	assert.Empty(t, o.tmpLeft, "left in TMPDIR (%s)", where)
	for _, s := range crashSigns {
		assert.False(t, o.stderr.has(s), "a crash: %q on stderr (%s)", s, where)
	}
	assert.NotEqual(t, 2, o.exitCode, "exit 2, a Go runtime crash (%s)", where)
	assert.Empty(t, o.signal, "killed by a signal (%s)", where)
	assert.False(t, o.stdout.has(e.secret), "the secret from outside the tree reached stdout (%s)", where)
	assert.False(t, o.stderr.has(e.secret), "the secret from outside the tree reached stderr (%s)", where)
	if o.trace != nil {
		assert.Len(t, o.trace.execs, 1, "execve: only the binary's own may run (%s); execs: %v", where, o.trace.execs)
		assert.Empty(t, o.trace.connects, "connect: none may be tried (%s)", where)
		assert.Empty(t, o.trace.sockets, "socket: none may be opened (%s)", where)
	}
	if m.discover {
		return
	}
	assert.Equal(t, c.exit, o.exitCode, "exit code (%s)", where)
	if o.exitCode != 0 {
		assert.Zero(t, o.stdout.n, "a failed render printed %d bytes: %s", o.stdout.n, head(o.stdout.String()))
		assert.NotEmpty(t, strings.TrimSpace(stderr), "a failure without a reason")
	}
	for _, w := range c.wants(m) {
		assert.True(t, o.stderr.has(w), "stderr does not name %q (%s)", w, where)
	}
	for _, w := range c.stdout {
		assert.True(t, o.stdout.has(w), "stdout does not hold %q (%s)", w, where)
	}
}

// TestHostileKustomize runs every case in every mode.
func TestHostileKustomize(t *testing.T) {
	bin := h.Binary(t)
	for _, c := range kustomizeCases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			for _, m := range allModes {
				t.Run(m.name, func(t *testing.T) {
					e, o, err := runCase(c, m, t.TempDir(), bin, "", sidecarDeadline)
					require.NoError(t, err)
					check(t, c, m, e, o)
				})
			}
		})
	}
}

// TestHostileKustomizeUnderStrace runs every case and mode again under
// strace -f: the binary's own execve is the only one, and no connect or
// socket is tried, even one that fails. Every other promise holds too but
// the deadline, which TestHostileKustomize checks (see straceDeadline).
func TestHostileKustomizeUnderStrace(t *testing.T) {
	bin := h.Binary(t)
	strace, err := straceBin()
	if err != nil {
		t.Fatalf("%v: run `make integration` from the repository root, which installs it", err)
	}
	for _, c := range kustomizeCases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			for _, m := range allModes {
				t.Run(m.name, func(t *testing.T) {
					e, o, err := runCase(c, m, t.TempDir(), bin, strace, straceDeadline)
					require.NoError(t, err)
					require.NotEmpty(t, o.trace.execs, "strace saw no execve: not traced? stderr:\n%s", head(o.stderr.String()))
					assert.Equal(t, bin, o.trace.execs[0], "the first execve is the binary's")
					check(t, c, m, e, o)
				})
			}
		})
	}
}

// TestHostileKustomizeNoExistenceOracle: a refused path outside the
// repository gets the same message whether it exists or not (the name
// aside).
func TestHostileKustomizeNoExistenceOracle(t *testing.T) {
	bin := h.Binary(t)
	groups := map[string][]kcase{}
	for _, c := range kustomizeCases() {
		if c.oracle != "" {
			groups[c.oracle] = append(groups[c.oracle], c)
		}
	}
	require.NotEmpty(t, groups)
	for name, pair := range groups {
		require.Len(t, pair, 2, name)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for _, m := range []mode{modeRender, modeArgoCD} {
				t.Run(m.name, func(t *testing.T) {
					var got [2]string
					var codes [2]int
					for i, c := range pair {
						e, o, err := runCase(c, m, t.TempDir(), bin, "", sidecarDeadline)
						require.NoError(t, err)
						codes[i] = o.exitCode
						got[i] = strings.NewReplacer(e.dir, "<case>", c.oracleName, "<name>").Replace(o.stderr.String())
					}
					assert.Equal(t, codes[0], codes[1], "exit codes differ: %s %d, %s %d", pair[0].name, codes[0], pair[1].name, codes[1])
					assert.Equal(t, got[0], got[1], "the messages tell whether a path outside the repository exists")
				})
			}
		})
	}
}
