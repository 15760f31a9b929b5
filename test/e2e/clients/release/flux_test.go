package release

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"

	"github.com/fedlearner/flapp-services/test/e2e/clients/internal/engine"
)

const fluxWorkflow = "examples/flux/github-actions/flapp-services.yaml"

// workflow is the part of a GitHub Actions workflow the suite reads. It is
// read as YAML 1.2 (go.yaml.in/yaml/v3): for sigs.k8s.io/yaml's YAML 1.1 the
// key `on` is the boolean true.
type workflow struct {
	On   map[string]any `yaml:"on"`
	Jobs map[string]struct {
		Permissions map[string]string `yaml:"permissions"`
		Env         map[string]string `yaml:"env"`
		Strategy    struct {
			Matrix map[string]any `yaml:"matrix"`
		} `yaml:"strategy"`
		Steps []struct {
			ID    string            `yaml:"id"`
			Name  string            `yaml:"name"`
			Uses  string            `yaml:"uses"`
			With  map[string]string `yaml:"with"`
			Run   string            `yaml:"run"`
			Shell string            `yaml:"shell"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

func readWorkflow(t *testing.T, path string) workflow {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(engine.Repo(), path))
	require.NoError(t, err)
	var wf workflow
	require.NoError(t, yamlv3.Unmarshal(b, &wf), path)
	return wf
}

// stepRun is the `run:` script of the step id (or, without an id, named
// name) of job in the workflow at path.
func stepRun(t *testing.T, path, job, step string) string {
	t.Helper()
	j, ok := readWorkflow(t, path).Jobs[job]
	require.True(t, ok, "%s: no job %s", path, job)
	for _, s := range j.Steps {
		if s.ID == step || s.Name == step {
			require.Equal(t, "bash", s.Shell, "%s: step %s should use shell: bash (pipefail)", path, step)
			return s.Run
		}
	}
	t.Fatalf("%s: no step %s in job %s", path, step, job)
	return ""
}

// fluxCI is a checkout of examples/flux where the example workflow's steps
// run verbatim, as GitHub Actions runs `shell: bash` (bash --noprofile
// --norc -eo pipefail), with flux (tools/fluxoci) and flapp-services on PATH
// and the variables GitHub sets.
type fluxCI struct {
	root, bin, output string
	vars              []string
}

func newFluxCI(t *testing.T) fluxCI {
	t.Helper()
	root := t.TempDir()
	engine.CopyTree(t, filepath.Join(engine.Repo(), "examples/flux"), filepath.Join(root, "examples/flux"))
	bin := filepath.Join(t.TempDir(), "bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	require.NoError(t, os.Symlink(env.flapp, filepath.Join(bin, "flapp-services")))
	require.NoError(t, os.Symlink(filepath.Join(env.tools, "fluxoci"), filepath.Join(bin, "flux")))
	ci := fluxCI{root: root, bin: bin, output: filepath.Join(t.TempDir(), "github-output")}
	ci.vars = []string{
		"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		// The job's env: ARTIFACT in the loopback registry instead of ghcr.io.
		"ARTIFACT=oci://" + env.registry + "/manifests/flapps",
		"GITHUB_SERVER_URL=https://github.com",
		"GITHUB_REPOSITORY=your-org/your-repo",
		"GITHUB_REF_NAME=main",
		"GITHUB_TOKEN=unused", // the registry has no authentication
		"GITHUB_OUTPUT=" + ci.output,
		"RUNNER_TEMP=" + t.TempDir(),
		"HOME=" + t.TempDir(),
	}
	return ci
}

// run runs the step of the push-artifact job for the commit sha.
func (ci fluxCI) run(t *testing.T, step, sha string) {
	t.Helper()
	script := filepath.Join(t.TempDir(), "step.sh")
	require.NoError(t, os.WriteFile(script, []byte(stepRun(t, fluxWorkflow, "push-artifact", step)), 0o644))
	res := engine.Run(t, ci.root, append(append([]string{}, ci.vars...), "GITHUB_SHA="+sha), nil,
		"bash", "--noprofile", "--norc", "-eo", "pipefail", script)
	require.Equal(t, 0, res.ExitCode, "step %s:\n%s\n%s", step, res.Stdout, res.Stderr)
}

// stepOutput is the last value the steps wrote to $GITHUB_OUTPUT for key.
func (ci fluxCI) stepOutput(t *testing.T, key string) string {
	t.Helper()
	b, err := os.ReadFile(ci.output)
	require.NoError(t, err)
	var value string
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && k == key {
			value = v
		}
	}
	require.NotEmpty(t, value, "no %s in $GITHUB_OUTPUT:\n%s", key, b)
	return value
}

// The example workflow's push-artifact job against the loopback registry:
// its render, push and tag steps verbatim, its signing step with a key
// (TestMain says why). The artifact is Flux's (media types, annotations,
// content); cosign verifies it through the tag Flux follows, and fails once
// another artifact is pushed under that tag; bytes changed in the
// registry's storage under the signed digest are refused when pulled.
func TestFluxArtifactSigned(t *testing.T) {
	ci := newFluxCI(t)
	repo := env.registry + "/manifests/flapps"
	const sha = "0123456789abcdef0123456789abcdef01234567"
	ci.run(t, "render", sha)
	ci.run(t, "push", sha)
	digestURL := ci.stepOutput(t, "digest-url")
	require.Regexp(t, `^`+regexp.QuoteMeta(repo)+`@sha256:[0-9a-f]{64}$`, digestURL)
	signed := published{repo: repo, image: repo + ":latest", digest: strings.TrimPrefix(digestURL, repo+"@")}

	// The workflow's signing step, keyless there, with the key here; the
	// same reference: the digest the push step wrote.
	assert.Contains(t, stepRun(t, fluxWorkflow, "push-artifact", "Sign the artifact (keyless)"), `cosign sign --yes "${DIGEST_URL}"`)
	res := cosign(t, "sign", "--yes", "--key", env.key, "--tlog-upload=false", "--allow-http-registry", digestURL)
	require.Equal(t, 0, res.ExitCode, "cosign sign:\n%s", res.Stderr)
	ci.run(t, "tag", sha)

	assert.Equal(t, signed.digest, digestOf(t, repo, "latest"))
	assert.Equal(t, signed.digest, digestOf(t, repo, sha[:12]))

	// Flux's artifact format (fluxcd/pkg/oci, what `flux push artifact` and
	// source-controller share): an OCI manifest with Flux's config and
	// content media types, the source and revision annotations, and the
	// render as its one layer.
	var m ociManifest
	unmarshal(t, getManifest(t, repo, "latest").Body, &m)
	assert.Equal(t, "application/vnd.oci.image.manifest.v1+json", m.MediaType)
	assert.Equal(t, "application/vnd.cncf.flux.config.v1+json", m.Config.MediaType)
	require.Len(t, m.Layers, 1)
	assert.Equal(t, "application/vnd.cncf.flux.content.v1.tar+gzip", m.Layers[0].MediaType)
	assert.Equal(t, "https://github.com/your-org/your-repo", m.Annotations["org.opencontainers.image.source"])
	assert.Equal(t, "main@sha1:"+sha, m.Annotations["org.opencontainers.image.revision"])
	pulled := filepath.Join(t.TempDir(), "pulled")
	res = engine.Run(t, ci.root, ci.vars, nil, filepath.Join(env.tools, "fluxoci"), "pull", "artifact", "oci://"+repo+":latest", "--output", pulled)
	require.Equal(t, 0, res.ExitCode, "flux pull artifact:\n%s", res.Stderr)
	assert.Equal(t, engine.Snapshot(t, filepath.Join(ci.root, "out")), engine.Snapshot(t, pulled), "the artifact is not the render")

	checkVerified(t, verify(t, repo+":latest", env.pub), signed)
	res = verify(t, repo+":latest", env.otherPub)
	assert.NotEqual(t, 0, res.ExitCode, "verified with a key that signed nothing")
	assert.Contains(t, res.Stderr, "no matching signatures")

	t.Run("another push under latest fails verification", func(t *testing.T) {
		// A run whose signing step was skipped or failed, or whoever else
		// can push: the tag moves to an artifact nobody signed.
		leader := filepath.Join(ci.root, "examples/flux/flapps/mnist-leader.yaml")
		b, err := os.ReadFile(leader)
		require.NoError(t, err)
		require.Contains(t, string(b), "replicas: 2")
		require.NoError(t, os.WriteFile(leader, []byte(strings.Replace(string(b), "replicas: 2", "replicas: 3", 1)), 0o644))
		const next = "89abcdef0123456789abcdef0123456789abcdef"
		ci.run(t, "render", next)
		ci.run(t, "push", next)
		ci.run(t, "tag", next)
		require.NotEqual(t, signed.digest, digestOf(t, repo, "latest"))

		res := verify(t, repo+":latest", env.pub)
		assert.NotEqual(t, 0, res.ExitCode, "cosign verify passed for an unsigned artifact:\n%s", res.Stdout)
		assert.Contains(t, res.Stderr, "no signatures found")
		checkVerified(t, verify(t, signed.byDigest(), env.pub), signed)
	})

	t.Run("changed bytes under the signed digest are refused on pull", func(t *testing.T) {
		// A registry that serves other bytes for the signed digest: the
		// signature still verifies (it is about the digest, which cosign
		// takes from the reference and never re-hashes), and whatever pulls
		// by that digest, as Flux does after verifying, refuses the bytes.
		restore := tamperBlob(t, signed.digest, "main@sha1:"+sha, "main@sha1:"+strings.Repeat("f", len(sha)))
		defer restore()
		checkVerified(t, verify(t, signed.byDigest(), env.pub), signed)
		res := engine.Run(t, ci.root, ci.vars, nil, filepath.Join(env.tools, "fluxoci"), "pull", "artifact",
			"oci://"+signed.byDigest(), "--output", filepath.Join(t.TempDir(), "pulled"))
		assert.NotEqual(t, 0, res.ExitCode, "flux pull artifact accepted changed bytes:\n%s", res.Stderr)
		assert.Contains(t, res.Stderr, "does not match")
	})
}

// The OCIRepository's keyless identity is the one the example workflow
// signs with: GitHub's OIDC issuer, and the workflow file (where its header
// says to copy it) on the branch its push-artifact job runs for; a pull
// request's ref or another workflow does not match.
func TestFluxVerifiesTheWorkflowsIdentity(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(engine.Repo(), "examples/flux/clusters/oci/flapps.yaml"))
	require.NoError(t, err)
	var repo struct {
		Kind string `json:"kind"`
		Spec struct {
			URL    string               `json:"url"`
			Ref    struct{ Tag string } `json:"ref"`
			Verify struct {
				Provider          string `json:"provider"`
				MatchOIDCIdentity []struct {
					Issuer, Subject string
				} `json:"matchOIDCIdentity"`
			} `json:"verify"`
		} `json:"spec"`
	}
	doc, _, _ := strings.Cut(string(b), "\n---\n")
	require.NoError(t, yaml.Unmarshal([]byte(doc), &repo))
	require.Equal(t, "OCIRepository", repo.Kind)
	assert.Equal(t, "cosign", repo.Spec.Verify.Provider)
	require.Len(t, repo.Spec.Verify.MatchOIDCIdentity, 1)
	id := repo.Spec.Verify.MatchOIDCIdentity[0]

	wfText, err := os.ReadFile(filepath.Join(engine.Repo(), fluxWorkflow))
	require.NoError(t, err)
	copied := regexp.MustCompile(`copy to (\.github/workflows/\S+)\.\n`).FindSubmatch(wfText)
	require.NotNil(t, copied, "the workflow's header names where to copy it")
	wf := readWorkflow(t, fluxWorkflow)
	push := wf.Jobs["push-artifact"]
	// Push, sign, then tag latest: latest never names an unsigned artifact.
	at := map[string]int{}
	for i, s := range push.Steps {
		switch {
		case s.ID == "push", s.ID == "tag":
			at[s.ID] = i
		case strings.Contains(s.Run, "cosign sign --yes"):
			at["sign"] = i
		}
	}
	require.Len(t, at, 3, "the push, signing and tag steps")
	assert.Less(t, at["push"], at["sign"], "signs what was pushed")
	assert.Less(t, at["sign"], at["tag"], "tags latest only after signing")
	assert.Equal(t, "write", push.Permissions["id-token"], "keyless signing needs the OIDC token")
	assert.Equal(t, "oci://ghcr.io/${{ github.repository_owner }}/manifests/flapps", push.Env["ARTIFACT"])
	assert.Equal(t, strings.Replace(push.Env["ARTIFACT"], "${{ github.repository_owner }}", "your-org", 1), repo.Spec.URL)
	assert.Equal(t, "latest", repo.Spec.Ref.Tag)
	onPush, _ := wf.On["push"].(map[string]any)
	require.NotNil(t, onPush, "on: push")
	require.Equal(t, []any{"main"}, onPush["branches"], "push-artifact runs on pushes to main only")

	// GitHub's certificate for a workflow run: issuer and the subject
	// https://github.com/<owner>/<repo>/<workflow file>@<ref>.
	issuer := regexp.MustCompile(id.Issuer)
	subject := regexp.MustCompile(id.Subject)
	assert.True(t, issuer.MatchString("https://token.actions.githubusercontent.com"))
	assert.False(t, issuer.MatchString("https://token.actions.githubusercontent.com.example.org"))
	identity := "https://github.com/your-org/your-repo/" + string(copied[1]) + "@refs/heads/main"
	assert.True(t, subject.MatchString(identity), "%s does not match %s", id.Subject, identity)
	for _, other := range []string{
		"https://github.com/your-org/your-repo/" + string(copied[1]) + "@refs/pull/1/merge",
		"https://github.com/your-org/your-repo/.github/workflows/other.yaml@refs/heads/main",
		"https://github.com/someone-else/your-repo/" + string(copied[1]) + "@refs/heads/main",
	} {
		assert.False(t, subject.MatchString(other), "%s matches %s", id.Subject, other)
	}
}
