package kustomize

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	_ "unsafe" // go:linkname, below

	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// A flapp-services entry runs at its place among the transformers, as
// kustomize runs it as an exec function, but in process. kustomize
// (sigs.k8s.io/kustomize/api v0.21.2) runs a transformer at its place only
// when it is one of its builtins or an external program, and has no public
// way to add one: so the entry is registered as one more builtin, under
// entryKind, in kustomize's own registry of builtin transformers. These two
// variables are the one place this module reaches into kustomize's
// internals (api v0.21.2, pinned; TestKustomizeInternals
// fails if they move, and test/integration/kustomize builds every kind of
// entry side by side with the real kustomize). The scan rewrites each
// entry's configuration to name entryKind, and Root.Build puts the entry's
// own apiVersion and kind back wherever kustomize records a transformer
// (buildMetadata).

//go:linkname builtinTransformers sigs.k8s.io/kustomize/api/internal/plugins/builtinhelpers.TransformerFactories
var builtinTransformers map[builtinPluginType]func() resmap.TransformerPlugin

//go:linkname builtinPluginTypes sigs.k8s.io/kustomize/api/internal/plugins/builtinhelpers.stringToBuiltinPluginTypeMap
var builtinPluginTypes map[string]builtinPluginType

// builtinPluginType is builtinhelpers.BuiltinPluginType, an int.
type builtinPluginType int

const (
	// entryKind is the kind, with apiVersion builtin, of a flapp-services
	// entry as the build reads it.
	entryKind = "FLAppServicesEntry"
	// entryType is its number among kustomize's builtins, far past theirs.
	entryType builtinPluginType = 1 << 20
	// entryAnnotation names the build and the entry, "<build key>/<index
	// in Root.Functions>", on an entry as the build reads it.
	entryAnnotation = "internal.flapp-services.fedlearner.k8s.io/entry"
	// originAnnotation is kustomize's (api/internal/utils), on an object
	// of a build whose buildMetadata asks for origins.
	originAnnotation = "config.kubernetes.io/origin"
)

var registerEntryKind sync.Once

// Entries runs a build's flapp-services entries. An error of any method
// fails the build with its words.
type Entries interface {
	// Run runs one entry at its place in the build. It is given the
	// entry, its configuration as kustomize hands a function its
	// functionConfig, and every object of the build at that place, in
	// order; it answers which of them the output keeps, and the YAML
	// stream of the objects it adds.
	Run(entry *Function, config *yaml.RNode, objects []Object) (keep []bool, added []byte, err error)
	// RunLast runs the root's last entry, after which nothing but
	// kustomize's final steps runs: what it adds is written after the
	// build, where kustomize's order puts it, without kustomize holding
	// it (and sorting it: kustomize's sort appends each object after
	// comparing it with every other).
	RunLast(entry *Function, config *yaml.RNode, objects []Object) (keep []bool, added LastAdded, err error)
}

// Object is one object of a build, and the file it was read from, as
// messages name it ("" for an object a generator made).
type Object struct {
	Node *yaml.RNode
	File string
}

// LastAdded is the objects the root's last entry adds.
type LastAdded interface {
	Len() int
	ID(i int) resid.ResId
	// Append appends object i as a YAML document, with the labels and
	// annotations given added to its own.
	Append(buf []byte, i int, labels, annotations map[string]string) ([]byte, error)
}

// running holds the builds running now, by key: an entry's configuration
// names its build there (the factory kustomize calls takes no argument).
var running sync.Map // string -> *buildRun

// buildRun is one build of a Root: its entries' transform, and the first
// error one returned.
type buildRun struct {
	build   *Root
	entries Entries
	mu      sync.Mutex
	err     error
	// lastAdded is what the root's last entry added, and lastOrigin its
	// origin as kustomize records it on what a transformer generates (nil
	// without the root's buildMetadata, or for the render's own entry).
	lastAdded  LastAdded
	lastOrigin *resource.Origin
	replaced   map[*resource.Resource]int // a resource whose place an object of lastAdded takes
}

func (r *buildRun) fail(err error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		r.err = err
	}
	return err
}

func newBuildKey() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// entryPlugin is one flapp-services entry as kustomize runs it.
type entryPlugin struct {
	run    *buildRun
	entry  *Function
	config *yaml.RNode
	origin *resource.Origin // the entry's, when kustomize tracks it
	h      *resmap.PluginHelpers
}

