// Command gen writes the synthetic inputs of `make bench` (see BENCHMARKS.md).
//
// Every FLApp has Master 1, PS 2 and Worker 17 replicas, so 20 Services, and a
// tensorflow container with two named ports. It writes, under -out:
//
//	krm-1k.yaml, krm-10k.yaml, krm-100k.yaml  ResourceLists of 50/500/5,000 FLApps
//	floor-10k.yaml   the function's own output for krm-10k.yaml (the do-nothing baseline's input)
//	kpt-10k.yaml     500 FLApps with kpt path annotations plus the 10,000 Services
//	                 a first run generated for them (what `kpt fn render` sends the second time)
//	render-10k/      the 500 FLApps as one file each, for `flapp-services render`
//	empty.yaml       a ResourceList without items
//	kustomize-1k/    a kustomization with 50 FLApps and the function as a transformer
//	kustomize-1k-plain/  the same build's output (FLApps + 1,000 Services) as plain resources
//	kustomize-1k-flapps/ the 50 FLApps without the transformer
//	kustomize-corpus/    kustomization roots as teams lay them out, the function
//	                 as their exec transformer (see benchdata.CorpusRoots)
//	memory/          the inputs of the memory budgets (see writeMemoryInputs)
//
// The inputs that are the function's output are made by running -bin.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/fedlearner/flapp-services/bench/benchdata"
)

func main() {
	out := flag.String("out", ".cache/bench-data", "output directory")
	bin := flag.String("bin", "bin/flapp-services", "the function binary, used to produce its own output")
	memoryOnly := flag.Bool("memory-only", false, "write only the inputs of the memory budgets (make bench-memory)")
	corpusOnly := flag.Bool("corpus-only", false, "write only the kustomize corpus (bench/run -only corpus)")
	flag.Parse()
	binPath, err := filepath.Abs(*bin)
	check(err)
	check(os.MkdirAll(*out, 0o755))
	if *corpusOnly {
		writeCorpus(*out, binPath)
		return
	}
	writeMemoryInputs(*out)
	if *memoryOnly {
		return
	}

	for _, size := range []struct {
		name   string
		flapps int
	}{{"1k", 50}, {"10k", 500}, {"100k", 5000}} {
		write(filepath.Join(*out, "krm-"+size.name+".yaml"), benchdata.ResourceList(size.flapps, false))
	}
	write(filepath.Join(*out, "empty.yaml"), []byte("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n"))

	// The baseline reads and writes the function's own output.
	write(filepath.Join(*out, "floor-10k.yaml"), run(binPath, benchdata.ResourceList(500, false)))

	// kpt: the second render sees the first one's Services beside the FLApps.
	first := run(binPath, benchdata.ResourceList(500, true))
	write(filepath.Join(*out, "kpt-10k.yaml"), withoutResults(first))

	// render mode: one FLApp per file, as in a GitOps repository.
	dir := filepath.Join(*out, "render-10k")
	check(os.RemoveAll(dir))
	check(os.MkdirAll(dir, 0o755))
	for i := 0; i < 500; i++ {
		var b bytes.Buffer
		benchdata.WriteFLApp(&b, i, "", false)
		write(filepath.Join(dir, fmt.Sprintf("%s.yaml", benchdata.AppName(i))), b.Bytes())
	}

	// kustomize: the function as a transformer over 50 FLApps (1,000 Services).
	kdir := filepath.Join(*out, "kustomize-1k")
	check(os.MkdirAll(kdir, 0o755))
	var flapps bytes.Buffer
	for i := 0; i < 50; i++ {
		if i > 0 {
			flapps.WriteString("---\n")
		}
		benchdata.WriteFLApp(&flapps, i, "", false)
	}
	write(filepath.Join(kdir, "flapps.yaml"), flapps.Bytes())
	write(filepath.Join(kdir, "kustomization.yaml"), []byte("resources:\n- flapps.yaml\ntransformers:\n- fn.yaml\n"))
	write(filepath.Join(kdir, "fn.yaml"), []byte(fmt.Sprintf(`apiVersion: fn.fedlearner.k8s.io/v1alpha1
kind: FLAppServices
metadata:
  name: flapp-services
  annotations:
    config.kubernetes.io/function: |
      exec:
        path: %s
spec:
  ownerReferences: IfKnown
`, binPath)))
	fdir := filepath.Join(*out, "kustomize-1k-flapps")
	check(os.MkdirAll(fdir, 0o755))
	write(filepath.Join(fdir, "flapps.yaml"), flapps.Bytes())
	write(filepath.Join(fdir, "kustomization.yaml"), []byte("resources:\n- flapps.yaml\n"))
	pdir := filepath.Join(*out, "kustomize-1k-plain")
	check(os.MkdirAll(pdir, 0o755))
	cmd := exec.Command(binPath, "render", filepath.Join(kdir, "flapps.yaml"))
	cmd.Stderr = os.Stderr
	rendered, err := cmd.Output()
	check(err)
	write(filepath.Join(pdir, "all.yaml"), rendered)
	write(filepath.Join(pdir, "kustomization.yaml"), []byte("resources:\n- all.yaml\n"))

	writeCorpus(*out, binPath)
}

func run(bin string, input []byte) []byte {
	cmd := exec.Command(bin)
	cmd.Stdin = bytes.NewReader(input)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	check(err)
	return out
}

// withoutResults cuts the top-level results field of a ResourceList (kpt does
// not send a function its earlier results).
func withoutResults(rl []byte) []byte {
	if i := bytes.Index(rl, []byte("\nresults:\n")); i >= 0 {
		return rl[:i+1]
	}
	return rl
}

func write(path string, data []byte) {
	check(os.WriteFile(path, data, 0o644))
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
