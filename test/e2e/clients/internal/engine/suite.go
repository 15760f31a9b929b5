package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// Suite is what a client suite's TestMain prepares for its tests.
type Suite struct {
	// Image is the image the example names, built by `make image` under that
	// name, so the example runs verbatim.
	Image Image
	// WorkDir is a temporary folder (removed after the tests) holding a copy
	// of the image's binary, for exec-mode runs of the same bytes.
	WorkDir string
}

// RunSuite runs the tests of the client suite name: it sets the engine up,
// calls install (the client under test), builds the image that the first
// match of image (one group) names in the example file (relative to the
// repository), runs m and prunes the dangling images. It fills s and returns
// the exit code for os.Exit.
func RunSuite(m *testing.M, name, example string, image *regexp.Regexp, install func() error, s *Suite) int {
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return 1
	}
	if err := Setup(); err != nil {
		return fail(err)
	}
	if err := install(); err != nil {
		return fail(err)
	}
	b, err := os.ReadFile(filepath.Join(Repo(), example))
	if err != nil {
		return fail(err)
	}
	match := image.FindSubmatch(b)
	if match == nil {
		return fail(fmt.Errorf("%s: no image matching %s", example, image))
	}
	if s.WorkDir, err = os.MkdirTemp("", "clients-"); err != nil {
		return fail(err)
	}
	defer func() { _ = os.RemoveAll(s.WorkDir) }()
	if s.Image, err = BuildImage(string(match[1]), s.WorkDir); err != nil {
		return fail(err)
	}
	code := m.Run()
	if err := PruneDangling(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
	}
	return code
}
