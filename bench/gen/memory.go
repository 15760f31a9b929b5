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
	list, _ := benchdata.EmptyItemsList(benchdata.FileCeiling)
	write(filepath.Join(dir, benchdata.EmptyListFile), list)
	write(filepath.Join(dir, benchdata.WideKRMFile), benchdata.WideResourceList(benchdata.WideCount))
	write(filepath.Join(dir, benchdata.ManyKRMFile), benchdata.ResourceList(benchdata.ManyFiles, false))
	fmt.Fprintln(os.Stderr, "memory-budget inputs written to", dir)
}
