package argocd

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	log "github.com/sirupsen/logrus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	"github.com/argoproj/argo-cd/v3/applicationset/controllers/template"
	"github.com/argoproj/argo-cd/v3/applicationset/generators"
	"github.com/argoproj/argo-cd/v3/applicationset/utils"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/reposerver/apiclient"
	reposervercache "github.com/argoproj/argo-cd/v3/reposerver/cache"
	"github.com/argoproj/argo-cd/v3/reposerver/metrics"
	"github.com/argoproj/argo-cd/v3/reposerver/repository"
	cacheutil "github.com/argoproj/argo-cd/v3/util/cache"
	"github.com/argoproj/argo-cd/v3/util/git"
)

// argocdNamespace is where the ApplicationSet, its Applications and the
// AppProject live, as in examples/argocd/applicationset.yaml.
const argocdNamespace = "argocd"

// withGitVerifyWrapper puts the repo-server image's helper for commit
// signatures, which its Git client runs on every checkout (Argo CD's own
// hack/git-verify-wrapper.sh), on PATH.
func withGitVerifyWrapper(t *testing.T) {
	t.Helper()
	wrapper, err := os.ReadFile(filepath.Join(filepath.Dir(filepath.Dir(argoCDInstallYAML(t))), "hack", "git-verify-wrapper.sh"))
	require.NoError(t, err)
	bin := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(bin, "git-verify-wrapper.sh"), wrapper, 0o755))
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// newRepoService is the repo-server's own Service with its defaults for
// failures, an in-memory cache standing for Redis, and the real Git client
// (checkouts under tmp).
func newRepoService(t *testing.T, tmp string) *repository.Service {
	t.Helper()
	service := repository.NewService(metrics.NewMetricsServer(),
		reposervercache.NewCache(cacheutil.NewCache(cacheutil.NewInMemoryCache(time.Hour)), 24*time.Hour, 3*time.Minute, 10*time.Second),
		repository.RepoServerInitConstants{
			PauseGenerationAfterFailedGenerationAttempts: 3,
			PauseGenerationOnFailureForMinutes:           60,
			MaxCombinedDirectoryManifestsSize:            resource.MustParse("10M"),
			EnableBuiltinGitConfig:                       true,
		}, &git.NoopCredsStore{}, filepath.Join(tmp, "checkouts"))
	require.NoError(t, service.Init())
	return service
}

// repoServerRepos is the ApplicationSet controller's services.Repos over the
// repo-server's own Service, called in process: GetDirectories sends the
// GitDirectoriesRequest the controller's argoCDService sends through gRPC
// (applicationset/services/repo_service.go), for a repository Argo CD has no
// credentials for (what its db.GetRepository returns then: the URL alone),
// less the deprecated VerifyCommit, which is false without a source
// integrity policy (the default project has none).
type repoServerRepos struct{ s *repository.Service }

func (r repoServerRepos) GetDirectories(ctx context.Context, repoURL, revision, _ string, noRevisionCache bool, si *v1alpha1.SourceIntegrity) ([]string, error) {
	resp, err := r.s.GetGitDirectories(ctx, &apiclient.GitDirectoriesRequest{
		Repo: &v1alpha1.Repository{Repo: repoURL}, Revision: revision, NoRevisionCache: noRevisionCache, SourceIntegrity: si,
	})
	if err != nil {
		return nil, err
	}
	return resp.GetPaths(), nil
}

func (r repoServerRepos) GetFiles(ctx context.Context, repoURL, revision, _, pattern string, noRevisionCache bool, si *v1alpha1.SourceIntegrity) (map[string][]byte, error) {
	resp, err := r.s.GetGitFiles(ctx, &apiclient.GitFilesRequest{
		Repo: &v1alpha1.Repository{Repo: repoURL}, Revision: revision, Path: pattern, NoRevisionCache: noRevisionCache, SourceIntegrity: si,
	})
	if err != nil {
		return nil, err
	}
	return resp.GetMap(), nil
}

func (repoServerRepos) GetOciFiles(context.Context, string, string, string, string, bool) (map[string][]byte, error) {
	panic("no OCI source here")
}

func (repoServerRepos) GetOciDirectories(context.Context, string, string, string, bool) ([]string, error) {
	panic("no OCI source here")
}

