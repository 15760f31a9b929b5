// Package image proves the container image with a real engine (podman, from
// hack/podman.sh): `make image` is reproducible, the image holds only the
// binary and the user database, carries the OCI labels, runs as a numeric
// non-root user and exactly as kustomize and kpt run it; `make image-oci`
// writes a linux/amd64 + linux/arm64 OCI archive.
package image

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"debug/elf"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fedlearner/flapp-services/test/e2e/clients/internal/engine"
)

// testImage is this package's own tag, so that removing it between two
// builds touches nothing the other packages use.
const testImage = "localhost/flapp-services-e2e-image:test"

var img engine.Image

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if err := engine.Setup(); err != nil {
		fmt.Fprintln(os.Stderr, "clients/image:", err)
		return 1
	}
	var err error
	if img, err = engine.BuildImage(testImage, ""); err != nil {
		fmt.Fprintln(os.Stderr, "clients/image:", err)
		return 1
	}
	code := m.Run()
	_ = engine.RemoveImage(testImage)
	if err := engine.PruneDangling(); err != nil {
		fmt.Fprintln(os.Stderr, "clients/image:", err)
	}
	return code
}

// Two `make image` runs of one commit give the same image ID: the image is
// removed in between, so the second is a full build, not a cache hit.
func TestMakeImageIsReproducible(t *testing.T) {
	require.NoError(t, engine.RemoveImage(testImage))
	_, err := engine.ImageID(testImage)
	require.Error(t, err, "the image must be gone before the second build")
	again, err := engine.BuildImage(testImage, "")
	require.NoError(t, err)
	assert.Equal(t, img.ID, again.ID, "two make image runs gave different image IDs")
}

type imageConfig struct {
	Os, Architecture string
	Config           struct {
		User       string
		Entrypoint []string
		Cmd        []string
		Env        []string
		Labels     map[string]string
	}
}

func inspect(t *testing.T, name string) imageConfig {
	t.Helper()
	out := engine.MustRun(t, engine.Repo(), "podman", "image", "inspect", name)
	var cfgs []imageConfig
	require.NoError(t, json.Unmarshal([]byte(out), &cfgs))
	require.Len(t, cfgs, 1)
	return cfgs[0]
}

// The image config: local platform, numeric non-root user, the binary as
// entrypoint, the standard OCI labels matching the commit and the binary's
// own version.
func TestImageConfig(t *testing.T) {
	c := inspect(t, testImage)
	assert.Equal(t, "linux/"+runtime.GOARCH, c.Os+"/"+c.Architecture)
	assert.Equal(t, "65532:65532", c.Config.User, "numeric non-root user")
	assert.Equal(t, []string{"/usr/local/bin/flapp-services"}, c.Config.Entrypoint)
	assert.Empty(t, c.Config.Cmd)

	rev := strings.TrimSpace(engine.MustRun(t, engine.Repo(), "git", "rev-parse", "HEAD"))
	version := run1(t, nil, "version")
	l := c.Config.Labels
	assert.Equal(t, "https://github.com/fedlearner/flapp-services", l["org.opencontainers.image.source"])
	assert.Equal(t, rev, l["org.opencontainers.image.revision"])
	assert.Equal(t, "flapp-services "+l["org.opencontainers.image.version"]+"\n", version, "label version = the binary's version")
	assert.Equal(t, "Apache-2.0", l["org.opencontainers.image.licenses"], "the SPDX expression of LICENSE")
}

// run1 runs the image with the clients' arguments (plus extra before the
// image name), args after it, and returns stdout.
func run1(t *testing.T, stdin []byte, args ...string) string {
	t.Helper()
	res := engine.Run(t, engine.Repo(), nil, stdin, "podman", append(append(append([]string{}, engine.ClientRunArgs...), testImage), args...)...)
	require.Equal(t, 0, res.ExitCode, "podman run: %s", res.Stderr)
	return res.Stdout
}

