package benchdata

import (
	"bytes"
	"fmt"
	"strings"
)

// The inputs of the memory budgets: each is what one file of a pull request,
// or one ResourceList, can hold within the default ceilings.

// WideServicesPerFLApp is the replica count of each wide FLApp: the default
// maxServicesPerFLApp.
const WideServicesPerFLApp = 10000

// WideFLApps is n FLApps of WideServicesPerFLApp Workers each, in a few
// hundred bytes apiece: 10 of them ask for 100,000 Services (the default
// maxServices) from a 4 kB file.
func WideFLApps(n int) []byte {
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString("---\n")
		}
		writeWideFLApp(&b, i)
	}
	return b.Bytes()
}

func writeWideFLApp(b *bytes.Buffer, i int) {
	fmt.Fprintf(b, `apiVersion: fedlearner.k8s.io/v1alpha1
kind: FLApp
metadata: {name: wide-%02d, namespace: team-%d}
spec:
  role: Leader
  peerSpecs: {Follower: {peerURL: fedlearner-operator.follower.svc.cluster.local:8100}}
  flReplicaSpecs:
    Worker:
      replicas: %d
      template: {spec: {containers: [{name: tensorflow, ports: [{name: flapp-port, containerPort: 50051}, {name: tf-port, containerPort: 50052}]}]}}
`, i, i%5, WideServicesPerFLApp)
}

// WideResourceList is WideFLApps(n) as the items of a ResourceList.
func WideResourceList(n int) []byte {
	var b bytes.Buffer
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	for i := 0; i < n; i++ {
		var doc bytes.Buffer
		writeWideFLApp(&doc, i)
		writeItem(&b, doc.String())
	}
	return b.Bytes()
}

// writeItem indents one YAML document as an item of a block sequence.
func writeItem(b *bytes.Buffer, doc string) {
	for j, line := range strings.SplitAfter(doc, "\n") {
		if line == "" {
			continue
		}
		if j == 0 {
			b.WriteString("- " + line)
		} else {
			b.WriteString("  " + line)
		}
	}
}

// SmallObjects is a stream of as many small ConfigMaps as fit in size bytes,
// and their number: the most objects one file within the per-file ceiling
// holds in a realistic shape.
func SmallObjects(size int) ([]byte, int) {
	var b bytes.Buffer
	n := 0
	for {
		doc := fmt.Sprintf("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c%06d\n", n)
		if b.Len()+len(doc) > size {
			return b.Bytes(), n
		}
		b.WriteString(doc)
		n++
	}
}

// EmptyItemsList is a v1 List of as many `- {}` items as fit in size bytes,
// and their number: far more YAML nodes than the default --max-document-nodes,
// which only bounding the document before it is parsed refuses cheaply.
func EmptyItemsList(size int) ([]byte, int) {
	const head, item = "apiVersion: v1\nkind: List\nitems:\n", "- {}\n"
	n := (size - len(head)) / len(item)
	return []byte(head + strings.Repeat(item, n)), n
}

// FileCeiling is the default --max-file-size: the largest file a render
// admits.
const FileCeiling = 8 << 20

// The memory-budget inputs, as bench/gen writes them under MemoryDir.
const (
	MemoryDir       = "memory"
	ManyFilesDir    = "render-5000-files" // 5,000 FLApp files, 20 Services each
	ManyFiles       = 5000
	WideFile        = "wide-10.yaml" // WideFLApps(WideCount)
	WideCount       = 10
	SmallObjectFile = "configmaps-8mib.yaml" // SmallObjects(FileCeiling)
	EmptyListFile   = "list-8mib.yaml"       // EmptyItemsList(FileCeiling)
	WideKRMFile     = "krm-wide-10.yaml"     // WideResourceList(WideCount)
	ManyKRMFile     = "krm-5000.yaml"        // ResourceList(ManyFiles, false)
)