// shippedApplicationSet is examples/argocd/applicationset.yaml, read
// strictly into Argo CD's own type, its repository URLs pointed at repo.
func shippedApplicationSet(t *testing.T, repo string) *v1alpha1.ApplicationSet {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(env.repo, "examples", "argocd", "applicationset.yaml"))
	require.NoError(t, err)
	var appSet v1alpha1.ApplicationSet
	require.NoError(t, yaml.UnmarshalStrict(data, &appSet))
	require.Equal(t, "ApplicationSet", appSet.Kind)
	require.Len(t, appSet.Spec.Generators, 1)
	g := appSet.Spec.Generators[0].Git
	require.NotNil(t, g, "a git generator")
	require.NotEmpty(t, g.Directories, "a directory generator")
	require.Empty(t, g.Files)
	src := appSet.Spec.Template.Spec.Source
	require.NotNil(t, src)
	assert.Equal(t, g.RepoURL, src.RepoURL, "the Applications come from the repository the generator reads")
	g.RepoURL = "file://" + repo
	src.RepoURL = g.RepoURL
	return &appSet
}

// generateApplications runs the ApplicationSet controller's own code on the
// ApplicationSet: controllers/template.GenerateApplications with the git
// generator (generators.NewGitGenerator) reading the repository through the
// repo-server's Service, and the controller's renderer (utils.Render). The
// AppProject the generator reads lives in a controller-runtime fake client,
// standing for the cluster.
func generateApplications(t *testing.T, appSet *v1alpha1.ApplicationSet) []v1alpha1.Application {
	t.Helper()
	tmp, err := os.MkdirTemp("", "argocd-appset-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(tmp) })
	scheme := runtime.NewScheme()
	require.NoError(t, v1alpha1.AddToScheme(scheme))
	project := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: appSet.Spec.Template.Spec.Project, Namespace: argocdNamespace}}
	client := fake.NewClientBuilder().WithScheme(scheme).WithObjects(project).Build()
	gens := map[string]generators.Generator{
		"Git": generators.NewGitGenerator(repoServerRepos{newRepoService(t, tmp)}, argocdNamespace),
	}
	apps, reason, err := template.GenerateApplications(log.WithField("applicationset", appSet.Name), *appSet, gens, &utils.Render{}, client)
	require.NoError(t, err, "ApplicationSet reason %s", reason)
	return apps
}

// monorepoJobs splits the test repository's apps/* directories into the FL
// jobs (the plugin's: TestMonorepo's table) and the others.
func monorepoJobs(t *testing.T, repo string) (fl, other []string) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(repo, "apps"))
	require.NoError(t, err)
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		p := "apps/" + e.Name()
		i := slices.IndexFunc(monorepoApps, func(a monorepoApp) bool { return a.path == p })
		require.GreaterOrEqual(t, i, 0, "%s is in TestMonorepo's table", p)
		if monorepoApps[i].ours {
			fl = append(fl, p)
		} else {
			other = append(other, p)
		}
	}
	require.NotEmpty(t, fl)
	require.NotEmpty(t, other)
	return fl, other
}

// checkJob generates an Application of an FL job directory as the
// repo-server does, through the real argocd-cmp-server: source type Plugin,
// and what `flapp-services render` gives for the path, or the render's own
// error for the two directories that are broken on purpose.
func checkJob(t *testing.T, repo string, app v1alpha1.Application) {
	t.Helper()
	src := app.Spec.Source
	a := application{name: app.Name, namespace: app.Spec.Destination.Namespace, path: src.Path, plugin: src.Plugin}
	resp, err := generateWith(t, env.sockDir, repo, a)
	switch src.Path {
	case "apps/broken-flapp", "apps/nested-kustomization":
		require.Error(t, err)
		assert.NotContains(t, err.Error(), "could not find", "the plugin took it, and the render refused it")
		unnamed, unnamedErr := generateWith(t, env.sockDir, repo, application{name: app.Name, namespace: a.namespace, path: src.Path})
		assert.Equal(t, outcome(t, repo, unnamed, unnamedErr), outcome(t, repo, resp, err), "the render's reason")
	default:
		require.NoError(t, err)
		assert.Equal(t, string(v1alpha1.ApplicationSourceTypePlugin), resp.SourceType)
		assert.Equal(t, render(t, repo, src.Path), manifestValues(t, resp), "the render of %s", src.Path)
		assert.NotEmpty(t, serviceNames(objectsOf(t, resp)), "with its Services")
	}
}

func appPaths(apps []v1alpha1.Application) []string {
	var out []string
	for _, a := range apps {
		out = append(out, a.Spec.Source.Path)
	}
	sort.Strings(out)
	return out
}

