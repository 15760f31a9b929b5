package cli

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/fedlearner/flapp-services/fn"
	"github.com/fedlearner/flapp-services/internal/krmio"
	"github.com/fedlearner/flapp-services/internal/kustomize"
	"github.com/fedlearner/flapp-services/internal/repofs"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
)

// RenderOptions are the flags of `flapp-services render`. A zero value is
// the flag's default: resolved gives every default, in this one place.
type RenderOptions struct {
	Config           string // function config file
	OwnerReferences  string // overrides the config's policy when set
	Check            string // compare with this earlier render instead of printing
	MaxServices      int64  // overrides the config's maxServices when set
	MaxObjects       int    // DefaultMaxObjects when 0
	MaxDocumentNodes int    // DefaultMaxDocumentNodes when 0
	MaxObjectNodes   int    // DefaultMaxObjectNodes when 0
	LoadRestrictor   string // repofs.RootOnly when empty
	Strict           bool   // fail on any warning
	MaxMemory        int64  // defaultMaxMemory when 0: the command's watchdog holds it, a build's soft heap limit stays below it
	Root             string // the repository root, when not the current directory (Argo CD)
	Limits           repofs.Limits
	Build            kustomize.Limits // a kustomization's build; its node ceilings are taken from above
	Paths            []string
}

// resolved is opts with every default filled in: the reader, the loader and
// the build read their ceilings from it as they are.
func (opts RenderOptions) resolved() RenderOptions {
	if opts.LoadRestrictor == "" {
		opts.LoadRestrictor = string(repofs.RootOnly)
	}
	if len(opts.Paths) == 0 {
		opts.Paths = []string{"."}
	}
	opts.MaxObjects = cmp.Or(opts.MaxObjects, DefaultMaxObjects)
	opts.MaxMemory = cmp.Or(opts.MaxMemory, defaultMaxMemory)
	opts.MaxDocumentNodes = cmp.Or(opts.MaxDocumentNodes, DefaultMaxDocumentNodes)
	opts.MaxObjectNodes = cmp.Or(opts.MaxObjectNodes, DefaultMaxObjectNodes)
	opts.Limits.MaxFileSize = cmp.Or(opts.Limits.MaxFileSize, repofs.DefaultMaxFileSize)
	opts.Limits.MaxInputSize = cmp.Or(opts.Limits.MaxInputSize, repofs.DefaultMaxInputSize)
	opts.Build.MaxDocumentNodes, opts.Build.MaxObjectNodes = opts.MaxDocumentNodes, opts.MaxObjectNodes
	opts.Build.MaxBuilds = cmp.Or(opts.Build.MaxBuilds, kustomize.DefaultMaxBuilds)
	opts.Build.MaxCost = cmp.Or(opts.Build.MaxCost, kustomize.DefaultMaxCost)
	opts.Build.MaxOutput = cmp.Or(opts.Build.MaxOutput, kustomize.DefaultMaxOutput)
	opts.Build.MaxTime = cmp.Or(opts.Build.MaxTime, kustomize.DefaultMaxTime)
	return opts
}

// RunRender is the standalone mode for Argo CD and CI: manifests in, the same
// manifests plus the generated Services out, as one YAML stream. It reads
// as the KRM mode does, one straight path: open the inputs; add each object
// to the run, keeping (encoding) what the output keeps; finish; then write,
// or fail. Files are read and parsed one document at a time, and the
// objects kept are encoded as they come, so memory follows the largest
// document, not the input or the output. On any error nothing reaches out:
// an empty or partial render would make a GitOps engine prune live
// Services. It leaves the process's soft heap limit as it finds it; the
// render command sets one for the process (heapLimit).
func RunRender(opts RenderOptions, in io.Reader, out, errOut io.Writer) (err error) {
	defer recoverInternal(&err, errOut)
	fail := func(results fn.Results) error {
		report(errOut, results, framework.Error)
		return ErrFailed
	}
	opts = opts.resolved()
	r, err := openRender(opts, in)
	if err != nil {
		return fail(fn.ErrorResults(err))
	}
	w := krmio.NewStreamWriter()
	defer func() { _ = w.Close() }()
	run := fn.NewRun()
	r.tellChanges(run)
	for obj, err := range r.reader.objects(r.inputs) {
		if err != nil {
			return fail(fn.ErrorResults(err))
		}
		if run.Add(obj) {
			if err := w.Add(obj); err != nil {
				return fail(fn.ErrorResults(err))
			}
		}
	}
	if r.reader.count == 0 {
		return fail(fn.Results{fn.RunError(fmt.Sprintf("no Kubernetes objects found in %s: refusing to print an empty render, which a GitOps engine would take as 'delete everything'",
			strings.Join(r.paths, ", ")))})
	}
	output, results := run.Finish(r.cfg)
	results = append(r.entries.results, results...) // an entry's come first: it ran first
	if results.ExitCode() != 0 {
		return fail(results)
	}
	if strict := warn(errOut, results, opts.Strict); strict != nil {
		return fail(strict)
	}
	if opts.Check != "" {
		return r.check(w, output)
	}
	return w.WriteTo(out, output)
}

// renderInputs is what a render reads, opened and checked before anything
// is read: its files (every size ceiling checked), kustomizations
// (scanned), configuration and --check file.
type renderInputs struct {
	paths   []string // as given
	inputs  []input
	reader  *reader
	cfg     fn.Config // the render's configuration, and that of a build's own entry
	entries *entryRuns
	check   func(*krmio.StreamWriter, *fn.Output) error
}

