package kustomize

import (
	"bytes"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// objectFiles names the file each FLApp and Service of a build was read
// from, by the id the object had there (kustomize keeps it, as OrgId,
// through every rename). Only those objects are named by the function's
// messages; the files are parsed for it once, when first asked.
type objectFiles struct {
	files []namedData
	once  sync.Once
	index map[objectID]string // "" when two files hold the same id
}

type namedData struct {
	name string
	data []byte
}

type objectID struct{ group, kind, namespace, name string }

// add records a resource file the build reads, as messages name it.
func (o *objectFiles) add(name string, data []byte) {
	if bytes.Contains(data, []byte("FLApp")) || bytes.Contains(data, []byte("Service")) {
		o.files = append(o.files, namedData{name, data})
	}
}

// fileOf is the file res was read from, "" when unknown (generated, or
// read from two files).
func (b *Root) fileOf(res *resource.Resource) string {
	o := &b.objects
	o.once.Do(o.build)
	id := res.OrgId()
	if file, ok := o.index[objectID{id.Group, id.Kind, id.Namespace, id.Name}]; ok || id.Namespace != "default" {
		return file
	}
	return o.index[objectID{id.Group, id.Kind, "", id.Name}]
}

func (o *objectFiles) build() {
	o.index = map[objectID]string{}
	type meta struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string `yaml:"kind"`
		Metadata   struct {
			Name      string `yaml:"name"`
			Namespace string `yaml:"namespace"`
		} `yaml:"metadata"`
		Items []yaml.Node `yaml:"items"`
	}
	record := func(name string, m meta) {
		if m.Kind != "FLApp" && m.Kind != "Service" {
			return
		}
		group, _, found := strings.Cut(m.APIVersion, "/")
		if !found {
			group = ""
		}
		id := objectID{group, m.Kind, m.Metadata.Namespace, m.Metadata.Name}
		if file, seen := o.index[id]; seen && file != name {
			o.index[id] = ""
			return
		}
		o.index[id] = name
	}
	for _, f := range o.files {
		dec := yaml.NewDecoder(bytes.NewReader(f.data))
		for {
			var m meta
			if dec.Decode(&m) != nil {
				break // the end, or what kustomize reports
			}
			record(f.name, m)
			for i := range m.Items {
				var item meta
				if m.Items[i].Decode(&item) == nil {
					record(f.name, item)
				}
			}
		}
	}
	o.files = nil
}
