package release

import (
	"debug/buildinfo"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fedlearner/flapp-services/test/e2e/clients/internal/engine"
)

// releaseVersion is the version the suite releases (any vX.Y.Z: nothing is
// published outside the loopback registry).
const releaseVersion = "v1.3.0"

// published is what `make image-push` left: the image by tag and digest,
// and a copy of the linux binary of this machine's platform it packs.
type published struct {
	repo, image, digest string
	binary              string
}

func (p published) byDigest() string { return p.repo + "@" + p.digest }

// imagePush runs `make image-push` as the workflow does (IMAGE and VERSION
// set; here IMAGE is repo:tag in the loopback registry) and returns what it
// pushed.
func imagePush(t *testing.T, repo, tag, version string) published {
	t.Helper()
	p := published{repo: repo, image: repo + ":" + tag}
	localImages = append(localImages, p.image+"-index")
	// In the suite's folder: the steps after this one use it.
	dir, err := os.MkdirTemp(env.work, "image-")
	require.NoError(t, err)
	p.binary = filepath.Join(dir, "flapp-services")
	res := makeTarget(t, nil, func() {
		b, err := os.ReadFile(filepath.Join(engine.Repo(), "bin/flapp-services-image.digest"))
		require.NoError(t, err)
		p.digest = strings.TrimSpace(string(b))
		bin, err := os.ReadFile(filepath.Join(engine.Repo(), "bin", "linux_"+runtime.GOARCH, "flapp-services"))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(p.binary, bin, 0o755))
	}, "image-push", "IMAGE="+p.image, "VERSION="+version)
	require.Equal(t, 0, res.ExitCode, "make image-push:\n%s\n%s", res.Stdout, res.Stderr)
	require.Regexp(t, `^sha256:[0-9a-f]{64}$`, p.digest)
	return p
}

