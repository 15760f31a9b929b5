package release

import (
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/hex"
	"fmt"
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

// distPlatforms are the platforms TestDist builds: linux/amd64 and linux/arm64 (the image's) on
// every CI run; `make release-check` sets DIST_PLATFORMS to every platform a release carries
// (the Makefile's list, darwin and windows included: each a full cross-compile, so not in every run).
func distPlatforms() []string {
	if v := strings.Fields(os.Getenv("DIST_PLATFORMS")); len(v) > 0 {
		return v
	}
	return []string{"linux/amd64", "linux/arm64"}
}

// distName is the release asset's name for platform.
func distName(version, platform string) string {
	goos, goarch, _ := strings.Cut(platform, "/")
	name := fmt.Sprintf("flapp-services-%s-%s-%s", version, goos, goarch)
	if goos == "windows" {
		name += ".exe"
	}
	return name
}

// `make dist` cross-builds every release binary (CGO off, -trimpath,
// version stamped) with SHA256SUMS; each is an executable of its platform,
// `sha256sum -c` accepts the sums, the native one prints its version, and
// the linux ones are the very binaries the image packs.
func TestDist(t *testing.T) {
	const version = "v1.4.2"
	dist := filepath.Join(t.TempDir(), "dist")
	platforms := distPlatforms()
	res := runLong(t, engine.Repo(), nil, "make", "-s", "dist", "VERSION="+version, "DIST="+dist,
		"DIST_PLATFORMS="+strings.Join(platforms, " "))
	require.Equal(t, 0, res.ExitCode, "make dist:\n%s\n%s", res.Stdout, res.Stderr)

	var want []string
	for _, p := range platforms {
		want = append(want, distName(version, p))
	}
	entries, err := os.ReadDir(dist)
	require.NoError(t, err)
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	assert.ElementsMatch(t, append(append([]string{}, want...), "SHA256SUMS"), got)

	sums, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	require.NoError(t, err)
	var lines []string
	for _, name := range want {
		b, err := os.ReadFile(filepath.Join(dist, name))
		require.NoError(t, err)
		sum := sha256.Sum256(b)
		lines = append(lines, hex.EncodeToString(sum[:])+"  "+name)
	}
	sort.Strings(lines)
	gotLines := strings.Split(strings.TrimSpace(string(sums)), "\n")
	sort.Strings(gotLines)
	assert.Equal(t, lines, gotLines, "SHA256SUMS")
	check := engine.Run(t, dist, nil, nil, "sha256sum", "--strict", "-c", "SHA256SUMS")
	assert.Equal(t, 0, check.ExitCode, "sha256sum -c:\n%s%s", check.Stdout, check.Stderr)

	for _, p := range platforms {
		t.Run(p, func(t *testing.T) {
			path := filepath.Join(dist, distName(version, p))
			checkExecutable(t, path, p)
			info, err := buildinfo.ReadFile(path)
			require.NoError(t, err)
			settings := map[string]string{}
			for _, s := range info.Settings {
				settings[s.Key] = s.Value
			}
			goos, goarch, _ := strings.Cut(p, "/")
			assert.Equal(t, goos, settings["GOOS"])
			assert.Equal(t, goarch, settings["GOARCH"])
			assert.Equal(t, "0", settings["CGO_ENABLED"])
			assert.Equal(t, "true", settings["-trimpath"])
			// -trimpath keeps -ldflags out of the build info: the stamped
			// version is in the binary's data (the native one prints it below).
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Contains(t, string(b), version, "version not stamped")
		})
	}

	native := filepath.Join(dist, distName(version, runtime.GOOS+"/"+runtime.GOARCH))
	out := engine.Run(t, dist, nil, nil, native, "version")
	require.Equal(t, 0, out.ExitCode, out.Stderr)
	assert.Equal(t, "flapp-services "+version+"\n", out.Stdout)

	// The image's binaries (make image-bins, what the Dockerfile packs) are
	// the same bytes: a release's binaries and its image run the same code.
	images := map[string][]byte{}
	res = makeTarget(t, nil, func() {
		for _, arch := range []string{"amd64", "arm64"} {
			b, err := os.ReadFile(filepath.Join(engine.Repo(), "bin", "linux_"+arch, "flapp-services"))
			require.NoError(t, err)
			images[arch] = b
		}
	}, "-s", "image-bins", "VERSION="+version)
	require.Equal(t, 0, res.ExitCode, res.Stderr)
	for arch, b := range images {
		d, err := os.ReadFile(filepath.Join(dist, distName(version, "linux/"+arch)))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(d, b), "linux/%s: make dist and make image-bins built different binaries", arch)
	}
}

// checkExecutable: path is an executable for platform (ELF, Mach-O or PE
// of its architecture); an ELF one is static (no interpreter).
func checkExecutable(t *testing.T, path, platform string) {
	t.Helper()
	goos, goarch, _ := strings.Cut(platform, "/")
	switch goos {
	case "linux":
		f, err := elf.Open(path)
		require.NoError(t, err)
		defer func() { _ = f.Close() }()
		assert.Equal(t, map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[goarch], f.Machine)
		assert.Equal(t, elf.ET_EXEC, f.Type)
		for _, prog := range f.Progs {
			assert.NotEqual(t, elf.PT_INTERP, prog.Type, "static: no ELF interpreter")
		}
	case "darwin":
		f, err := macho.Open(path)
		require.NoError(t, err)
		defer func() { _ = f.Close() }()
		assert.Equal(t, map[string]macho.Cpu{"amd64": macho.CpuAmd64, "arm64": macho.CpuArm64}[goarch], f.Cpu)
		assert.Equal(t, macho.TypeExec, f.Type)
	case "windows":
		f, err := pe.Open(path)
		require.NoError(t, err)
		defer func() { _ = f.Close() }()
		assert.Equal(t, map[string]uint16{"amd64": pe.IMAGE_FILE_MACHINE_AMD64, "arm64": pe.IMAGE_FILE_MACHINE_ARM64}[goarch], f.Machine)
		assert.NotZero(t, f.Characteristics&pe.IMAGE_FILE_EXECUTABLE_IMAGE)
	default:
		t.Fatalf("no check for %s", goos)
	}
}
