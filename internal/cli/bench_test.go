package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/fedlearner/flapp-services/bench/benchdata"
)

// BenchmarkRender10k: `flapp-services render` on 500 FLApp files.
func BenchmarkRender10k(b *testing.B) {
	dir := b.TempDir()
	for i := 0; i < 500; i++ {
		var doc bytes.Buffer
		benchdata.WriteFLApp(&doc, i, "", false)
		if err := os.WriteFile(filepath.Join(dir, benchdata.AppName(i)+".yaml"), doc.Bytes(), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	// What the render command sets for the process (heapLimit), restored
	// for the benchmarks that run after this one.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(renderMemoryLimit))
	b.ReportAllocs()
	for b.Loop() {
		if err := RunRender(RenderOptions{Paths: []string{dir}}, nil, io.Discard, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
