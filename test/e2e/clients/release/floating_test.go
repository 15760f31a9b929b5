package release

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// floatingPush runs `make image-push-floating` after image-push, as the
// workflow does, with the release tags git would list.
func floatingPush(t *testing.T, p published, version, releaseTags string) string {
	t.Helper()
	res := makeTarget(t, nil, nil, "-s", "image-push-floating", "IMAGE="+p.image, "VERSION="+version, "RELEASE_TAGS="+releaseTags)
	require.Equal(t, 0, res.ExitCode, "make image-push-floating:\n%s\n%s", res.Stdout, res.Stderr)
	return res.Stdout
}

// The floating tags: a final release moves vX.Y and vX to its own digest
// (and the signature of that digest verifies through them); a prerelease
// moves none; a patch of an older line moves its vX.Y but leaves vX at the
// newer line.
func TestFloatingTags(t *testing.T) {
	repo := env.registry + "/floating/flapp-services"

	latest := imagePush(t, repo, "v2.1.0", "v2.1.0")
	out := floatingPush(t, latest, "v2.1.0", "v2.0.0 v2.1.0")
	assert.Contains(t, out, repo+":v2.1 -> "+latest.digest)
	assert.Contains(t, out, repo+":v2 -> "+latest.digest)
	for _, tag := range []string{"v2.1.0", "v2.1", "v2"} {
		assert.Equal(t, latest.digest, digestOf(t, repo, tag), tag)
	}
	res := cosign(t, "sign", "--yes", "--key", env.key, "--tlog-upload=false", "--allow-http-registry", latest.byDigest())
	require.Equal(t, 0, res.ExitCode, res.Stderr)
	checkVerified(t, verify(t, repo+":v2", env.pub), latest)

	rc := imagePush(t, repo, "v2.2.0-rc.1", "v2.2.0-rc.1")
	out = floatingPush(t, rc, "v2.2.0-rc.1", "v2.0.0 v2.1.0")
	assert.Contains(t, out, "v2.2.0-rc.1 is not a final release")
	assert.NotEqual(t, latest.digest, rc.digest)
	assert.Equal(t, latest.digest, digestOf(t, repo, "v2"), "a prerelease moved v2")

	patch := imagePush(t, repo, "v2.0.1", "v2.0.1")
	out = floatingPush(t, patch, "v2.0.1", "v2.0.0 v2.1.0 v2.2.0-rc.1")
	assert.Contains(t, out, repo+":v2.0 -> "+patch.digest)
	assert.Contains(t, out, "v2 stays at v2.1.0")
	assert.Equal(t, patch.digest, digestOf(t, repo, "v2.0"))
	assert.Equal(t, latest.digest, digestOf(t, repo, "v2"), "a patch of v2.0 moved v2 back")
	assert.Equal(t, latest.digest, digestOf(t, repo, "v2.1"))
}