// The release path, in the workflow's order: push the two-platform index,
// make the SBOM, sign, attest, verify; kustomize and kpt run the function
// from the registry by digest; then another image, and a changed one, are
// put under its tag, and verification fails for both; changed bytes under
// the signed digest itself are refused by the pull.
func TestRelease(t *testing.T) {
	repo := env.registry + "/fedlearner/flapp-services"
	var p published
	sbom := filepath.Join(t.TempDir(), "flapp-services-"+releaseVersion+".spdx.json")

	steps := []struct {
		name string
		fn   func(t *testing.T)
	}{
		{"make image-push: a linux/amd64 + linux/arm64 index", func(t *testing.T) {
			p = imagePush(t, repo, releaseVersion, releaseVersion)
			checkIndex(t, p, releaseVersion)
		}},
		{"make sbom: SPDX, every module of the binary", func(t *testing.T) {
			makeSBOM(t, p, sbom, "linux/amd64")
			checkSBOM(t, sbom, p.binary)
			// The one SBOM stands for both platforms: the same modules.
			arm := filepath.Join(t.TempDir(), "arm64.spdx.json")
			makeSBOM(t, p, arm, "linux/arm64")
			assert.Equal(t, sbomPackages(t, sbom), sbomPackages(t, arm), "linux/amd64 and linux/arm64 hold other modules")
		}},
		{"cosign sign", func(t *testing.T) {
			// The workflow: cosign sign --yes "${IMAGE_REPO}@${IMAGE_DIGEST}" (keyless).
			res := cosign(t, "sign", "--yes", "--key", env.key, "--tlog-upload=false", "--allow-http-registry", p.byDigest())
			require.Equal(t, 0, res.ExitCode, "cosign sign:\n%s", res.Stderr)
		}},
		{"cosign attest --type spdxjson", func(t *testing.T) {
			// The workflow: cosign attest --yes --type spdxjson --predicate <sbom> "${IMAGE_REPO}@${IMAGE_DIGEST}".
			res := cosign(t, "attest", "--yes", "--key", env.key, "--tlog-upload=false", "--allow-http-registry",
				"--type", "spdxjson", "--predicate", sbom, p.byDigest())
			require.Equal(t, 0, res.ExitCode, "cosign attest:\n%s", res.Stderr)
		}},
		{"cosign verify and verify-attestation pass", func(t *testing.T) {
			// As a user would: by tag (SECURITY.md, "Verifying a release").
			checkVerified(t, verify(t, p.image, env.pub), p)
			checkAttested(t, verifyAttestation(t, p.image, env.pub), p, sbom)
		}},
		{"another key's signature is not this one", func(t *testing.T) {
			res := verify(t, p.image, env.otherPub)
			assert.NotEqual(t, 0, res.ExitCode)
			assert.Contains(t, res.Stderr, "no matching signatures")
			res = verifyAttestation(t, p.image, env.otherPub)
			assert.NotEqual(t, 0, res.ExitCode)
			assert.Contains(t, res.Stderr, "no matching attestations")
		}},
		{"kustomize container: runs it from the registry by digest", func(t *testing.T) {
			kustomizeByDigest(t, p)
		}},
		{"kpt image: runs it from the registry by digest", func(t *testing.T) {
			kptByDigest(t, p)
		}},
		{"re-tagged: another image under the same tag fails verification", func(t *testing.T) {
			// An image that exists, but is not what was signed, put under
			// the release's tag: the signed index's own linux/amd64 image.
			var index ociIndex
			unmarshal(t, getManifest(t, repo, p.digest).Body, &index)
			other := index.Manifests[0]
			putManifest(t, repo, releaseVersion, other.MediaType, getManifest(t, repo, other.Digest).Body)
			require.Equal(t, other.Digest, digestOf(t, repo, releaseVersion))
			checkNotVerified(t, p.image, "no signatures found")
		}},
		{"changed: a changed image under the same tag fails verification", func(t *testing.T) {
			// Whoever can push to the repository builds another image
			// (here: another binary and labels, stamped with another
			// version) and pushes it under the release's tag.
			evil := imagePush(t, repo, releaseVersion, releaseVersion+"-evil")
			require.NotEqual(t, p.digest, evil.digest)
			require.Equal(t, evil.digest, digestOf(t, repo, releaseVersion), "the push did not move the tag")
			checkNotVerified(t, p.image, "no signatures found")
			// What was signed still verifies, by its digest.
			checkVerified(t, verify(t, p.byDigest(), env.pub), p)
		}},
		{"changed bytes under the signed digest are refused on pull", func(t *testing.T) {
			// A registry that serves other bytes for the signed digest: the
			// index pointing at another linux/amd64 image (one hex digit of
			// its digest changed). The signature still verifies (it is about
			// the digest, which cosign takes from the reference and never
			// re-hashes); podman, pulling by that digest as kpt and
			// kustomize do, refuses the bytes.
			var index ociIndex
			unmarshal(t, getManifest(t, repo, p.digest).Body, &index)
			old := index.Manifests[0].Digest
			replacement := old[:len(old)-1] + map[bool]string{true: "0", false: "1"}[!strings.HasSuffix(old, "0")]
			restore := tamperBlob(t, p.digest, old, replacement)
			defer restore()
			checkVerified(t, verify(t, p.byDigest(), env.pub), p)
			forget(t, p.byDigest())
			res := engine.Run(t, engine.Repo(), nil, nil, "podman", "pull", p.byDigest())
			assert.NotEqual(t, 0, res.ExitCode, "podman pulled changed bytes:\n%s", res.Stdout)
			assert.Contains(t, res.Stderr, "does not match")
		}},
	}
	for _, s := range steps {
		if !t.Run(s.name, s.fn) {
			return
		}
	}
}