func newEntryPlugin() resmap.TransformerPlugin { return &entryPlugin{} }

// Config finds the entry's build and puts the entry back as it was
// written, with the annotation kustomize's exec functions get
// (fnplugin.invokePlugin): its functionConfig is local.
func (p *entryPlugin) Config(h *resmap.PluginHelpers, config []byte) error {
	node, err := yaml.Parse(string(config))
	if err != nil {
		return err
	}
	key, index, _ := strings.Cut(node.GetAnnotations()[entryAnnotation], "/")
	v, ok := running.Load(key)
	i, err := strconv.Atoi(index)
	if !ok || err != nil || i < 0 || i >= len(v.(*buildRun).build.Functions) {
		return fmt.Errorf("%s/%s is flapp-services' own name for its entries as its build reads them; write the entry as the README says", "builtin", entryKind)
	}
	p.run, p.entry, p.h = v.(*buildRun), &v.(*buildRun).build.Functions[i], h
	if o := node.GetAnnotations()[originAnnotation]; o != "" && !p.entry.Render {
		var read resource.Origin
		if err := yaml.Unmarshal([]byte(o), &read); err != nil {
			return err
		}
		// resource.OriginFromCustomPlugin, of the entry as written.
		meta, _ := node.GetMeta()
		p.origin = &resource.Origin{Repo: read.Repo, Ref: read.Ref, ConfiguredIn: read.Path,
			ConfiguredBy: yaml.ResourceIdentifier{TypeMeta: yaml.TypeMeta{APIVersion: p.entry.apiVersion, Kind: p.entry.kind},
				NameMeta: yaml.NameMeta{Name: meta.Name, Namespace: meta.Namespace}}}
	}
	node.SetApiVersion(p.entry.apiVersion)
	node.SetKind(p.entry.kind)
	if _, err := node.Pipe(yaml.ClearAnnotation(entryAnnotation)); err != nil {
		return err
	}
	if err := node.PipeE(yaml.SetAnnotation("config.kubernetes.io/local-config", "true")); err != nil {
		return err
	}
	p.config = node
	return nil
}

// Transform is kustomize's fnplugin.Transform with the function in process
// (utils.UpdateResMapValues, after it): the function sees every object of
// the build; an object it adds replaces the object of the same id, in its
// place, or is appended; an object it no longer lists is removed.
func (p *entryPlugin) Transform(m resmap.ResMap) error {
	resources := m.Resources()
	objects := make([]Object, len(resources))
	for i, res := range resources {
		objects[i] = Object{Node: res.Copy(), File: p.run.build.fileOf(res)}
	}
	var keep []bool
	var generated []*resource.Resource
	var err error
	if p.entry.last {
		var added LastAdded
		keep, added, err = p.run.entries.RunLast(p.entry, p.config, objects)
		p.run.lastAdded, p.run.lastOrigin = added, p.origin
	} else {
		var added []byte
		if keep, added, err = p.run.entries.Run(p.entry, p.config, objects); err == nil {
			if generated, err = p.h.ResmapFactory().RF().SliceFromBytes(added); err != nil {
				err = fmt.Errorf("%s: internal error: the Services do not parse: %w", p.entry.Source, err)
			}
		}
	}
	if err != nil {
		return p.run.fail(err)
	}
	if len(keep) != len(resources) {
		return p.run.fail(fmt.Errorf("%s: internal error: %d objects kept of %d", p.entry.Source, len(keep), len(resources)))
	}
	// Each id computed once: kustomize's own lookups (Append,
	// GetIndexOfCurrentId) scan the whole map, and 100,000 Services would
	// take hours.
	const twice = -1
	at := make(map[resid.ResId]int, len(resources))
	for i, res := range resources {
		id := res.CurId()
		if _, seen := at[id]; seen {
			at[id] = twice
		} else {
			at[id] = i
		}
	}
	listed := make(map[resid.ResId]bool, len(resources)+len(generated))
	for i, res := range resources {
		if keep[i] {
			listed[res.CurId()] = true
		}
	}
	if p.entry.last {
		// As UpdateResMapValues would: an object that replaces one keeps
		// that one's place.
		p.run.replaced = map[*resource.Resource]int{}
		for i := range p.run.lastAdded.Len() {
			id := p.run.lastAdded.ID(i)
			if listed[id] {
				b, _ := json.Marshal(id)
				return p.run.fail(fmt.Errorf("%s generated a duplicate resource: %s", p.entry.Source, b))
			}
			listed[id] = true
			switch j, ok := at[id]; {
			case j == twice:
				return fmt.Errorf("id matched 2 resources") // kustomize's words (GetIndexOfCurrentId)
			case ok:
				p.run.replaced[resources[j]] = i
			}
		}
	}
	var appended []*resource.Resource
	for _, r := range generated {
		id := r.CurId()
		if listed[id] {
			b, _ := json.Marshal(id)
			return p.run.fail(fmt.Errorf("%s generated a duplicate resource: %s", p.entry.Source, b))
		}
		listed[id] = true
		switch i, ok := at[id]; {
		case i == twice:
			return fmt.Errorf("id matched 2 resources") // kustomize's words (GetIndexOfCurrentId)
		case ok:
			resources[i].ResetRNode(r)
		default:
			appended = append(appended, r)
		}
	}
	// The list as UpdateResMapValues would leave it, set in one pass by
	// ResMap.ApplyFilter, kustomize's public way for a filter to drop,
	// keep and add objects (each Append would scan the whole map).
	return m.ApplyFilter(kio.FilterFunc(func([]*yaml.RNode) ([]*yaml.RNode, error) {
		list := make([]*yaml.RNode, 0, len(resources)+len(appended))
		for _, res := range resources {
			if listed[res.CurId()] {
				list = append(list, &res.RNode)
			}
		}
		for _, r := range appended {
			list = append(list, &r.RNode)
		}
		return list, nil
	}))
}

