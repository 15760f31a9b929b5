// Package contract checks the Service contract on the binary in each way
// users run it: `render` over a directory, `render -` on stdin, and the KRM
// function with a ResourceList on stdin (what kustomize and kpt send). Each
// test runs the same input through every mode and asserts the same outcome.
package contract

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	h "github.com/fedlearner/flapp-services/test/integration/internal/harness"
)

func TestMain(m *testing.M) { os.Exit(h.Main(m)) }

// outcome is what one run left behind.
type outcome struct {
	exitCode       int
	stdout, stderr string
	// objects is the render's stream, or the items of the ResourceList
	// the KRM function wrote.
	objects []h.Object
	// results are the KRM function's results; nil in render mode.
	results []map[string]any
}

// errorText is every error the run reported: stderr, and in KRM mode the
// messages, field paths and objects of the error results.
func (o outcome) errorText() string {
	text := o.stderr
	for _, r := range o.results {
		if r["severity"] != "error" {
			continue
		}
		text += "\n" + str(r["message"])
		if f, ok := r["field"].(map[string]any); ok {
			text += "\n" + str(f["path"])
		}
		if ref, ok := r["resourceRef"].(map[string]any); ok {
			text += "\n" + str(ref["kind"]) + " " + str(ref["namespace"]) + "/" + str(ref["name"])
		}
	}
	return text
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// mode runs the documents docs (and, when not empty, a functionConfig)
// through the binary one way.
type mode struct {
	name string
	krm  bool
	run  func(t *testing.T, docs []string, config string) outcome
}

var modes = []mode{
	{name: "render", run: renderDir},
	{name: "render stdin", run: renderStdin},
	{name: "KRM", krm: true, run: krm},
}

// eachMode runs docs through every mode, as subtests.
func eachMode(t *testing.T, docs []string, config string, check func(t *testing.T, m mode, o outcome)) {
	t.Helper()
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			check(t, m, m.run(t, docs, config))
		})
	}
}

// renderDir writes each document to its own file under apps/ and runs
// `render [--config cfg.yaml] apps` there.
func renderDir(t *testing.T, docs []string, config string) outcome {
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "apps"), 0o755))
	for i, d := range docs {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "apps", string(rune('a'+i))+".yaml"), []byte(d), 0o644))
	}
	args := []string{"render"}
	if config != "" {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "cfg.yaml"), []byte(config), 0o644))
		args = append(args, "--config", "cfg.yaml")
	}
	return renderOutcome(t, run(t, dir, "", append(args, "apps")...))
}

// renderStdin runs `render [--config cfg.yaml] -` with the documents as one
// stream on stdin.
func renderStdin(t *testing.T, docs []string, config string) outcome {
	dir := t.TempDir()
	args := []string{"render"}
	if config != "" {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "cfg.yaml"), []byte(config), 0o644))
		args = append(args, "--config", "cfg.yaml")
	}
	return renderOutcome(t, run(t, dir, strings.Join(docs, "---\n"), append(args, "-")...))
}

func renderOutcome(t *testing.T, o outcome) outcome {
	t.Helper()
	if o.stdout != "" {
		o.objects = h.MustParseObjects(t, []byte(o.stdout))
	}
	return o
}

// krm sends the documents as the items of a ResourceList, the config as its
// functionConfig, and reads the ResourceList written back.
func krm(t *testing.T, docs []string, config string) outcome {
	rl := map[string]any{"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": objects(t, docs)}
	if config != "" {
		rl["functionConfig"] = objects(t, []string{config})[0]
	}
	in, err := yaml.Marshal(rl)
	require.NoError(t, err)
	o := run(t, t.TempDir(), string(in))
	var out struct {
		APIVersion string           `json:"apiVersion"`
		Kind       string           `json:"kind"`
		Items      []h.Object       `json:"items"`
		Results    []map[string]any `json:"results"`
	}
	require.NoError(t, yaml.Unmarshal([]byte(o.stdout), &out), "the KRM function always writes a ResourceList:\n%s\nstderr:\n%s", o.stdout, o.stderr)
	require.Equal(t, "ResourceList", out.Kind, o.stdout)
	o.objects, o.results = out.Items, out.Results
	if o.results == nil {
		o.results = []map[string]any{}
	}
	return o
}

// objects decodes one object per document.
func objects(t *testing.T, docs []string) []h.Object {
	t.Helper()
	out := make([]h.Object, 0, len(docs))
	for _, d := range docs {
		var o h.Object
		require.NoError(t, yaml.Unmarshal([]byte(d), &o), d)
		out = append(out, o)
	}
	return out
}

// run runs the binary with args in dir, stdin on its stdin.
func run(t *testing.T, dir, stdin string, args ...string) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.Binary(t), args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	o := outcome{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("flapp-services %v did not finish in 2 minutes", args)
	case errors.As(err, &ee):
		o.exitCode = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return o
}
