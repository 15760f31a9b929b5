package cli

import (
	"strconv"

	"github.com/fedlearner/flapp-services/fn"
	"github.com/fedlearner/flapp-services/internal/krmio"
	"github.com/fedlearner/flapp-services/internal/kustomize"
	"github.com/fedlearner/flapp-services/internal/repofs"
	"github.com/fedlearner/flapp-services/render"
)

// Defaults of the ceilings this package enforces itself.
const (
	// DefaultMaxObjects bounds the objects one render reads: each costs
	// memory and time to split, parse and check however small it is, and
	// a refused one an error kept to the end (SECURITY.md, Known limits,
	// measures a flood of them).
	DefaultMaxObjects = 200000
	// DefaultMaxDocumentNodes bounds one document's YAML nodes, counted
	// on its bytes before it is parsed (yamlnodes.Bound): a parsed tree costs
	// memory by the node, so a document's tree stays bounded whatever it
	// holds, while a kubectl export of thousands of FLApps still reads
	// (SECURITY.md, Why these defaults, has the cost per node and the
	// largest List).
	DefaultMaxDocumentNodes = 600000
	// DefaultMaxObjectNodes bounds one object's YAML nodes, counted once it
	// is parsed and before it is kept: writing an object costs go-yaml
	// memory by the node at its peak (its event queue), so this bounds what
	// writing one object may cost, with room above the largest CRDs in
	// common use (SECURITY.md, Why these defaults).
	DefaultMaxObjectNodes = 100000
	// renderMemoryLimit is render mode's soft heap limit (GOMEMLIMIT when
	// that is unset): it keeps the worst input the ceilings admit within
	// render mode's memory budget (BENCHMARKS.md, Memory budgets;
	// SECURITY.md, Memory).
	renderMemoryLimit = 192 << 20
	// buildMemoryLimit is render mode's soft heap limit while a kustomize
	// build runs (GOMEMLIMIT when that is unset). The build holds every
	// object at once, so under renderMemoryLimit the collector ran through
	// the whole of a large one, for several times the CPU of a build
	// without a limit. Under this one the overlay of BENCHMARKS.md takes
	// about the CPU of a build without a limit, and peaks below the real
	// kustomize's on the same overlay (which has no limit): SECURITY.md,
	// Memory, has the measurements.
	buildMemoryLimit = 512 << 20
	// discoverMemoryLimit is discover's soft heap limit (GOMEMLIMIT when
	// that is lower). discover holds one document and nothing else, so a
	// tighter limit costs CPU only on a document near the node bound: it
	// keeps discover's peak RSS on the worst input the ceilings admit
	// within discover's budget, what the shared repo-server sidecar can
	// spare on every refresh (BENCHMARKS.md, Memory budgets; SECURITY.md,
	// Memory).
	discoverMemoryLimit = 96 << 20
	// checkCeiling bounds the file --check reads, with room above a
	// committed render of the most Services a run may make (SECURITY.md,
	// Why these defaults, gives its size).
	checkCeiling = 256 << 20
)

// Limit is one ceiling on what a run reads, holds or prints, with where it
// is set and where it is enforced. Limits is the one list of them;
// SECURITY.md's table is checked against it.
type Limit struct {
	Name      string
	Default   string
	Flag      string // of render, if any
	ConfigKey string // functionConfig setting, if any
	Check     string // where it is enforced, and when
}

