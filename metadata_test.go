package main

import (
	"bufio"
	"bytes"
	"net/mail"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// catalogRequiredFields are the fields the kpt functions catalog requires in
// a function's metadata.yaml: required_fields of scripts/verify-docs.py in
// kptdev/krm-functions-catalog at commit
// 76fe3817f9496724ca04414d136917a9926e5e40.
var catalogRequiredFields = []string{"image", "description", "tags", "sourceURL", "examplePackageURLs", "emails", "license"}

// functionMetadata is metadata.yaml; decoding it strictly rejects a field
// the catalog does not know (a misspelt one).
type functionMetadata struct {
	Image              string   `yaml:"image"`
	Description        string   `yaml:"description"`
	Tags               []string `yaml:"tags"`
	SourceURL          string   `yaml:"sourceURL"`
	ExamplePackageURLs []string `yaml:"examplePackageURLs"`
	Emails             []string `yaml:"emails"`
	License            string   `yaml:"license"`
	Hidden             bool     `yaml:"hidden"` // the catalog's one optional field
}

// catalogExamples are the catalog-style example packages metadata.yaml
// lists, under examples/kpt/.
var catalogExamples = []string{"flapp-services-fresh", "flapp-services-scale-down", "flapp-services-error", "flapp-services-imperative"}

// metadata.yaml has every field the catalog requires, each well formed the
// way verify-docs.py checks the catalog's own, pointing at this project:
// its image (the Makefile's IMAGE without the tag), its repository (the
// Dockerfile's SOURCE), its example packages and its license.
func TestCatalogMetadata(t *testing.T) {
	raw, err := os.ReadFile("metadata.yaml")
	require.NoError(t, err)
	var fields map[string]any
	require.NoError(t, yaml.Unmarshal(raw, &fields))
	for _, f := range catalogRequiredFields {
		v, ok := fields[f]
		if assert.True(t, ok, "metadata.yaml: field %s is required", f) {
			assert.NotEmpty(t, v, "metadata.yaml: field %s is empty", f)
		}
	}
	var meta functionMetadata
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	require.NoError(t, dec.Decode(&meta), "metadata.yaml")

	image := makeVariable(t, "IMAGE")
	repository, tag, ok := strings.Cut(image, ":")
	require.True(t, ok && tag == "$(VERSION)", "the Makefile's IMAGE is %q, not <repository>:$(VERSION)", image)
	assert.Equal(t, repository, meta.Image, "image: the project's image, without a tag (as the catalog's are)")

	assert.NotContains(t, strings.TrimSpace(meta.Description), "\n", "description: one line")
	require.NotEmpty(t, meta.Tags, "tags: at least one")
	assert.Contains(t, meta.Tags, "mutator", "tags: the catalog's word for what the function is")
	for _, tag := range meta.Tags {
		assert.NotEmpty(t, strings.TrimSpace(tag), "tags: an empty tag")
	}

	source := dockerfileArg(t, "SOURCE")
	tree := source + "/tree/main"
	assert.Equal(t, tree, meta.SourceURL, "sourceURL: the function's folder on the default branch, https://github.com/<repo>/tree/<branch>/<path> (the root here)")

	var listed []string
	for _, u := range meta.ExamplePackageURLs {
		parsed, err := url.Parse(u)
		if !assert.NoError(t, err, "examplePackageURLs: %s", u) {
			continue
		}
		rel, ok := strings.CutPrefix(u, tree+"/")
		if !assert.True(t, ok && parsed.Scheme == "https" && parsed.RawQuery == "" && parsed.Fragment == "",
			"examplePackageURLs: %s is not a folder of %s", u, tree) {
			continue
		}
		assert.Equal(t, "examples/kpt", path.Dir(rel), "examplePackageURLs: %s is not an example kpt package", u)
		listed = append(listed, path.Base(rel))
	}
	assert.ElementsMatch(t, catalogExamples, listed, "examplePackageURLs")

	require.NotEmpty(t, meta.Emails, "emails: at least one")
	for _, e := range meta.Emails {
		addr, err := mail.ParseAddress(e)
		if assert.NoError(t, err, "emails: %q", e) {
			assert.Equal(t, e, addr.Address, "emails: a bare address, no display name")
		}
	}

	assert.Equal(t, "Apache-2.0", meta.License, "license: an SPDX identifier")
	assert.Equal(t, meta.License, dockerfileArg(t, "LICENSES"), "the image's licenses label")
	license, err := os.ReadFile("LICENSE")
	require.NoError(t, err)
	assert.Contains(t, string(license), "Apache License\n                           Version 2.0, January 2004")
}

// The example packages follow the catalog's rules for its examples
// (verify-docs.py): the name starts with the function's name, the README's
// first line is "# <function>: <Example Name>" naming the example, and
// every such folder is listed in metadata.yaml. A package not in this
// checkout yet is reported, not failed.
func TestCatalogExamplePackages(t *testing.T) {
	for _, name := range catalogExamples {
		dir := filepath.Join("examples", "kpt", name)
		if _, err := os.Stat(dir); os.IsNotExist(err) {
			t.Logf("%s does not exist yet: its checks are skipped", dir)
			continue
		}
		assert.FileExists(t, filepath.Join(dir, "Kptfile"))
		f, err := os.Open(filepath.Join(dir, "README.md"))
		if !assert.NoError(t, err) {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Scan()
		title := sc.Text()
		require.NoError(t, f.Close())
		assert.True(t, strings.HasPrefix(title, "# flapp-services: "), "%s/README.md: the title %q is not \"# flapp-services: Example Name\"", dir, title)
		short := strings.ReplaceAll(strings.TrimPrefix(name, "flapp-services"), "-", " ")
		assert.Contains(t, strings.ToLower(title), short, "%s/README.md: the title %q does not name the example", dir, title)
	}
	found, err := filepath.Glob(filepath.Join("examples", "kpt", "flapp-services-*"))
	require.NoError(t, err)
	for _, dir := range found {
		assert.True(t, slices.Contains(catalogExamples, filepath.Base(dir)), "%s is not listed in metadata.yaml's examplePackageURLs", dir)
	}
}

// makeVariable is the value a `NAME ?= value` line of the Makefile assigns.
func makeVariable(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("Makefile")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^` + name + `\s*\??=\s*(\S+)\s*$`).FindSubmatch(b)
	require.NotNil(t, m, "the Makefile sets no %s", name)
	return string(m[1])
}

// dockerfileArg is the default of an `ARG NAME=value` line of the Dockerfile.
func dockerfileArg(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("Dockerfile")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^ARG ` + name + `=(\S+)$`).FindSubmatch(b)
	require.NotNil(t, m, "the Dockerfile has no ARG %s=...", name)
	return string(m[1])
}