const resourceList = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: fedlearner.k8s.io/v1alpha1
  kind: FLApp
  metadata:
    name: mnist
    namespace: fl
  spec:
    role: Leader
    peerSpecs:
      Follower:
        peerURL: peer:443
    flReplicaSpecs:
      Worker:
        replicas: 2
        template:
          spec:
            containers:
            - name: tensorflow
              ports:
              - name: flapp-port
                containerPort: 50051
`

// Run exactly as kustomize's container: and kpt's image: do
// (`run --rm -i --network none --user nobody --security-opt=no-new-privileges`):
// `--user nobody` resolves through the image's /etc/passwd, and a
// ResourceList on stdin gives the Services on stdout. The same bytes as the
// binary run directly.
func TestRunsAsTheClientsDo(t *testing.T) {
	out := run1(t, []byte(resourceList))
	assert.Contains(t, out, "kind: ResourceList")
	assert.Contains(t, out, "name: mnist-leader-worker-0")
	assert.Contains(t, out, "name: mnist-leader-worker-1")

	bin := filepath.Join(engine.Repo(), "bin", "linux_"+runtime.GOARCH, "flapp-services")
	unlock, err := engine.Lock()
	require.NoError(t, err)
	direct := engine.Run(t, engine.Repo(), nil, []byte(resourceList), bin)
	unlock()
	require.Equal(t, 0, direct.ExitCode, direct.Stderr)
	assert.Equal(t, direct.Stdout, out, "the image and the binary disagree")

	// An unknown user fails: --user nobody works because of /etc/passwd,
	// not because the engine ignores the flag.
	args := append([]string{}, engine.ClientRunArgs...)
	for i, a := range args {
		if a == "nobody" {
			args[i] = "no-such-user"
		}
	}
	res := engine.Run(t, engine.Repo(), nil, nil, "podman", append(args, testImage, "version")...)
	assert.NotEqual(t, 0, res.ExitCode, "a user missing from /etc/passwd must not resolve")
}

// layerFiles lists the files of an image's layers (podman save, OCI layout),
// with their content for regular files.
func layerFiles(t *testing.T, name string) map[string][]byte {
	t.Helper()
	tarPath := filepath.Join(t.TempDir(), "image.tar")
	engine.MustRun(t, engine.Repo(), "podman", "save", "--format", "oci-archive", "-o", tarPath, name)
	blobs := readTar(t, tarPath)
	var index struct{ Manifests []struct{ Digest string } }
	require.NoError(t, json.Unmarshal(blobs["index.json"], &index))
	require.Len(t, index.Manifests, 1)
	var manifest struct{ Layers []struct{ Digest string } }
	require.NoError(t, json.Unmarshal(blob(t, blobs, index.Manifests[0].Digest), &manifest))
	return layers(t, blobs, manifest.Layers)
}

func readTar(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	return untar(t, f)
}

func untar(t *testing.T, r io.Reader) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		require.NoError(t, err)
		name := strings.TrimPrefix(h.Name, "./")
		if h.Typeflag == tar.TypeDir {
			files[strings.TrimSuffix(name, "/")+"/"] = nil
			continue
		}
		b, err := io.ReadAll(tr)
		require.NoError(t, err)
		files[name] = b
	}
}

func blob(t *testing.T, blobs map[string][]byte, digest string) []byte {
	t.Helper()
	b, ok := blobs["blobs/"+strings.Replace(digest, ":", "/", 1)]
	require.True(t, ok, "blob %s missing", digest)
	return b
}

func layers(t *testing.T, blobs map[string][]byte, ls []struct{ Digest string }) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for _, l := range ls {
		b := blob(t, blobs, l.Digest)
		var r io.Reader = bytes.NewReader(b)
		if len(b) > 2 && b[0] == 0x1f && b[1] == 0x8b {
			gz, err := gzip.NewReader(bytes.NewReader(b))
			require.NoError(t, err)
			r = gz
		}
		for k, v := range untar(t, r) {
			files[k] = v
		}
	}
	return files
}

func fileNames(files map[string][]byte) []string {
	var names []string
	for k := range files {
		if !strings.HasSuffix(k, "/") {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	return names
}

// Nothing but what a function run needs: the binary, /etc/passwd, /etc/group.
func TestImageContents(t *testing.T) {
	files := layerFiles(t, testImage)
	assert.Equal(t, []string{"etc/group", "etc/passwd", "usr/local/bin/flapp-services"}, fileNames(files))
	assert.Contains(t, string(files["etc/passwd"]), "nobody:x:65534:65534:")
	assert.Contains(t, string(files["etc/passwd"]), ":x:65532:65532:")
	assert.Contains(t, string(files["etc/group"]), "nobody:x:65534:")
	checkStatic(t, files["usr/local/bin/flapp-services"], runtime.GOARCH)
}

// checkStatic: an ELF executable for arch with no interpreter (static).
func checkStatic(t *testing.T, b []byte, arch string) {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(b))
	require.NoError(t, err)
	want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[arch]
	assert.Equal(t, want, f.Machine, "binary architecture")
	for _, p := range f.Progs {
		assert.NotEqual(t, elf.PT_INTERP, p.Type, "the binary must be static (no ELF interpreter)")
	}
}

// `make image-oci` writes bin/flapp-services-oci.tar: an OCI layout whose
// index holds one image index with linux/amd64 and linux/arm64, each with
// its own static binary and the same labels and user.
func TestMakeImageOCI(t *testing.T) {
	unlock, err := engine.Lock()
	require.NoError(t, err)
	res := engine.Run(t, engine.Repo(), nil, nil, "make", "image-oci", "IMAGE="+testImage)
	var blobs map[string][]byte
	if res.ExitCode == 0 {
		blobs = readTar(t, filepath.Join(engine.Repo(), "bin/flapp-services-oci.tar"))
	}
	engine.Run(t, engine.Repo(), nil, nil, "podman", "manifest", "rm", testImage+"-index")
	unlock()
	require.Equal(t, 0, res.ExitCode, "make image-oci:\n%s\n%s", res.Stdout, res.Stderr)

	assert.Contains(t, string(blobs["oci-layout"]), `"imageLayoutVersion"`)
	var top struct {
		Manifests []struct {
			MediaType, Digest string
			Annotations       map[string]string
		}
	}
	require.NoError(t, json.Unmarshal(blobs["index.json"], &top))
	require.Len(t, top.Manifests, 1)
	require.Equal(t, "application/vnd.oci.image.index.v1+json", top.Manifests[0].MediaType)

	var index struct {
		Manifests []struct {
			MediaType, Digest string
			Platform          struct{ OS, Architecture string }
		}
	}
	require.NoError(t, json.Unmarshal(blob(t, blobs, top.Manifests[0].Digest), &index))
	var platforms []string
	for _, m := range index.Manifests {
		p := m.Platform.OS + "/" + m.Platform.Architecture
		platforms = append(platforms, p)
		t.Run(p, func(t *testing.T) {
			var manifest struct {
				Config struct{ Digest string }
				Layers []struct{ Digest string }
			}
			require.NoError(t, json.Unmarshal(blob(t, blobs, m.Digest), &manifest))
			var cfg struct {
				OS           string `json:"os"`
				Architecture string `json:"architecture"`
				Config       struct {
					User   string
					Labels map[string]string
				} `json:"config"`
			}
			require.NoError(t, json.Unmarshal(blob(t, blobs, manifest.Config.Digest), &cfg))
			assert.Equal(t, p, cfg.OS+"/"+cfg.Architecture)
			assert.Equal(t, "65532:65532", cfg.Config.User)
			for _, l := range []string{"source", "version", "revision"} {
				assert.NotEmpty(t, cfg.Config.Labels["org.opencontainers.image."+l], l)
			}
			assert.Equal(t, "Apache-2.0", cfg.Config.Labels["org.opencontainers.image.licenses"])
			files := layers(t, blobs, manifest.Layers)
			assert.Equal(t, []string{"etc/group", "etc/passwd", "usr/local/bin/flapp-services"}, fileNames(files))
			checkStatic(t, files["usr/local/bin/flapp-services"], m.Platform.Architecture)
		})
	}
	sort.Strings(platforms)
	assert.Equal(t, []string{"linux/amd64", "linux/arm64"}, platforms)
}
