package release

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fedlearner/flapp-services/test/e2e/clients/internal/engine"
)

// The release workflow runs what this suite runs: the same Makefile
// targets, in the same order (SHA256SUMS signed and the assets verified as a
// user would before they are published), the same cosign commands (keyless:
// no --key),
// the cosign version hack/build-release-tools.sh builds, and the floating
// tags only after signing.
func TestReleaseWorkflowRunsTheTestedPath(t *testing.T) {
	wf := readWorkflow(t, ".github/workflows/release.yml")
	job, ok := wf.Jobs["release"]
	require.True(t, ok)
	assert.Equal(t, "write", job.Permissions["id-token"], "keyless signing needs the OIDC token")

	var script []string
	var cosignRelease string
	for _, s := range job.Steps {
		if strings.HasPrefix(s.Uses, "sigstore/cosign-installer@") {
			cosignRelease = s.With["cosign-release"]
		}
		if s.Run != "" {
			script = append(script, s.Run)
		}
	}
	all := strings.Join(script, "\n")
	order := []string{
		`make image-push IMAGE="$IMAGE" VERSION="$VERSION"`,
		`cosign sign --yes "${IMAGE_REPO}@${IMAGE_DIGEST}"`,
		`make sbom IMAGE="$IMAGE" SBOM="$SBOM"`,
		`cosign attest --yes --type spdxjson --predicate "$SBOM" "${IMAGE_REPO}@${IMAGE_DIGEST}"`,
		`make image-push-floating IMAGE="$IMAGE" VERSION="$VERSION"`,
		`make dist VERSION="$VERSION"`,
		`make dist-sums`,
		`make dist-sign`,
		`make verify-release VERSION="$VERSION" RELEASE_REPO="$GITHUB_REPOSITORY"`,
		`gh release create "$VERSION" bin/dist/*`,
	}
	last := -1
	for _, cmd := range order {
		i := strings.Index(all, cmd)
		require.GreaterOrEqual(t, i, 0, "release.yml does not run %s", cmd)
		assert.Greater(t, i, last, "release.yml runs %s out of order", cmd)
		last = i
	}
	assert.NotContains(t, all, "--key", "the release signs keyless")

	b, err := os.ReadFile(filepath.Join(engine.Repo(), "test/e2e/hack/build-release-tools.sh"))
	require.NoError(t, err)
	built := regexp.MustCompile(`cosign/v2/cmd/cosign@(v\S+)`).FindSubmatch(b)
	require.NotNil(t, built)
	assert.Equal(t, string(built[1]), cosignRelease, "the workflow installs another cosign than the suite builds")
}

// ci.yml runs .ci/run for every pull request and every push to main, one
// part a job: together, every part .ci/run runs with no argument (but
// tools, which each part builds its share of), so no suite is dropped.
func TestCIWorkflowRunsCIRun(t *testing.T) {
	wf := readWorkflow(t, ".github/workflows/ci.yml")
	_, pr := wf.On["pull_request"]
	assert.True(t, pr, "on: pull_request")
	push, _ := wf.On["push"].(map[string]any)
	require.NotNil(t, push, "on: push")
	assert.Equal(t, []any{"main"}, push["branches"])
	var runs []string
	for _, j := range wf.Jobs {
		for _, s := range j.Steps {
			runs = append(runs, strings.TrimSpace(s.Run))
		}
	}
	assert.Contains(t, runs, ".ci/run ${{ matrix.part }}")

	script, err := os.ReadFile(filepath.Join(engine.Repo(), ".ci/run"))
	require.NoError(t, err)
	var want []any
	for _, list := range []string{"in_order"} {
		m := regexp.MustCompile(`(?m)^` + list + `=\(([^)]*)\)$`).FindSubmatch(script)
		require.NotNil(t, m, ".ci/run: the parts it runs with no argument (%s)", list)
		for _, p := range strings.Fields(string(m[1])) {
			if p != "tools" {
				want = append(want, p)
			}
		}
	}
	require.Len(t, want, 5, ".ci/run: test, lint, e2e, clients, argocd")
	var parts []any
	for _, j := range wf.Jobs {
		if m, ok := j.Strategy.Matrix["part"].([]any); ok {
			parts = append(parts, m...)
		}
	}
	assert.ElementsMatch(t, want, parts, "ci.yml's jobs run every part of .ci/run")
}