// Limits are every ceiling, in the order SECURITY.md lists them.
var Limits = []Limit{
	{"file size", repofs.Size(repofs.DefaultMaxFileSize), "--max-file-size", "",
		"internal/repofs: every file's size as listed, before anything is read; stdin as it is read"},
	{"input size", repofs.Size(repofs.DefaultMaxInputSize), "--max-input-size", "",
		"internal/repofs: the listed sizes added up, before anything is read"},
	{"YAML nodes per document", countString(DefaultMaxDocumentNodes), "--max-document-nodes", "",
		"internal/krmio.ReadDocuments: each document's node bound, before the file's first document is parsed; with the copies its List items need to read alone (aliases to other items' anchors expanded), counted before they are made; the --config file's bound too. KRM mode: those copies in all, at the default"},
	{"YAML nodes per object", countString(DefaultMaxObjectNodes), "--max-object-nodes", "",
		"internal/cli (render mode): each object's nodes counted once its document is parsed, before it is kept; the --config file's, aliases expanded. KRM mode: an item's copy with its aliases to other items' anchors expanded, counted before it is made, at the default"},
	{"objects", countString(DefaultMaxObjects), "--max-objects", "",
		"internal/cli (render mode): each object as it is read"},
	{"kustomization builds", countString(kustomize.DefaultMaxBuilds), "--max-build-count", "",
		"internal/kustomize.Scan: each base counted once for each way it is reached, before anything is built"},
	{"kustomize build cost", countString(kustomize.DefaultMaxCost), "--max-build-cost", "",
		"internal/kustomize.Scan: estimated from the kustomization and resource files, before anything is built"},
	{"kustomize build output", repofs.Size(kustomize.DefaultMaxOutput), "--max-build-output", "",
		"internal/kustomize: estimated by the scan before anything is built, counted object by object as the output is written"},
	{"kustomize build time", kustomize.DefaultMaxTime.String(), "--max-build-time", "",
		"internal/kustomize.Root.Build: wall clock, a backstop to the estimate; the build is abandoned and the render fails"},
	{"Services per run", countString(fn.DefaultMaxServices), "--max-services", "maxServices",
		"fn.Run.Finish: replica counts added up, before any Service is built"},
	{"Services of entries before the root's last", countString(maxServicesInPlace), "", "",
		"internal/cli (render mode): as each flapp-services entry of a kustomization build that is not the root's last transformer adds its Services to the build, where kustomize's later steps compare objects pairwise"},
	{"Services per FLApp", countString(render.DefaultMaxServicesPerFLApp), "", "maxServicesPerFLApp",
		"render.NewPlan: the FLApp's replica counts, before any Service is built"},
	{"--check file", repofs.Size(checkCeiling), "", "",
		"internal/repofs.OpenConfined: its size, before it is read"},
	{"--check diff", repofs.Size(checkDiffCeiling), "", "",
		"internal/cli (--check): a larger render's drift is reported by line, not diffed"},
	{"error results", countString(fn.MaxErrors), "", "",
		"fn.Run.Finish, and a kustomization's scan (fn.ErrorList): further errors are counted in one more result"},
	{"echoed value", countString(fn.MaxValue) + " bytes", "", "",
		"fn results: a name, file, field or value a result repeats"},
	{"echoed message", countString(fn.MaxMessage) + " bytes", "", "",
		"fn results: a whole message, also on stderr"},
	{"memory, hard (render)", repofs.Size(defaultMaxMemory), "--max-memory", "",
		"the render and discover commands (internal/cli.watch): the Go runtime's own figures, read at start and every 10 ms; past the ceiling the process stops, exit 1, nothing on stdout"},
	{"CPU time (render)", defaultMaxCPUTime.String(), "--max-cpu-time", "",
		"the render and discover commands (internal/cli.watch): the process's user and system time, read every 10 ms, serialization included; past it the process stops, exit 1"},
	{"heap, soft (render mode)", repofs.Size(renderMemoryLimit), "", "",
		"the render command (internal/cli.heapLimit), once for the process, unless GOMEMLIMIT is set; the collector works harder past it, nothing fails"},
	{"heap, soft (kustomize build)", repofs.Size(min(buildMemoryLimit, defaultMaxMemory/5*4)), "", "",
		"internal/cli (render mode): debug.SetMemoryLimit while a kustomization is built, unless GOMEMLIMIT is set: four fifths of --max-memory, at most 512Mi; the collector works harder past it, nothing fails"},
	{"heap, soft (discover)", repofs.Size(discoverMemoryLimit), "", "",
		"the discover command (internal/cli.heapLimit), once for the process, unless GOMEMLIMIT is lower; the collector works harder past it, nothing fails"},
	{"render spool in memory", repofs.Size(krmio.SpoolMemory), "", "",
		"internal/krmio.StreamWriter: past it, the encoded render waits in an unlinked temporary file"},
}

func countString(n int64) string { return strconv.FormatInt(n, 10) }
