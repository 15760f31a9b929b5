package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fedlearner/flapp-services/fn/fntest"
	"sigs.k8s.io/kustomize/kyaml/kio"
)

// FuzzRender feeds arbitrary bytes to render mode, as a file and on stdin.
// Whatever the input: no panic (RunRender's recover would report an
// "internal error"), a failure prints nothing on stdout and a reason on
// stderr, a success prints a stream that parses, whose generated Services
// read alike with kubectl's YAML 1.1 reader and kyaml's, and that renders
// again to itself, and the file and stdin renders agree.
func FuzzRender(f *testing.F) {
	for _, p := range []string{"../../examples/basic/leader.yaml", "../../examples/basic/follower.yaml"} {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		goodFLApp, "", "{}", "---\n---\n", "[1, 2]", "a: &a [*a]\n", "\ufeff" + goodFLApp,
		strings.ReplaceAll(goodFLApp, "\n", "\r\n"),
		"apiVersion: v1\nkind: List\nitems:\n- " + strings.ReplaceAll(strings.TrimSpace(goodFLApp), "\n", "\n  ") + "\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, annotations: {config.kubernetes.io/local-config: \"true\"}}\n",
		strings.Replace(goodFLApp, "replicas: 2", "replicas: 2147483647", 1),
		strings.Replace(goodFLApp, "name: normal", "name: n\x00", 1),
		goodFLApp + "---\n" + strings.NewReplacer("Leader", "Follower", "namespace: default", "namespace: b").Replace(goodFLApp),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "in.yaml"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		fileOut, fileErr, fileFailed := renderBytes(t, RenderOptions{Paths: []string{dir}}, nil)
		stdinOut, _, stdinFailed := renderBytes(t, RenderOptions{Paths: []string{"-"}}, data)
		if fileFailed != stdinFailed || !bytes.Equal(fileOut, stdinOut) {
			t.Fatalf("file and stdin disagree: failed %v/%v\nfile:\n%s\nstdin:\n%s", fileFailed, stdinFailed, fileOut, stdinOut)
		}
		if fileFailed {
			return
		}
		if _, err := (&kio.ByteReader{Reader: bytes.NewReader(fileOut)}).Read(); err != nil {
			t.Fatalf("a success that does not parse: %v\n%s", err, fileOut)
		}
		fntest.ServicesReadAlike(t, fileOut, false)
		again, againErr, failed := renderBytes(t, RenderOptions{Paths: []string{"-"}}, fileOut)
		if failed || !bytes.Equal(again, fileOut) {
			t.Fatalf("the render does not render to itself (failed: %v, stderr %s)\nfirst:\n%s\nsecond:\n%s\nfirst stderr: %s", failed, againErr, fileOut, again, fileErr)
		}
	})
}

// renderBytes runs RunRender and checks what holds for every run.
func renderBytes(t *testing.T, opts RenderOptions, stdin []byte) (stdout []byte, stderr string, failed bool) {
	t.Helper()
	var out, errOut bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- RunRender(opts, bytes.NewReader(stdin), &out, &errOut) }()
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("no answer in 10 s (a hang) for %s, stdin %q", strings.Join(opts.Paths, " "), stdin)
	}
	stderr = errOut.String()
	if strings.Contains(stderr, "internal error") {
		t.Fatalf("a panic was recovered: %s", stderr)
	}
	if err != nil {
		if err != ErrFailed {
			t.Fatalf("unexpected error %v", err)
		}
		if out.Len() > 0 {
			t.Fatalf("a failed render printed %d bytes", out.Len())
		}
		if strings.TrimSpace(stderr) == "" {
			t.Fatal("a failure without a reason")
		}
		return nil, stderr, true
	}
	if out.Len() == 0 {
		t.Fatal("a success with an empty render")
	}
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if line != "" && !strings.HasPrefix(line, "warning") {
			t.Fatalf("a success with %q on stderr", line)
		}
	}
	return out.Bytes(), stderr, false
}