// TestApplicationSet: examples/argocd/applicationset.yaml, run by the
// ApplicationSet controller's own code on the suite's monorepo (a Git
// repository of testdata/monorepo): its git directory generator gives every
// apps/* directory an Application named and placed after it, naming no
// plugin. Through the repo-server's GenerateManifests with the real
// argocd-cmp-server and plugin.yaml as shipped, discovery hands every FL job
// directory to the plugin, which renders it as `flapp-services render` does
// (the broken ones fail with the render's reason), and every other directory
// to Argo CD's own tools, exactly as an Argo CD without the plugin renders it.
func TestApplicationSet(t *testing.T) {
	withTools(t)
	withGitVerifyWrapper(t)
	repo := gitCheckout(t, filepath.Join("testdata", "monorepo"))
	fl, other := monorepoJobs(t, repo)
	appSet := shippedApplicationSet(t, repo)
	require.Nil(t, appSet.Spec.Template.Spec.Source.Plugin, "the Applications leave the plugin to discovery")
	apps := generateApplications(t, appSet)
	assert.Equal(t, sortedCopy(append(slices.Clone(fl), other...)), appPaths(apps), "one Application per apps/* directory")

	noPlugin := t.TempDir()
	for _, app := range apps {
		t.Run(app.Name, func(t *testing.T) {
			src := app.Spec.Source
			base := filepath.Base(src.Path)
			assert.Equal(t, base, app.Name)
			assert.Equal(t, argocdNamespace, app.Namespace)
			assert.Equal(t, base, app.Spec.Destination.Namespace)
			assert.Equal(t, "file://"+repo, src.RepoURL)
			assert.Nil(t, src.Plugin)
			require.NotNil(t, app.Spec.SyncPolicy)
			require.NotNil(t, app.Spec.SyncPolicy.Automated)
			if slices.Contains(fl, src.Path) {
				checkJob(t, repo, app)
				return
			}
			a := application{name: app.Name, namespace: base, path: src.Path}
			argo, argoErr := generateWith(t, noPlugin, repo, a)
			resp, err := generateWith(t, env.sockDir, repo, a)
			require.NoError(t, err)
			assert.NotEqual(t, string(v1alpha1.ApplicationSourceTypePlugin), resp.SourceType)
			assert.Equal(t, outcome(t, repo, argo, argoErr), outcome(t, repo, resp, err), "Argo CD's own tools, as without the plugin")
		})
	}
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	sort.Strings(out)
	return out
}

// TestApplicationSetNamedPluginWithExcludes: the variant the example's
// comment describes, for Applications that name the plugin: apps/* with
// `exclude: true` entries for the directories that are not FL jobs, and
// `plugin: {name: flapp-services}` in the template. The generator leaves the
// excluded directories out, and every FL job renders through the plugin as
// before. Without the excludes every other directory gets an Application
// that fails ("could not find cmp-server plugin"): the reason the example
// names no plugin.
func TestApplicationSetNamedPluginWithExcludes(t *testing.T) {
	withGitVerifyWrapper(t)
	repo := gitCheckout(t, filepath.Join("testdata", "monorepo"))
	fl, other := monorepoJobs(t, repo)

	named := func(excludes []string) []v1alpha1.Application {
		appSet := shippedApplicationSet(t, repo)
		appSet.Spec.Template.Spec.Source.Plugin = &v1alpha1.ApplicationSourcePlugin{Name: pluginName}
		g := appSet.Spec.Generators[0].Git
		for _, p := range excludes {
			g.Directories = append(g.Directories, v1alpha1.GitDirectoryGeneratorItem{Path: p, Exclude: true})
		}
		return generateApplications(t, appSet)
	}

	apps := named(other)
	assert.Equal(t, sortedCopy(fl), appPaths(apps), "the excluded directories get no Application")
	for _, app := range apps {
		t.Run(app.Name, func(t *testing.T) {
			require.NotNil(t, app.Spec.Source.Plugin)
			assert.Equal(t, pluginName, app.Spec.Source.Plugin.Name)
			checkJob(t, repo, app)
		})
	}

	all := named(nil)
	assert.Len(t, all, len(fl)+len(other))
	for _, app := range all {
		if slices.Contains(other, app.Spec.Source.Path) {
			_, err := generateWith(t, env.sockDir, repo, application{name: app.Name, namespace: app.Spec.Destination.Namespace,
				path: app.Spec.Source.Path, plugin: app.Spec.Source.Plugin})
			require.Error(t, err, app.Spec.Source.Path)
			assert.Contains(t, err.Error(), notFound, "%s: not an FL job, and the plugin is named", app.Spec.Source.Path)
		}
	}
	assert.True(t, strings.Contains(readExample(t, "applicationset.yaml"), "exclude: true"), "the example says how to exclude")
}

func readExample(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(env.repo, "examples", "argocd", name))
	require.NoError(t, err)
	return string(b)
}
