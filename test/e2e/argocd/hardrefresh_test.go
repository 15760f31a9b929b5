package argocd

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/reposerver/apiclient"
)

// Argo CD caches manifest generation, failures included. The repo-server's
// own Service (reposerver/repository.Service, what answers the controller's
// GenerateManifest) with its defaults for failures (ARGOCD_PAUSE_GEN_AFTER_FAILED_ATTEMPTS
// 3, ARGOCD_PAUSE_GEN_MINUTES 60), an in-memory cache standing for Redis,
// and the real Git client on a file:// repository, through argocd-cmp-server:
//
//   - after 3 failed generates of one commit, the 4th answers "Manifest
//     generation error (cached)" without asking the plugin, even once the
//     cause outside Git is fixed (here plugin.yaml, the sidecar restarted);
//   - a Hard Refresh (the request's noCache) generates again and succeeds;
//   - a fix committed to Git is a new commit, a new cache key: it renders at
//     the next refresh, no Hard Refresh needed.
func TestFailuresAreCachedUntilHardRefresh(t *testing.T) {
	repo := gitCheckout(t, filepath.Join(env.repo, "examples", "argocd", "app"))
	withGitVerifyWrapper(t)
	tmp, err := os.MkdirTemp("", "argocd-cache-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(tmp) })
	sockDir := filepath.Join(tmp, "plugins")
	require.NoError(t, os.MkdirAll(sockDir, 0o755))

	// A sidecar whose plugin.yaml is broken (a flag the render does not know).
	shipped, err := os.ReadFile(filepath.Join(env.repo, "examples", "argocd", "plugin.yaml"))
	require.NoError(t, err)
	broken := strings.Replace(string(shipped), "command: [flapp-services, render, --argocd-env, .]", "command: [flapp-services, render, --argocd-envv, .]", 1)
	require.NotEqual(t, string(shipped), broken)
	config := filepath.Join(tmp, "plugin.yaml")
	require.NoError(t, os.WriteFile(config, []byte(broken), 0o644))
	sidecar := filepath.Join(tmp, "sidecar")
	stop, err := startPlugin(context.Background(), sidecar, pluginSpec{config: config, name: pluginName, sockDir: sockDir})
	require.NoError(t, err)
	t.Cleanup(func() { stop() })

	service := newRepoService(t, tmp)
	revision := "main"
	request := func(noCache bool) *apiclient.ManifestRequest {
		return &apiclient.ManifestRequest{
			Repo:              &v1alpha1.Repository{Repo: "file://" + repo},
			Revision:          revision,
			AppName:           "mnist-leader",
			Namespace:         "fl-leader",
			ProjectName:       "default",
			ApplicationSource: &v1alpha1.ApplicationSource{RepoURL: "file://" + repo, Path: ".", TargetRevision: "main", Plugin: namedPlugin(nil, nil)},
			KubeVersion:       "1.37.2",
			NoCache:           noCache,
		}
	}
	withSockDir(t, sockDir, func() {
		for i := 1; i <= 3; i++ {
			_, err := service.GenerateManifest(ctxFor(t), request(false))
			require.Error(t, err, "attempt %d", i)
			assert.Contains(t, err.Error(), "unknown flag: --argocd-envv", "attempt %d runs the plugin", i)
		}

		// plugin.yaml fixed, the sidecar restarted: the same commit still
		// answers the cached error, without running the plugin.
		stop()
		require.NoError(t, os.WriteFile(config, shipped, 0o644))
		fixed := filepath.Join(tmp, "fixed")
		stopFixed, err := startPlugin(context.Background(), fixed, pluginSpec{config: config, name: pluginName, sockDir: sockDir})
		require.NoError(t, err)
		t.Cleanup(stopFixed)
		fixedLog := filepath.Join(fixed, pluginName, "argocd-cmp-server.log")
		_, err = service.GenerateManifest(ctxFor(t), request(false))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "Manifest generation error (cached)")
		assert.Contains(t, err.Error(), "unknown flag: --argocd-envv")
		assert.Equal(t, []int{0}, commandsRun(t, fixedLog, "render --argocd-env"), "the cached error does not reach the plugin")
		logf("4th generate of the same commit after the fix: %v", err)

		// Hard Refresh.
		resp, err := service.GenerateManifest(ctxFor(t), request(true))
		require.NoError(t, err, "a Hard Refresh generates again")
		assert.Len(t, serviceNames(objectsOf(t, resp)), 7)
		// Now cached: the next refresh of the commit does not reach the plugin.
		rendered := commandsRun(t, fixedLog, "discover --argocd-env", "render --argocd-env")
		resp, err = service.GenerateManifest(ctxFor(t), request(false))
		require.NoError(t, err)
		assert.Len(t, serviceNames(objectsOf(t, resp)), 7)
		assert.Equal(t, rendered, commandsRun(t, fixedLog, "discover --argocd-env", "render --argocd-env"), "a cached commit streams nothing to the plugin")

		// A fix in Git is a new commit: no Hard Refresh needed. Break the
		// Application in one commit (3 failures pause it), fix it in the next.
		// The revisions are the commits (the repo-server caches what a
		// branch resolves to for 3 minutes, --revision-cache-expiration).
		bad := filepath.Join(repo, "mnist.yaml")
		good, err := os.ReadFile(bad)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(bad, []byte(strings.Replace(string(good), "role: Leader", "role: Boss", 1)), 0o644))
		revision = commit(t, repo, "a bad role")
		for i := 1; i <= 4; i++ {
			_, err := service.GenerateManifest(ctxFor(t), request(false))
			require.Error(t, err)
			assert.Contains(t, err.Error(), `spec.role: Invalid value: "Boss"`)
			if i == 4 {
				assert.Contains(t, err.Error(), "Manifest generation error (cached)")
			}
		}
		require.NoError(t, os.WriteFile(bad, good, 0o644))
		revision = commit(t, repo, "the role fixed")
		resp, err = service.GenerateManifest(ctxFor(t), request(false))
		require.NoError(t, err, "a new commit is a new cache key")
		assert.Len(t, serviceNames(objectsOf(t, resp)), 7)
	})
}

// commit commits every change of repo and returns the commit's SHA.
func commit(t *testing.T, repo, message string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", repo, "-c", "user.name=e2e", "-c", "user.email=e2e@example.com", "commit", "-q", "-a", "-m", message).CombinedOutput()
	require.NoError(t, err, "git commit: %s", out)
	out, err = exec.Command("git", "-C", repo, "rev-parse", "HEAD").Output()
	require.NoError(t, err)
	return strings.TrimSpace(string(out))
}