// openRender opens the inputs of a render with resolved options.
func openRender(opts RenderOptions, stdin io.Reader) (*renderInputs, error) {
	ld, err := repofs.New(repofs.Restrictor(opts.LoadRestrictor), opts.Limits)
	if err != nil {
		return nil, err
	}
	if opts.Root != "" {
		if err := ld.SetTop(opts.Root); err != nil {
			return nil, err
		}
	}
	paths := opts.Paths
	// Every PATH first: --config and --check must lie inside one of them
	// (or the current directory).
	roots, err := resolvePaths(ld, paths)
	if err != nil {
		return nil, err
	}
	cfg, configPath, err := loadConfig(opts, ld)
	if err != nil {
		return nil, err
	}
	r := &renderInputs{paths: paths, cfg: cfg}
	if opts.Check != "" {
		checkPath, err := ld.Confine("--check", opts.Check)
		if err != nil {
			return nil, err
		}
		r.check = func(w *krmio.StreamWriter, out *fn.Output) error { return check(ld, opts.Check, checkPath, w, out) }
	}
	// List every file first: the size ceilings are checked on their sizes
	// before anything is read.
	if r.inputs, err = listInputs(ld, roots, configPath, opts.Build); err != nil {
		return nil, err
	}
	if err := checkEntryConfigs(opts, r.inputs); err != nil {
		return nil, err
	}
	r.entries = &entryRuns{cfg: cfg, opts: opts}
	r.reader = &reader{ld: ld, stdin: stdin, maxObjects: opts.MaxObjects, maxDocNodes: opts.MaxDocumentNodes, maxObjectNodes: opts.MaxObjectNodes,
		buildHeapLimit: min(buildMemoryLimit, opts.MaxMemory/5*4)}
	r.reader.entries = r.entries.of
	return r, nil
}

// tellChanges gives the run, for each build of the render, the
// transformations that can change a Service after an entry made it: those
// of the kustomizations that list no entry (an entry runs after its own
// kustomization's builtin fields), and the transformers listed after an
// entry, which its refusals name.
func (r *renderInputs) tellChanges(run *fn.Run) {
	for _, in := range r.inputs {
		if in.build == nil {
			continue
		}
		withEntry := map[string]bool{}
		for _, f := range in.build.Functions {
			withEntry[f.Kustomization] = true
		}
		var changes []fn.Change
		for _, c := range in.build.Changes {
			if !withEntry[c.Kustomization] || strings.HasPrefix(c.Field, "transformers[") {
				changes = append(changes, fn.Change{Kustomization: c.Kustomization, Field: c.Field})
			}
		}
		run.SetChanges(in.build.Dir, changes)
	}
}

// ownHeapLimit reports whether the soft heap limit is this process's own
// (heapLimit): GOMEMLIMIT is unset.
func ownHeapLimit() bool { return os.Getenv("GOMEMLIMIT") == "" }

// resolvePaths resolves every PATH but stdin ("-", a nil root).
func resolvePaths(ld *repofs.Loader, paths []string) ([]*repofs.Root, error) {
	roots := make([]*repofs.Root, len(paths))
	for i, p := range paths {
		if p == "-" {
			continue
		}
		root, err := ld.Resolve(p)
		if err != nil {
			return nil, err
		}
		roots[i] = &root
	}
	return roots, nil
}

// listInputs lists the manifest files of every root (a nil root is stdin),
// skipping the resolved path skip (the config file). A root that is a
// kustomization is scanned, to be built; a kustomization anywhere else is
// an error, and so is a Helm chart: neither is a manifest.
func listInputs(ld *repofs.Loader, roots []*repofs.Root, skip string, limits kustomize.Limits) ([]input, error) {
	inputs := make([]input, len(roots))
	for i, root := range roots {
		if root == nil {
			inputs[i].stdin = true
			continue
		}
		if file, ok := ld.Find(*root, kustomize.FileNames...); ok {
			b, err := scanKustomization(ld, *root, file, limits)
			if err != nil {
				return nil, err
			}
			inputs[i].build = b
			continue
		}
		files, err := ld.Files(*root, skip)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			switch base := path.Base(f.Name); {
			case slices.Contains(kustomize.FileNames, base):
				return nil, fmt.Errorf("%s: a kustomization inside %s is not a manifest: render its directory as a PATH of its own (flapp-services render %s), which builds it",
					f.Name, root.Name, path.Dir(f.Name))
			case base == "Chart.yaml":
				return nil, fmt.Errorf("%s: a Helm chart inside %s is not a manifest: render it with helm template and pipe the result to flapp-services render -",
					f.Name, root.Name)
			}
		}
		inputs[i].manifests = files
	}
	return inputs, nil
}

// scanKustomization scans the kustomization root for its build, and
// refuses a build that would execute, fetch or leave the repository, or
// that would cost more than its ceilings, before anything is built.
func scanKustomization(ld *repofs.Loader, root repofs.Root, file string, limits kustomize.Limits) (*kustomize.Root, error) {
	b, err := kustomize.Scan(ld.Tree(root), root.Path(), file, ld.Restrictor() == repofs.RootOnly, limits, true)
	if err != nil {
		return nil, err
	}
	return b, b.Err()
}
