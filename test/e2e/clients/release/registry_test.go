package release

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The media types a registry may answer a manifest request with: an index
// (image-push's), an image manifest (a platform's, a signature's, Flux's artifact).
var manifestTypes = []string{
	"application/vnd.oci.image.index.v1+json",
	"application/vnd.docker.distribution.manifest.list.v2+json",
	"application/vnd.oci.image.manifest.v1+json",
	"application/vnd.docker.distribution.manifest.v2+json",
}

// manifest is what the registry serves for repo (host/name) and reference
// (a tag or a digest): the bytes and the digest it says they have, which
// must be theirs.
type manifest struct {
	Body   []byte
	Digest string
}

func getManifest(t *testing.T, repo, reference string) manifest {
	t.Helper()
	host, name, ok := strings.Cut(repo, "/")
	require.True(t, ok, repo)
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("http://%s/v2/%s/manifests/%s", host, name, reference), nil)
	require.NoError(t, err)
	req.Header.Set("Accept", strings.Join(manifestTypes, ", "))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "GET %s:%s: %s", repo, reference, body)
	m := manifest{Body: body, Digest: resp.Header.Get("Docker-Content-Digest")}
	require.Equal(t, sha256Digest(body), m.Digest, "the registry's digest of %s:%s", repo, reference)
	return m
}

// putManifest pushes a manifest (mediaType, body) to repo under tag.
func putManifest(t *testing.T, repo, tag, mediaType string, body []byte) {
	t.Helper()
	host, name, _ := strings.Cut(repo, "/")
	req, err := http.NewRequest(http.MethodPut, fmt.Sprintf("http://%s/v2/%s/manifests/%s", host, name, tag), bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", mediaType)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	require.Equal(t, http.StatusCreated, resp.StatusCode, "PUT %s:%s: %s", repo, tag, b)
}

// digestOf is the digest repo:tag resolves to.
func digestOf(t *testing.T, repo, tag string) string {
	t.Helper()
	return getManifest(t, repo, tag).Digest
}

func sha256Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func getBlob(t *testing.T, repo, digest string) []byte {
	t.Helper()
	host, name, _ := strings.Cut(repo, "/")
	resp, err := http.Get(fmt.Sprintf("http://%s/v2/%s/blobs/%s", host, name, digest))
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "GET blob %s", digest)
	require.Equal(t, digest, sha256Digest(body))
	return body
}

// ociIndex and ociManifest are the fields of the OCI image spec the suite reads.
type ociIndex struct {
	MediaType string `json:"mediaType"`
	Manifests []struct {
		MediaType string `json:"mediaType"`
		Digest    string `json:"digest"`
		Platform  struct {
			OS           string `json:"os"`
			Architecture string `json:"architecture"`
		} `json:"platform"`
	} `json:"manifests"`
}

type descriptor struct {
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"`
}

type ociManifest struct {
	MediaType    string            `json:"mediaType"`
	ArtifactType string            `json:"artifactType"`
	Config       descriptor        `json:"config"`
	Layers       []descriptor      `json:"layers"`
	Annotations  map[string]string `json:"annotations"`
}

func unmarshal(t *testing.T, b []byte, v any) {
	t.Helper()
	require.NoError(t, json.Unmarshal(b, v), "%s", b)
}

// blobFile is where the registry's filesystem storage keeps the blob (or
// manifest) with digest.
func blobFile(digest string) string {
	hexDigest := strings.TrimPrefix(digest, "sha256:")
	return filepath.Join(env.storage, "docker/registry/v2/blobs/sha256", hexDigest[:2], hexDigest, "data")
}

// tamperBlob changes the stored bytes of digest in place (old -> new, same
// length, so the registry's size records still hold), as an attacker with
// write access to the registry's storage would, and returns the function
// that restores them.
func tamperBlob(t *testing.T, digest, old, replacement string) func() {
	t.Helper()
	require.Len(t, replacement, len(old))
	path := blobFile(digest)
	orig, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(orig), old)
	changed := strings.Replace(string(orig), old, replacement, 1)
	require.NoError(t, os.WriteFile(path, []byte(changed), 0o644))
	return func() { require.NoError(t, os.WriteFile(path, orig, 0o644)) }
}