// checkIndex: the tag resolves to the digest image-push wrote, an OCI index
// of exactly linux/amd64 and linux/arm64, each stamped with version.
func checkIndex(t *testing.T, p published, version string) {
	t.Helper()
	m := getManifest(t, p.repo, strings.TrimPrefix(p.image, p.repo+":"))
	assert.Equal(t, p.digest, m.Digest, "the tag and image-push's digest file disagree")
	var index ociIndex
	unmarshal(t, m.Body, &index)
	assert.Equal(t, "application/vnd.oci.image.index.v1+json", index.MediaType)
	var platforms []string
	for _, d := range index.Manifests {
		platform := d.Platform.OS + "/" + d.Platform.Architecture
		platforms = append(platforms, platform)
		var im ociManifest
		unmarshal(t, getManifest(t, p.repo, d.Digest).Body, &im)
		var cfg struct {
			OS           string `json:"os"`
			Architecture string `json:"architecture"`
			Config       struct {
				Labels map[string]string `json:"Labels"`
			} `json:"config"`
		}
		unmarshal(t, getBlob(t, p.repo, im.Config.Digest), &cfg)
		assert.Equal(t, platform, cfg.OS+"/"+cfg.Architecture)
		assert.Equal(t, version, cfg.Config.Labels["org.opencontainers.image.version"], platform)
	}
	sort.Strings(platforms)
	assert.Equal(t, []string{"linux/amd64", "linux/arm64"}, platforms)
}

// makeSBOM runs `make sbom` as the workflow does, for platform, into file.
func makeSBOM(t *testing.T, p published, file, platform string) {
	t.Helper()
	res := makeTarget(t, []string{"SYFT_REGISTRY_INSECURE_USE_HTTP=true", "SYFT_CHECK_FOR_APP_UPDATE=false"}, nil,
		"sbom", "IMAGE="+p.image, "SBOM="+file, "SBOM_PLATFORM="+platform)
	require.Equal(t, 0, res.ExitCode, "make sbom:\n%s\n%s", res.Stdout, res.Stderr)
}

type spdxDocument struct {
	SPDXVersion string `json:"spdxVersion"`
	DataLicense string `json:"dataLicense"`
	Name        string `json:"name"`
	Packages    []struct {
		Name         string `json:"name"`
		VersionInfo  string `json:"versionInfo"`
		ExternalRefs []struct {
			ReferenceType    string `json:"referenceType"`
			ReferenceLocator string `json:"referenceLocator"`
		} `json:"externalRefs"`
	} `json:"packages"`
}

func readSBOM(t *testing.T, file string) spdxDocument {
	t.Helper()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	var doc spdxDocument
	unmarshal(t, b, &doc)
	return doc
}

// sbomPackages: "name version" of every package of the SBOM, sorted.
func sbomPackages(t *testing.T, file string) []string {
	t.Helper()
	var pkgs []string
	for _, p := range readSBOM(t, file).Packages {
		pkgs = append(pkgs, p.Name+" "+p.VersionInfo)
	}
	sort.Strings(pkgs)
	return pkgs
}

// checkSBOM: an SPDX 2.3 document naming the main module and every module
// `go version -m` lists for the binary, at its version, with a Go purl.
func checkSBOM(t *testing.T, file, binary string) {
	t.Helper()
	doc := readSBOM(t, file)
	assert.Equal(t, "SPDX-2.3", doc.SPDXVersion)
	assert.Equal(t, "CC0-1.0", doc.DataLicense)
	purls := map[string]bool{}
	for _, p := range doc.Packages {
		for _, r := range p.ExternalRefs {
			if r.ReferenceType == "purl" {
				purls[r.ReferenceLocator] = true
			}
		}
	}
	info, err := buildinfo.ReadFile(binary)
	require.NoError(t, err)
	pkgs := strings.Join(sbomPackages(t, file), "\n")
	assert.Contains(t, pkgs, info.Main.Path+" ", "the main module")
	require.NotEmpty(t, info.Deps)
	for _, d := range info.Deps {
		assert.Contains(t, pkgs, d.Path+" "+d.Version, "module %s", d.Path)
		assert.True(t, purls["pkg:golang/"+d.Path+"@"+d.Version], "purl of %s@%s", d.Path, d.Version)
	}
}

