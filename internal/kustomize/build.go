package kustomize

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/fedlearner/flapp-services/fn"
	"github.com/fedlearner/flapp-services/internal/repofs"
	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/provenance"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/openapi"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Root is a kustomization root, scanned: what its build reads and runs.
type Root struct {
	tree   *repofs.Tree
	dir    string // the root, resolved
	File   string // its kustomization file, as messages name it
	Dir    string // the root, as messages name it
	tight  bool   // kustomize's own LoadRestrictionsRootOnly
	limits Limits

	// Functions are flapp-services' transformer entries, in the order the
	// build meets them: the render's configuration.
	Functions []Function
	problems  fn.ErrorList // Problems
	// Cost is what the build is estimated to cost, before it runs.
	Cost Cost
	// Changes are the transformations of the build's kustomizations that
	// can change a Service after an entry of another kustomization made it,
	// in the order the scan meets them: a render names them when it
	// refuses a Service the fedlearner operator would not claim.
	Changes []Change

	key         string            // names this build's entries as its run reads them (entryAnnotation)
	rewrites    map[string][]byte // resolved file -> its content as the build reads it: flapp-services' entries as entryKind
	read        map[string][]byte // resolved file -> its content, as the scan read it (the build reads it from here once)
	dataFiles   map[string]bool   // resolved files the build reads as data (generator sources), not as YAML
	visits      map[visitKey]*Cost
	unread      bool // the scan stopped past --max-build-count kustomizations
	resmaps     *resmap.Factory
	objects     objectFiles        // where the build's FLApps and Services were read
	metadata    []string           // the root's buildMetadata
	sortOptions *types.SortOptions // the root's
	lastAllowed bool               // the root's entry may be last: no vars, no validators
	virtual     map[string][]byte  // path -> content of a file only the build reads: the render's own entry
}

type visitKey struct {
	dir     string // resolved
	plugins string // the field (generators, transformers or validators) that lists it, when it is built for its plugin configurations
}

// Function is one flapp-services entry of a kustomization's transformers.
type Function struct {
	Kustomization string      // the kustomization file that lists it, as messages name it
	Source        string      // the file holding the entry (the kustomization itself for an inline one)
	Config        *yaml.RNode // the entry: a ConfigMap or FLAppServices, the functionConfig; nil for the render's own
	// Render says the entry is the render's own, added at the end of the
	// root's transformers of a build that lists none: the render's
	// configuration (--config, the flags) is its configuration.
	Render bool

	apiVersion, kind string // the entry's own, which the build reads as builtin and entryKind
	// last says nothing runs after the entry but kustomize's final steps,
	// which leave what it adds as it is: Run writes that after the build.
	last bool
}

// KustomizeRelease is the kustomize release whose builds Run gives: the
// app.kubernetes.io/managed-by label of buildMetadata: [managedByLabel]
// names it, as that release's binary does.
const KustomizeRelease = "v5.8.1"

// Build builds the kustomization as `kustomize build --enable-alpha-plugins
// --enable-exec` does with flapp-services as an exec function (the same
// objects, in the same order): each flapp-services entry runs through
// entries at its place among the transformers, nothing else runs but kustomize's
// builtins, and the file system reads only the repository, within the
// render's ceilings, and writes nothing. It returns the build's output, a
// YAML stream of one document per object. Its error is fn.Results: an
// entry's own, or a problem of the build at its kustomization file.
func (b *Root) Build(entries Entries) ([]byte, error) {
	out, err := b.build(entries)
	var results fn.Results
	if err != nil && !errors.As(err, &results) {
		err = fn.Results{fn.BuildProblem([]string{b.File}, "", err.Error())}
	}
	return out, err
}

