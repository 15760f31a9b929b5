package benchdata

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedlearner/flapp-services/internal/cli"
)

// Every root of the kustomize corpus builds with `flapp-services render`
// (in process, from the corpus directory as make bench runs it) and prints
// its FLApps and their Services. make bench builds each with kustomize too.
func TestCorpusRootsRender(t *testing.T) {
	dir := t.TempDir()
	// render reads the entry as its configuration and runs nothing: the
	// binary need not exist, only be named flapp-services.
	files := CorpusFiles(filepath.Join(dir, "bin", "flapp-services"))
	for name, content := range files {
		p := filepath.Join(dir, CorpusDir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(filepath.Join(dir, CorpusDir))
	seen := map[string]bool{}
	for _, root := range CorpusRoots() {
		t.Run(root.Root, func(t *testing.T) {
			if root.Large && testing.Short() {
				t.Skip("one of the slowest roots; go test -short leaves it out")
			}
			if seen[root.Root] {
				t.Fatalf("%s is listed twice", root.Root)
			}
			seen[root.Root] = true
			if _, ok := files[root.Root+"/kustomization.yaml"]; !ok {
				t.Fatalf("no %s/kustomization.yaml in the corpus", root.Root)
			}
			var stdout, stderr bytes.Buffer
			args := append(append([]string{"render"}, root.Args...), root.Root)
			if code := cli.Main("test", args, strings.NewReader(""), &stdout, &stderr); code != 0 {
				t.Fatalf("flapp-services render %s: exit %d\n%s", root.Root, code, stderr.String())
			}
			flapps, services := 0, 0
			for _, line := range strings.Split(stdout.String(), "\n") {
				switch line {
				case "kind: FLApp":
					flapps++
				case "kind: Service":
					services++
				}
			}
			if flapps != root.FLApps || services < flapps {
				t.Errorf("printed %d FLApps and %d Services, want %d FLApps and a Service for each replica", flapps, services, root.FLApps)
			}
		})
	}
}

// The corpus is the same on every run (the bench compares builds of it
// across commits).
func TestCorpusIsDeterministic(t *testing.T) {
	a, b := CorpusFiles("/bin/flapp-services"), CorpusFiles("/bin/flapp-services")
	if len(a) != len(b) {
		t.Fatalf("%d files, then %d", len(a), len(b))
	}
	for name, content := range a {
		if b[name] != content {
			t.Errorf("%s differs between two runs", name)
		}
	}
}