// checkNotVerified: cosign verify and verify-attestation both fail for ref,
// verify with message.
func checkNotVerified(t *testing.T, ref, message string) {
	t.Helper()
	res := verify(t, ref, env.pub)
	assert.NotEqual(t, 0, res.ExitCode, "cosign verify passed for %s:\n%s", ref, res.Stdout)
	assert.Contains(t, res.Stderr, message)
	res = verifyAttestation(t, ref, env.pub)
	assert.NotEqual(t, 0, res.ExitCode, "cosign verify-attestation passed for %s:\n%s", ref, res.Stdout)
	assert.Contains(t, res.Stderr, "no matching attestations")
}

func verify(t *testing.T, ref, pub string) engine.Result {
	t.Helper()
	return cosign(t, "verify", "--key", pub, "--insecure-ignore-tlog=true", "--allow-http-registry", ref)
}

func verifyAttestation(t *testing.T, ref, pub string) engine.Result {
	t.Helper()
	return cosign(t, "verify-attestation", "--key", pub, "--insecure-ignore-tlog=true", "--allow-http-registry",
		"--type", "spdxjson", ref)
}

// checkVerified: cosign verify passed, and what it verified is the index
// by its digest, in this repository.
func checkVerified(t *testing.T, res engine.Result, p published) {
	t.Helper()
	require.Equal(t, 0, res.ExitCode, "cosign verify:\n%s", res.Stderr)
	var payloads []struct {
		Critical struct {
			Identity struct {
				DockerReference string `json:"docker-reference"`
			} `json:"identity"`
			Image struct {
				DockerManifestDigest string `json:"docker-manifest-digest"`
			} `json:"image"`
		} `json:"critical"`
	}
	unmarshal(t, []byte(res.Stdout), &payloads)
	require.Len(t, payloads, 1, "one signature")
	assert.Equal(t, p.digest, payloads[0].Critical.Image.DockerManifestDigest)
	assert.Equal(t, p.repo, payloads[0].Critical.Identity.DockerReference)
}

// checkAttested: cosign verify-attestation passed, with one in-toto
// statement about the index whose predicate is the SBOM file.
func checkAttested(t *testing.T, res engine.Result, p published, sbom string) {
	t.Helper()
	require.Equal(t, 0, res.ExitCode, "cosign verify-attestation:\n%s", res.Stderr)
	lines := strings.Split(strings.TrimSpace(res.Stdout), "\n")
	require.Len(t, lines, 1, "one attestation")
	var envelope struct {
		PayloadType string `json:"payloadType"`
		Payload     string `json:"payload"`
	}
	unmarshal(t, []byte(lines[0]), &envelope)
	assert.Equal(t, "application/vnd.in-toto+json", envelope.PayloadType)
	payload, err := base64.StdEncoding.DecodeString(envelope.Payload)
	require.NoError(t, err)
	var statement struct {
		PredicateType string `json:"predicateType"`
		Subject       []struct {
			Name   string            `json:"name"`
			Digest map[string]string `json:"digest"`
		} `json:"subject"`
		Predicate json.RawMessage `json:"predicate"`
	}
	unmarshal(t, payload, &statement)
	assert.Equal(t, "https://spdx.dev/Document", statement.PredicateType)
	require.Len(t, statement.Subject, 1)
	assert.Equal(t, p.repo, statement.Subject[0].Name)
	assert.Equal(t, strings.TrimPrefix(p.digest, "sha256:"), statement.Subject[0].Digest["sha256"])
	want, err := os.ReadFile(sbom)
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(statement.Predicate), "the attested predicate is not the SBOM")
}

// podmanHas says whether podman's store holds ref.
func podmanHas(t *testing.T, ref string) bool {
	t.Helper()
	return engine.Run(t, engine.Repo(), nil, nil, "podman", "image", "exists", ref).ExitCode == 0
}

// forget removes ref from podman's store, so that the next run must pull it.
func forget(t *testing.T, ref string) {
	t.Helper()
	if podmanHas(t, ref) {
		engine.MustRun(t, engine.Repo(), "podman", "rmi", ref)
	}
	require.False(t, podmanHas(t, ref))
}

