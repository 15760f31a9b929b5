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
// the linux ones are the very binaries the image packs. `make dist-sign`
// signs SHA256SUMS and `make verify-release` verifies the assets as a user
// would (checkDistSigned).
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
	t.Run("signed", func(t *testing.T) { checkDistSigned(t, dist, want) })

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

// checkDistSigned: `make dist-sign` (cosign sign-blob, with the suite's key:
// the release workflow signs keyless) writes SHA256SUMS.cosign.bundle beside
// SHA256SUMS, which does not list it, not even after `make dist-sums` runs
// again; `make verify-release` (cosign verify-blob of the bundle, then
// sha256sum -c) passes with the signer's public key, and fails with another
// key, with SHA256SUMS changed after signing (a line for a file that is not
// there, or one digest of a file that was swapped for another), and with a
// binary changed after signing.
func checkDistSigned(t *testing.T, dist string, assets []string) {
	cosignBin := filepath.Join(env.tools, "cosign")
	// cosign's environment, but the make's own HOME: the Makefile finds the
	// tool cache through it.
	var signEnv []string
	for _, e := range cosignEnv() {
		if !strings.HasPrefix(e, "HOME=") {
			signEnv = append(signEnv, e)
		}
	}
	sign := runLong(t, engine.Repo(), signEnv, "make", "-s", "dist-sign", "DIST="+dist, "COSIGN="+cosignBin, "COSIGN_KEY="+env.key)
	require.Equal(t, 0, sign.ExitCode, "make dist-sign:\n%s\n%s", sign.Stdout, sign.Stderr)
	bundle := filepath.Join(dist, "SHA256SUMS.cosign.bundle")
	require.FileExists(t, bundle)
	sums, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	require.NoError(t, err)
	assert.NotContains(t, string(sums), "cosign.bundle", "SHA256SUMS does not list its own signature")
	resum := runLong(t, engine.Repo(), nil, "make", "-s", "dist-sums", "DIST="+dist)
	require.Equal(t, 0, resum.ExitCode, resum.Stderr)
	again, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	require.NoError(t, err)
	require.Equal(t, string(sums), string(again), "make dist-sums leaves the signature out")

	verify := func(pub string) engine.Result {
		return runLong(t, engine.Repo(), signEnv, "make", "-s", "verify-release", "DIST="+dist, "COSIGN="+cosignBin, "COSIGN_PUB="+pub)
	}
	ok := verify(env.pub)
	require.Equal(t, 0, ok.ExitCode, "make verify-release:\n%s\n%s", ok.Stdout, ok.Stderr)
	assert.Contains(t, ok.Stderr, "Verified OK", "cosign verified the signature")
	for _, name := range assets {
		assert.Contains(t, ok.Stdout, name+": OK", "sha256sum checked %s", name)
	}
	other := verify(env.otherPub)
	assert.NotEqual(t, 0, other.ExitCode, "another key must not verify:\n%s", other.Stdout)

	// SHA256SUMS changed after signing: the signature no longer holds.
	sumsPath := filepath.Join(dist, "SHA256SUMS")
	tamper := func(what string, change func(), restore func()) {
		change()
		res := verify(env.pub)
		restore()
		assert.NotEqual(t, 0, res.ExitCode, "%s: make verify-release must fail:\n%s\n%s", what, res.Stdout, res.Stderr)
	}
	tamper("SHA256SUMS with one more line", func() {
		require.NoError(t, os.WriteFile(sumsPath, append(append([]byte{}, sums...), []byte(strings.Repeat("0", 64)+"  extra\n")...), 0o644))
	}, func() { require.NoError(t, os.WriteFile(sumsPath, sums, 0o644)) })
	first := assets[0]
	binPath := filepath.Join(dist, first)
	bin, err := os.ReadFile(binPath)
	require.NoError(t, err)
	swapped := append(append([]byte{}, bin...), 0)
	sum := sha256.Sum256(swapped)
	tamper("SHA256SUMS naming a swapped binary", func() {
		var lines []string
		for _, l := range strings.Split(strings.TrimSuffix(string(sums), "\n"), "\n") {
			if strings.HasSuffix(l, "  "+first) {
				l = hex.EncodeToString(sum[:]) + "  " + first
			}
			lines = append(lines, l)
		}
		require.NoError(t, os.WriteFile(sumsPath, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
		require.NoError(t, os.WriteFile(binPath, swapped, 0o755))
	}, func() {
		require.NoError(t, os.WriteFile(sumsPath, sums, 0o644))
		require.NoError(t, os.WriteFile(binPath, bin, 0o755))
	})
	// A binary changed after signing: the signature holds, its digest does not.
	tamper("a changed binary", func() { require.NoError(t, os.WriteFile(binPath, swapped, 0o755)) },
		func() { require.NoError(t, os.WriteFile(binPath, bin, 0o755)) })
	ok = verify(env.pub)
	require.Equal(t, 0, ok.ExitCode, "restored: %s", ok.Stderr)
}
