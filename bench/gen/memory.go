package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fedlearner/flapp-services/bench/benchdata"
)

// writeMemoryInputs writes the inputs of the memory budgets under
// <out>/memory (names in bench/benchdata).
func writeMemoryInputs(out string) {
	dir := filepath.Join(out, benchdata.MemoryDir)
	files := filepath.Join(dir, benchdata.ManyFilesDir)
	check(os.RemoveAll(files))
	check(os.MkdirAll(files, 0o755))
	for i := 0; i < benchdata.ManyFiles; i++ {
		var b bytes.Buffer
		benchdata.WriteFLApp(&b, i, "", false)
		write(filepath.Join(files, benchdata.AppName(i)+".yaml"), b.Bytes())
	}
	write(filepath.Join(dir, benchdata.WideFile), benchdata.WideFLApps(benchdata.WideCount))
	objects, _ := benchdata.SmallObjects(benchdata.FileCeiling)
	write(filepath.Join(dir, benchdata.SmallObjectFile), objects)
	mentioning, _ := benchdata.MentioningObjects(benchdata.FileCeiling)
	write(filepath.Join(dir, benchdata.MentioningFile), mentioning)
	list, _ := benchdata.EmptyItemsList(benchdata.FileCeiling)
	write(filepath.Join(dir, benchdata.EmptyListFile), list)
	write(filepath.Join(dir, benchdata.WideKRMFile), benchdata.WideResourceList(benchdata.WideCount))
	write(filepath.Join(dir, benchdata.ManyKRMFile), benchdata.ResourceList(benchdata.ManyFiles, false))
	lists, _ := benchdata.NodeBoundLists(benchdata.FileCeiling)
	write(filepath.Join(dir, benchdata.ListsFile), lists)
	writeOverlay(filepath.Join(dir, benchdata.OverlayDir))
	writeHostile(filepath.Join(dir, benchdata.HostileDir))
	fmt.Fprintln(os.Stderr, "memory-budget inputs written to", dir)
}

// writeOverlay writes the kustomize overlay of the memory budgets (see
// benchdata.OverlayFLApps).
func writeOverlay(dir string) {
	check(os.RemoveAll(dir))
	var files []string
	for i := 0; i < benchdata.OverlayFLApps; i++ {
		files = append(files, benchdata.AppName(i)+".yaml")
	}
	base := filepath.Join(dir, "base")
	check(os.MkdirAll(base, 0o755))
	for i, f := range files {
		var b bytes.Buffer
		benchdata.WriteFLApp(&b, i, "", false)
		write(filepath.Join(base, f), b.Bytes())
	}
	write(filepath.Join(base, "kustomization.yaml"), benchdata.BaseKustomization(files))
	for _, overlay := range []string{"overlay", "overlay-plain"} {
		withFunction := overlay == "overlay"
		check(os.MkdirAll(filepath.Join(dir, overlay), 0o755))
		write(filepath.Join(dir, overlay, "kustomization.yaml"), benchdata.OverlayKustomization("base", withFunction))
		if withFunction {
			write(filepath.Join(dir, overlay, "flapp-services.yaml"), []byte(benchdata.FunctionConfig))
		}
	}
}

// writeHostile writes the hostile kustomize families' roots (see
// benchdata.HostileCases).
func writeHostile(dir string) {
	check(os.RemoveAll(dir))
	for _, c := range benchdata.HostileCases() {
		for name, content := range c.Files {
			p := filepath.Join(dir, c.Name, name)
			check(os.MkdirAll(filepath.Dir(p), 0o755))
			write(p, []byte(content))
		}
	}
}