var containerImageRe = regexp.MustCompile(`(?m)^      container:\n        image: \S+$`)

// kustomize's `container:` transformer with image: <repo>@<digest> on
// examples/kustomize/leader gives the same bytes as its `exec:` of the
// binary the image packs; podman pulled the image from the registry.
func kustomizeByDigest(t *testing.T, p published) {
	ref := p.byDigest()
	forget(t, ref)
	localImages = append(localImages, ref)
	build := func(function string, flags ...string) string {
		dir := t.TempDir()
		engine.CopyTree(t, filepath.Join(engine.Repo(), "examples/kustomize/leader"), dir)
		fnFile := filepath.Join(dir, "flapp-services.yaml")
		b, err := os.ReadFile(fnFile)
		require.NoError(t, err)
		require.Regexp(t, containerImageRe, string(b))
		require.NoError(t, os.WriteFile(fnFile, []byte(containerImageRe.ReplaceAllLiteralString(string(b), function)), 0o644))
		res := engine.Run(t, dir, nil, nil, env.kustomize, append([]string{"build", "--enable-alpha-plugins", "."}, flags...)...)
		require.Equal(t, 0, res.ExitCode, "kustomize build (%s):\n%s", function, res.Stderr)
		return res.Stdout
	}
	image := build("      container:\n        image: " + ref)
	assert.True(t, podmanHas(t, ref), "podman did not pull %s", ref)
	exec := build("      exec:\n        path: "+p.binary, "--enable-exec")
	assert.Contains(t, image, "name: mnist-leader-worker-1")
	assert.Equal(t, exec, image, "container: (from the registry) and exec: differ")
}

// kpt's `image: <repo>@<digest>` (pulled with --image-pull-policy always)
// renders a package to the same files as its `exec:` of the binary the
// image packs.
func kptByDigest(t *testing.T, p published) {
	ref := p.byDigest()
	localImages = append(localImages, ref)
	flapp, err := os.ReadFile(filepath.Join(engine.Repo(), "examples/flux/flapps/mnist-leader.yaml"))
	require.NoError(t, err)
	render := func(mutator string, flags []string, extraEnv []string) map[string]string {
		pkg := filepath.Join(t.TempDir(), "pkg")
		require.NoError(t, os.MkdirAll(pkg, 0o755))
		files := map[string]string{
			"Kptfile": `apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: pkg
  annotations:
    config.kubernetes.io/local-config: "true"
pipeline:
  mutators:
    - ` + mutator + `
      configPath: fn-config.yaml
`,
			"fn-config.yaml": `apiVersion: fn.fedlearner.k8s.io/v1alpha1
kind: FLAppServices
metadata:
  name: flapp-services
  annotations:
    config.kubernetes.io/local-config: "true"
spec:
  ownerReferences: Never
`,
			"mnist-leader.yaml": string(flapp),
		}
		for name, content := range files {
			require.NoError(t, os.WriteFile(filepath.Join(pkg, name), []byte(content), 0o644))
		}
		res := engine.Run(t, pkg, extraEnv, nil, env.kpt, append([]string{"fn", "render", "."}, flags...)...)
		require.Equal(t, 0, res.ExitCode, "kpt fn render (%s):\n%s\n%s", mutator, res.Stdout, res.Stderr)
		if strings.HasPrefix(mutator, "image: ") {
			require.Contains(t, res.Stdout+res.Stderr, `[PASS] "`+ref+`"`, "kpt ran the image")
		}
		out := engine.Snapshot(t, pkg)
		delete(out, "Kptfile") // names the function: differs by construction
		return out
	}
	image := render("image: "+ref, []string{"--image-pull-policy", "always"}, []string{"KRM_FN_RUNTIME=podman"})
	exec := render("exec: "+p.binary, []string{"--allow-exec"}, nil)
	var services int
	for _, content := range image {
		services += strings.Count(content, "\nkind: Service\n")
	}
	assert.Positive(t, services, "no Service rendered")
	assert.Equal(t, exec, image, "image: (from the registry) and exec: differ")
}
