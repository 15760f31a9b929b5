package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/fedlearner/flapp-services/bench/benchdata"
)

// writeCorpus writes the kustomize corpus under <out>/kustomize-corpus (see
// benchdata.CorpusRoots), its entries running bin.
func writeCorpus(out, bin string) {
	dir := filepath.Join(out, benchdata.CorpusDir)
	check(os.RemoveAll(dir))
	for name, content := range benchdata.CorpusFiles(bin) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		check(os.MkdirAll(filepath.Dir(p), 0o755))
		write(p, []byte(content))
	}
	fmt.Fprintf(os.Stderr, "kustomize corpus (%d roots) written to %s\n", len(benchdata.CorpusRoots()), dir)
}
