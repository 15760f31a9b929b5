package benchdata

import (
	"bytes"
	"fmt"
	"strconv"
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
	return smallObjects(size, "", "")
}

// MentioningObjects is SmallObjects with FLApp in every ConfigMap and one
// FLApp last: what discover must parse to the end to claim (kio.ByteReader,
// which discover used before, parsed the whole file at once).
func MentioningObjects(size int) ([]byte, int) {
	return smallObjects(size, "data: {note: not an FLApp}\n", "---\n"+lastFLAppDocument)
}

func smallObjects(size int, data, last string) ([]byte, int) {
	var b bytes.Buffer
	n := 0
	for {
		doc := fmt.Sprintf("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c%06d\n%s", n, data)
		if b.Len()+len(doc)+len(last) > size {
			b.WriteString(last)
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
	SmallObjectFile = "configmaps-8mib.yaml"       // SmallObjects(FileCeiling)
	MentioningFile  = "configmaps-flapp-8mib.yaml" // MentioningObjects(FileCeiling)
	EmptyListFile   = "list-8mib.yaml"             // EmptyItemsList(FileCeiling)
	WideKRMFile     = "krm-wide-10.yaml"           // WideResourceList(WideCount)
	ManyKRMFile     = "krm-5000.yaml"              // ResourceList(ManyFiles, false)
	ListsFile       = "lists-8mib.yaml"            // NodeBoundLists(FileCeiling)
	OverlayDir      = "kustomize-5000"             // the overlay of OverlayFLApps FLApps (see Overlay)
)

// The default node ceilings of render and discover: internal/cli's
// DefaultMaxDocumentNodes and DefaultMaxObjectNodes (the package's tests
// hold them equal).
const (
	DocumentNodes = 600000
	ObjectNodes   = 100000
)

// NodeBoundLists is the worst file discover must parse: as many v1 Lists as
// fit in size bytes, each just under the default --max-document-nodes as
// counted before parsing, of the largest ConfigMaps --max-object-nodes
// admits, every one mentioning FLApp in an annotation. The last item of the
// last List is the file's only FLApp, so discover finds it only once it has
// parsed every document. It returns the file and the number of Lists.
//
// Counted as yamlnodes.Bound (internal/yamlnodes) counts: every ':' and '{' and ',' two, a
// '-' before a blank two, a line one, the document two. A data line
// ("    kxxxx: v\n") is 3 of the bound and 2 nodes.
func NodeBoundLists(size int) ([]byte, int) {
	const (
		listBound   = 2 + 3*3 // the document, and the List's three head lines
		objectBound = 23      // bigConfigMapHead's lines
		objectNodes = 16      // their nodes
		lineBound   = 3
		flappLines  = 50 // data lines the FLApp takes the place of, in the bound
	)
	perObject := min((ObjectNodes-objectNodes)/2, ((DocumentNodes-listBound)/ListObjects-objectBound)/lineBound)
	// As many Lists as fit unpadded; then the values are padded so that the
	// file is size bytes, within a line.
	lists := 0
	for len(nodeBoundLists(lists+1, perObject, flappLines, 0)) <= size {
		lists++
	}
	spare := size - len(nodeBoundLists(lists, perObject, flappLines, 0))
	return nodeBoundLists(lists, perObject, flappLines, spare), lists
}

// ListObjects is how many ConfigMaps each of NodeBoundLists' Lists holds.
const ListObjects = 4

// nodeBoundLists writes NodeBoundLists' lists, spreading spare bytes of
// padding over the values.
func nodeBoundLists(lists, perObject, flappLines, spare int) []byte {
	lines := lists*ListObjects*perObject - flappLines
	var b bytes.Buffer
	line := 0
	for l := 0; l < lists; l++ {
		if l > 0 {
			b.WriteString("---\n")
		}
		b.WriteString("apiVersion: v1\nkind: List\nitems:\n")
		for o := 0; o < ListObjects; o++ {
			n := perObject
			if l == lists-1 && o == ListObjects-1 {
				n -= flappLines
			}
			fmt.Fprintf(&b, bigConfigMapHead, l, o)
			for j := 0; j < n; j++ {
				pad := spare / lines
				if line < spare%lines {
					pad++
				}
				line++
				key := strconv.FormatInt(int64(j), 36)
				fmt.Fprintf(&b, "    k%s%s: v%s\n", strings.Repeat("0", 4-len(key)), key, strings.Repeat("x", pad))
			}
		}
	}
	b.WriteString(lastFLApp)
	return b.Bytes()
}

// bigConfigMapHead is a ConfigMap item before its data, named by its List
// and its place in it.
const bigConfigMapHead = `- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: big-%d-%d
    annotations:
      note: not an FLApp
  data:
`

// lastFLAppDocument is a small FLApp, the last of MentioningObjects and
// (as lastFLApp) of NodeBoundLists.
const lastFLAppDocument = `apiVersion: fedlearner.k8s.io/v1alpha1
kind: FLApp
metadata: {name: last, namespace: team-0}
spec: {role: Leader, peerSpecs: {Follower: {peerURL: "fedlearner-operator.follower.svc.cluster.local:8100"}}, flReplicaSpecs: {Worker: {replicas: 1, template: {spec: {containers: [{name: tensorflow, ports: [{name: flapp-port, containerPort: 50051}]}]}}}}}
`

// lastFLApp is lastFLAppDocument as a List item.
var lastFLApp = "- " + strings.ReplaceAll(strings.TrimSuffix(lastFLAppDocument, "\n"), "\n", "\n  ") + "\n"

// The kustomize build of the memory budgets: an overlay of OverlayFLApps
// FLApps, one file each in base/, that moves them to OverlayNamespace and
// patches their image. Under OverlayDir, overlay/ then runs flapp-services
// as its transformer (what `render` builds) and overlay-plain/ is the same
// without the transformer entry (what kustomize builds to compare: the
// build alone).
const (
	OverlayFLApps    = 5000
	OverlayNamespace = "prod"
)

// BaseKustomization lists files as resources.
func BaseKustomization(files []string) []byte {
	var b bytes.Buffer
	b.WriteString("resources:\n")
	for _, f := range files {
		b.WriteString("- " + f + "\n")
	}
	return b.Bytes()
}

// FunctionConfig is the transformer entry of BaseKustomization: render
// takes it as its configuration and runs nothing.
const FunctionConfig = `apiVersion: fn.fedlearner.k8s.io/v1alpha1
kind: FLAppServices
metadata:
  name: flapp-services
  annotations:
    config.kubernetes.io/function: |
      container:
        image: ghcr.io/fedlearner/flapp-services:v0.1.0
spec:
  ownerReferences: Never
`

// OverlayKustomization is the overlay over the base directory base, with
// the function as its transformer when withFunction: after the overlay's
// patch, where kustomize would run it.
func OverlayKustomization(base string, withFunction bool) []byte {
	k := fmt.Sprintf(`resources:
- ../%s
namespace: %s
patches:
- target: {kind: FLApp}
  patch: |
    - op: replace
      path: /spec/flReplicaSpecs/Worker/template/spec/containers/0/image
      value: fedlearner/fedlearner:v2.4
`, base, OverlayNamespace)
	if withFunction {
		k += "transformers:\n- flapp-services.yaml\n"
	}
	return []byte(k)
}
