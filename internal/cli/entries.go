package cli

import (
	"fmt"
	"maps"

	"github.com/fedlearner/flapp-services/fn"
	"github.com/fedlearner/flapp-services/internal/krmio"
	"github.com/fedlearner/flapp-services/internal/kustomize"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The flapp-services entries of a kustomization build, each run by fn at
// its place.

// checkEntryConfigs checks the flapp-services entries of the kustomizations
// the render builds: each is the configuration of its own run, at its place
// in its build, and must parse; --config cannot configure them too. The
// render's own configuration is for what no entry renders.
func checkEntryConfigs(opts RenderOptions, inputs []input) error {
	for _, in := range inputs {
		if in.build == nil {
			continue
		}
		for i := range in.build.Functions {
			f := &in.build.Functions[i]
			if f.Render {
				continue
			}
			if _, results := fn.ParseConfig(f.Config, fn.Origin{File: f.Source}); results.ExitCode() != 0 {
				return results
			}
			if opts.Config != "" {
				return fmt.Errorf("both --config %s and flapp-services' entry %s (in %s) configure the render: keep one", opts.Config, f.Source, f.Kustomization)
			}
		}
	}
	return nil
}

// entryRuns are the runs of the flapp-services entries of every build of a
// render: its configuration, which an entry's own replaces, and the
// results of the entries that have run (their errors stop the build).
type entryRuns struct {
	cfg     fn.Config
	opts    RenderOptions
	results fn.Results
}

// of runs the entries of the kustomization built in dir.
func (e *entryRuns) of(dir string) kustomize.Entries {
	return &buildEntries{runs: e, dir: dir}
}

// buildEntries runs the flapp-services entries of the kustomization built
// in dir (as messages name it), each at its place among its transformers,
// as kustomize runs the function there: the entry is its configuration,
// which the flags override, and the build's objects at that place are its
// input. Its warnings are the render's (--strict fails on them); its
// errors fail the build, and the render.
type buildEntries struct {
	runs *entryRuns
	dir  string
	// inPlace is the Services the entries before the root's last have
	// put into the build.
	inPlace int
}

// maxServicesInPlace bounds the Services the entries before the root's
// last may put into a build: kustomize's own steps after them (the
// transformers above, the name references, the sort) compare objects
// pairwise, so 2,000 Services in a base built under a namespace overlay
// take 8 s on the CI machine, and 10,000 would pass the build's deadline;
// a few kilobytes of FLApps in a base are refused by name before that.
// The root's last entry writes its Services after the build, outside
// kustomize's resource map, within --max-services.
const maxServicesInPlace = 2_000

func (e *buildEntries) Run(entry *kustomize.Function, config *yaml.RNode, objects []kustomize.Object) ([]bool, []byte, error) {
	keep, out, err := e.run(entry, config, objects)
	if err != nil {
		return nil, nil, err
	}
	if e.inPlace += out.ServiceCount(); e.inPlace > maxServicesInPlace {
		return nil, nil, fmt.Errorf("%s: flapp-services' entry %s brings the Services its build holds to %d, over the ceiling of %d for entries before the root's last transformer: "+
			"kustomize holds each in its resource map; list the entry last among the root's transformers, where its Services are written after the build",
			entry.Kustomization, entry.Source, e.inPlace, maxServicesInPlace)
	}
	var services []byte
	for svc := range out.Services() {
		if len(services) > 0 {
			services = append(services, "---\n"...)
		}
		if services, err = krmio.AppendService(services, svc); err != nil {
			return nil, nil, err
		}
	}
	return keep, services, nil
}

func (e *buildEntries) RunLast(entry *kustomize.Function, config *yaml.RNode, objects []kustomize.Object) ([]bool, kustomize.LastAdded, error) {
	keep, out, err := e.run(entry, config, objects)
	if err != nil {
		return nil, nil, err
	}
	return keep, lastServices{out, out.Refs()}, nil
}

// run runs one entry over the build's objects at its place: which it
// keeps, and the Services it makes.
func (e *buildEntries) run(entry *kustomize.Function, config *yaml.RNode, objects []kustomize.Object) ([]bool, *fn.Output, error) {
	cfg := e.runs.cfg
	if !entry.Render {
		parsed, results := fn.ParseConfig(config, fn.Origin{File: entry.Source})
		if results.ExitCode() != 0 {
			return nil, nil, results
		}
		var err error
		if cfg, err = overrides(parsed, e.runs.opts); err != nil {
			return nil, nil, err
		}
	}
	run := fn.NewRun()
	keep := make([]bool, len(objects))
	for i, o := range objects {
		keep[i] = run.Add(fn.Object{Node: o.Node, Origin: fn.Origin{File: o.File, Build: e.dir}})
	}
	out, results := run.Finish(cfg)
	if results.ExitCode() != 0 {
		return nil, nil, append(e.runs.results, results...)
	}
	e.runs.results = append(e.runs.results, results...)
	return keep, out, nil
}

// lastServices are the Services of the root's last entry, made again one
// at a time as the build's output is written.
type lastServices struct {
	out  *fn.Output
	refs []fn.ServiceRef
}

func (l lastServices) Len() int { return len(l.refs) }

func (l lastServices) ID(i int) resid.ResId {
	return resid.NewResIdWithNamespace(resid.Gvk{Version: "v1", Kind: "Service"}, l.refs[i].Name, l.refs[i].Namespace)
}

func (l lastServices) Append(buf []byte, i int, labels, annotations map[string]string) ([]byte, error) {
	svc := l.out.Service(l.refs[i])
	maps.Copy(svc.Labels, labels)
	maps.Copy(svc.Annotations, annotations)
	return krmio.AppendService(buf, svc)
}
