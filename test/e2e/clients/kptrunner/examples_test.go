package kptrunner

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// caseConfig is the part of kpt's runner config (.expected/config.yaml,
// runner.TestCaseConfig) that the examples use. Read strictly: the runner
// ignores a key it does not know, so a misspelt one would silently test less.
type caseConfig struct {
	TestType        string            `json:"testType,omitempty"`
	ExitCode        int               `json:"exitCode,omitempty"`
	StdErr          string            `json:"stdErr,omitempty"`
	ImagePullPolicy string            `json:"imagePullPolicy,omitempty"`
	Image           string            `json:"image,omitempty"` // eval only
	Args            map[string]string `json:"args,omitempty"`  // eval only: `-- key=value`
}

// exampleCase is one example package.
type exampleCase struct {
	Dir          string
	Config       caseConfig
	KptfileImage string // the Kptfile's mutator image; "" without a Kptfile
	Readme       string
}

func (c exampleCase) testType() string {
	if c.Config.TestType == "" {
		return "render" // the runner's default
	}
	return c.Config.TestType
}

// image is the image the case runs.
func (c exampleCase) image() string {
	if c.testType() == "eval" {
		return c.Config.Image
	}
	return c.KptfileImage
}

// invocation is the command the README must show: the one the runner runs,
// from the folder above the package, without the runner's --results-dir and
// --image-pull-policy (a render may show `--results-dir /tmp`).
func (c exampleCase) invocation() string {
	name := filepath.Base(c.Dir)
	if c.testType() == "render" {
		return "kpt fn render " + name
	}
	var args []string
	for k, v := range c.Config.Args {
		args = append(args, k+"="+v)
	}
	sort.Strings(args)
	return "kpt fn eval " + name + " --image " + c.Config.Image + " -- " + strings.Join(args, " ")
}

func readCase(t *testing.T, dir string) exampleCase {
	t.Helper()
	c := exampleCase{Dir: dir}
	b, err := os.ReadFile(filepath.Join(dir, ".expected/config.yaml"))
	require.NoError(t, err, "every example sets imagePullPolicy in .expected/config.yaml")
	require.NoError(t, yaml.UnmarshalStrict(b, &c.Config), "%s/.expected/config.yaml", dir)
	if b, err := os.ReadFile(filepath.Join(dir, "Kptfile")); err == nil {
		if m := imageLine.FindSubmatch(b); m != nil {
			c.KptfileImage = string(m[1])
		}
	} else {
		require.ErrorIs(t, err, os.ErrNotExist)
	}
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	require.NoError(t, err)
	c.Readme = string(readme)
	return c
}

// The example packages are catalog cases: the four kinds required are there;
// each is a kpt case (.expected/ hidden from kpt by .krmignore) that runs the
// image this suite builds, never pulled; a failing one pins kpt's results; and
// its README has the catalog's sections and shows the very command the runner
// runs, and how to fetch the package.
func TestExamplesAreCatalogCases(t *testing.T) {
	var names []string
	for _, dir := range exampleCases(t) {
		names = append(names, filepath.Base(dir))
	}
	for _, r := range required {
		assert.Contains(t, names, r)
	}
	for _, dir := range exampleCases(t) {
		c := readCase(t, dir)
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			ignore, err := os.ReadFile(filepath.Join(dir, ".krmignore"))
			require.NoError(t, err)
			assert.Contains(t, strings.Fields(string(ignore)), ".expected")
			assert.Contains(t, []string{"render", "eval"}, c.testType())
			assert.Equal(t, env.Image.Name, c.image(), "the image the case runs")
			assert.Equal(t, "Never", c.Config.ImagePullPolicy, "the image is the local build: kpt must never pull it")
			if c.testType() == "render" {
				assert.Empty(t, c.Config.Image, "a render case runs its Kptfile's image")
			}
			if c.Config.ExitCode != 0 {
				assert.FileExists(t, filepath.Join(dir, ".expected/results.yaml"), "a failing case pins kpt's results")
				assert.NotEmpty(t, c.Config.StdErr, "a failing case pins part of kpt's stderr")
			}
			for _, section := range []string{"### Overview", "### Fetch the example package", "### Function invocation", "### Expected result"} {
				assert.Contains(t, c.Readme, "\n"+section+"\n", "README section")
			}
			assert.Contains(t, c.Readme, "\n$ kpt pkg get https://github.com/fedlearner/flapp-services.git/examples/kpt/"+name+"\n")
			shown := strings.Contains(c.Readme, "\n$ "+c.invocation()+"\n") ||
				c.testType() == "render" && strings.Contains(c.Readme, "\n$ "+c.invocation()+" --results-dir /tmp\n")
			assert.True(t, shown, "the README shows the command the runner runs: %s", c.invocation())
		})
	}
}