// entryDocument is a flapp-services entry as the build reads it: a builtin
// of entryKind that names the build and the entry.
func entryDocument(obj *yaml.RNode, key string, index int) (string, error) {
	doc := obj.Copy()
	doc.SetApiVersion("builtin")
	doc.SetKind(entryKind)
	if err := doc.PipeE(yaml.SetAnnotation(entryAnnotation, key+"/"+strconv.Itoa(index))); err != nil {
		return "", err
	}
	return doc.String()
}

// restoreEntries puts each entry's own apiVersion and kind back where
// kustomize recorded it as a transformer: the origin of what it generated,
// the transformations of what it visited. The render's own entry is no
// transformer of the kustomization: its records go.
func (b *Root) restoreEntries(m resmap.ResMap) error {
	// entryOf is the entry o names, or nil.
	entryOf := func(o *resource.Origin) *Function {
		if o == nil || o.ConfiguredBy.APIVersion != "builtin" || o.ConfiguredBy.Kind != entryKind {
			return nil
		}
		for i := range b.Functions {
			f := &b.Functions[i]
			if f.Render && o.ConfiguredBy.Name == Name {
				return f
			}
			if f.Config == nil {
				continue
			}
			if meta, _ := f.Config.GetMeta(); meta.Name == o.ConfiguredBy.Name && meta.Namespace == o.ConfiguredBy.Namespace {
				return f
			}
		}
		return nil
	}
	for _, res := range m.Resources() {
		origin, err := res.GetOrigin()
		if err != nil {
			return err
		}
		if f := entryOf(origin); f != nil {
			if f.Render {
				origin = nil
			} else {
				origin.ConfiguredBy.APIVersion, origin.ConfiguredBy.Kind = f.apiVersion, f.kind
			}
			if err := res.SetOrigin(origin); err != nil {
				return err
			}
		}
		transformations, err := res.GetTransformations()
		if err != nil {
			return err
		}
		if len(transformations) == 0 {
			continue
		}
		var kept resource.Transformations
		for _, t := range transformations {
			f := entryOf(t)
			switch {
			case f == nil:
			case f.Render:
				continue
			default:
				t.ConfiguredBy.APIVersion, t.ConfiguredBy.Kind = f.apiVersion, f.kind
			}
			kept = append(kept, t)
		}
		if err := res.ClearTransformations(); err != nil {
			return err
		}
		for _, t := range kept {
			if err := res.AddTransformation(t); err != nil {
				return err
			}
		}
	}
	return nil
}