func (b *Root) build(entries Entries) ([]byte, error) {
	if err := b.Err(); err != nil {
		return nil, err
	}
	if len(b.Functions) > 0 && entries == nil {
		return nil, errors.New("internal error: flapp-services' entries and nothing to run them")
	}
	registerEntryKind.Do(func() {
		builtinTransformers[entryType] = newEntryPlugin
		builtinPluginTypes[entryKind] = entryType
	})
	run := &buildRun{build: b, entries: entries}
	running.Store(b.key, run)
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionUnspecified // kustomize build's default: its legacy order unless sortOptions says otherwise
	opts.LoadRestrictions = types.LoadRestrictionsNone
	if b.tight {
		opts.LoadRestrictions = types.LoadRestrictionsRootOnly
	}
	opts.PluginConfig = types.DisabledPluginConfig()
	fsys := newConfinedFS(b)
	type built struct {
		m   resmap.ResMap
		err error
	}
	done := make(chan built, 1)
	go func() {
		// Only its own: the deferred delete runs after the result is
		// handed back, when a next Run of the same build may have
		// registered its run already.
		defer running.CompareAndDelete(b.key, run)
		// kyaml's OpenAPI schema is process-wide: a build's crds: and
		// openapi: would otherwise change how the next one merges (as
		// Flux's SecureBuild, reset before and after).
		openapi.ResetOpenAPI()
		defer openapi.ResetOpenAPI()
		// A panic in kustomize on what the repository holds (an empty
		// crds: file, an openapi: file of the wrong shape) is a refusal,
		// not a crash with a stack trace in Argo CD's UI.
		defer func() {
			if r := recover(); r != nil {
				done <- built{err: fmt.Errorf("kustomize failed on this kustomization's input (%v): check its crds:, openapi: and patches", r)}
			}
		}()
		m, err := krusty.MakeKustomizer(opts).Run(fsys, fsys.seen(b.dir))
		done <- built{m, err}
	}()
	var m resmap.ResMap
	var err error
	select {
	case r := <-done:
		m, err = r.m, r.err
	case <-time.After(b.limits.MaxTime):
		// A backstop for what the estimate cannot see; the build is
		// abandoned, and the render that fails with this error ends the
		// process with it.
		return nil, fmt.Errorf("the build ran past its deadline of %s (--max-build-time): its cost is beyond what the scan estimates; split the application, or raise the deadline and Argo CD's timeout together", b.limits.MaxTime)
	}
	switch {
	case fsys.refused != nil:
		return nil, fsys.refused // kustomize wraps it in its own words
	case run.err != nil:
		return nil, run.err // an entry's, in its own words
	case err != nil:
		return nil, fmt.Errorf("kustomize build: %w", err) // its paths from the repository's top (confinedFS)
	}
	if err := b.restoreEntries(m); err != nil {
		return nil, fmt.Errorf("kustomize build: %w", err)
	}
	managedBy := "kustomize-" + provenance.GetProvenance().Semver()
	for _, res := range m.Resources() {
		if labels := res.GetLabels(); labels[konfig.ManagedbyLabelKey] == managedBy && slices.Contains(b.metadata, types.ManagedByLabelOption) {
			labels[konfig.ManagedbyLabelKey] = "kustomize-" + KustomizeRelease
			if err := res.SetLabels(labels); err != nil {
				return nil, fmt.Errorf("kustomize build: %w", err)
			}
		}
	}
	// The output is counted as it is written, object by object: a build
	// whose objects a few kilobytes of vars or patches multiplied stops at
	// the ceiling rather than after its whole text is held.
	out := &outputBudget{max: b.limits.MaxOutput, objects: m.Size()}
	var data []byte
	if run.lastAdded == nil {
		for _, res := range m.Resources() {
			if data, err = out.append(data, res); err != nil {
				break
			}
		}
	} else {
		data, err = b.writeInOrder(m.Resources(), run, run.replaced, out)
	}
	if err != nil {
		return nil, err
	}
	return data, nil
}

// outputBudget counts the bytes of the build's own objects as they are
// written (not the root's last entry's, which --max-services bounds).
type outputBudget struct {
	max, written  int64
	objects, seen int
}

// append writes res after buf, as a document of the stream, or refuses it
// past the ceiling.
func (o *outputBudget) append(buf []byte, res *resource.Resource) ([]byte, error) {
	doc, err := res.AsYAML()
	if err != nil {
		return nil, fmt.Errorf("kustomize build: %w", err)
	}
	o.seen++
	if o.written += int64(len(doc)); o.written > o.max {
		id := res.CurId()
		name := id.Name
		if id.Namespace != "" {
			name = id.Namespace + "/" + name
		}
		return nil, fmt.Errorf("the build's output passes the ceiling of %s (--max-build-output) at its object %d of %d, %s %s", repofs.Size(o.max), o.seen, o.objects, id.Kind, name)
	}
	if len(buf) > 0 {
		buf = append(buf, "---\n"...)
	}
	return append(buf, doc...), nil
}
