package main

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/fedlearner/flapp-services"

// layers is the import rule each package's doc.go states: the packages of
// this module it may import (arrows point down only), and libraries it must
// not import.
var layers = map[string]struct {
	module    []string // packages of this module it may import
	forbidden []string // import path prefixes it must not use
}{
	".":                  {module: []string{"internal/cli", "internal/sandbox"}},
	"internal/sandbox":   {},
	"internal/cli":       {module: []string{"fn", "internal/krmio", "internal/kustomize", "internal/repofs", "internal/yamlnodes", "render"}},
	"internal/krmio":     {module: []string{"fn", "internal/yamlnodes"}},
	"internal/yamlnodes": {},
	"internal/kustomize": {module: []string{"fn", "internal/repofs", "internal/yamlnodes"}},
	"internal/repofs":    {forbidden: []string{"sigs.k8s.io/kustomize", "go.yaml.in", "gopkg.in/yaml", "sigs.k8s.io/yaml"}},
	"fn":                 {module: []string{"render"}},
	"fn/fntest":          {module: []string{"fn", "render"}},
	"render":             {forbidden: []string{"sigs.k8s.io/kustomize", "go.yaml.in", "gopkg.in/yaml", "sigs.k8s.io/yaml", "os", "io", "net"}},
	"bench/gen":          {module: []string{"bench/benchdata"}},
	"bench/run":          {module: []string{"bench/benchdata"}},
	"bench/noop":         {},
	"bench/benchdata":    {},

	// Writes internal/cli/help_gen.go from the README (go generate).
	"internal/cli/gendocs": {},
}

// TestImportsPointDown holds every package's non-test imports to its layer:
// main -> internal/cli -> {internal/krmio -> fn, internal/kustomize ->
// {fn, internal/repofs}} and fn -> render. fn imports nothing under internal/, and nothing imports up.
func TestImportsPointDown(t *testing.T) {
	seen := 0
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "test" || d.Name() == "examples") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		rule, ok := layers[dir]
		if !ok {
			t.Errorf("%s: package %s has no layer in layers_test.go: add one, and state it in its doc.go", path, dir)
			return nil
		}
		seen++
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, spec := range f.Imports {
			imp, _ := strconv.Unquote(spec.Path.Value)
			if rest, ok := strings.CutPrefix(imp, module+"/"); ok {
				if !slices.Contains(rule.module, rest) {
					t.Errorf("%s imports %s: %s may import only %v of this module", path, imp, dir, rule.module)
				}
				continue
			}
			for _, bad := range rule.forbidden {
				if imp == bad || strings.HasPrefix(imp, bad+"/") || strings.HasPrefix(imp, bad) && strings.Contains(bad, ".") {
					t.Errorf("%s imports %s, which %s must never import", path, imp, dir)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 20 {
		t.Fatalf("only %d files checked", seen)
	}
}

// TestPackagesHaveDocGo: every package of the tool (not the root main,
// not the bench/ programs) states what it is for and what it may import in a
// doc.go of its own, as kustomize's and kyaml's packages do.
func TestPackagesHaveDocGo(t *testing.T) {
	for dir := range layers {
		if dir == "." || strings.HasPrefix(dir, "bench/") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, "doc.go"), nil, parser.ParseComments|parser.PackageClauseOnly)
		if err != nil {
			t.Errorf("%s: no doc.go: %v", dir, err)
			continue
		}
		want := "Package " + f.Name.Name + " "
		if f.Name.Name == "main" {
			want = "Command " + filepath.Base(dir) + " " // a program's doc comment, as go doc reads it
		}
		if f.Doc == nil || !strings.HasPrefix(f.Doc.Text(), want) {
			t.Errorf("%s/doc.go: its comment must start with %q", dir, want)
		}
	}
}

// TestDocGoStatesItsImports holds what each doc.go says it imports of this
// module ("Of this module it imports only a, b and c", or "it imports
// nothing of this module") to its layer above, which TestImportsPointDown
// holds the code to: a statement that drifts from the code fails.
func TestDocGoStatesItsImports(t *testing.T) {
	parens := regexp.MustCompile(`\([^)]*\)`)
	for dir, rule := range layers {
		if dir == "." || strings.HasPrefix(dir, "bench/") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, "doc.go"), nil, parser.ParseComments|parser.PackageClauseOnly)
		if err != nil || f.Doc == nil {
			t.Errorf("%s: no doc.go comment: %v", dir, err)
			continue
		}
		text := strings.Join(strings.Fields(parens.ReplaceAllString(f.Doc.Text(), "")), " ")
		var stated []string
		if _, list, ok := strings.Cut(text, "Of this module it imports only "); ok {
			for _, end := range []string{";", ". ", ", and nothing", ", never"} {
				list, _, _ = strings.Cut(list, end)
			}
			for _, part := range strings.Split(strings.ReplaceAll(list, " and ", ", "), ",") {
				if part = strings.Trim(part, " ."); part != "" {
					stated = append(stated, part)
				}
			}
		} else if !strings.Contains(text, "imports nothing of this module") {
			t.Errorf("%s/doc.go says neither \"Of this module it imports only ...\" nor \"it imports nothing of this module\"", dir)
			continue
		}
		slices.Sort(stated)
		want := slices.Sorted(slices.Values(rule.module))
		if !slices.Equal(stated, want) {
			t.Errorf("%s/doc.go says it imports %v of this module; its layer (and so its code) allows %v", dir, stated, want)
		}
	}
}
