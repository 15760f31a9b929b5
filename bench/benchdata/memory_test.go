package benchdata

import (
	"strings"
	"testing"

	"github.com/fedlearner/flapp-services/internal/cli"
	"github.com/fedlearner/flapp-services/internal/krmio"
	"github.com/fedlearner/flapp-services/internal/yamlnodes"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func TestNodeCeilingsAreTheDefaults(t *testing.T) {
	if DocumentNodes != cli.DefaultMaxDocumentNodes || ObjectNodes != cli.DefaultMaxObjectNodes {
		t.Fatalf("DocumentNodes, ObjectNodes = %d, %d; internal/cli's defaults are %d, %d",
			DocumentNodes, ObjectNodes, cli.DefaultMaxDocumentNodes, cli.DefaultMaxObjectNodes)
	}
}

// NodeBoundLists fills every ceiling it is about, within a tenth of a
// percent, and passes none: the file size, each document's node bound and
// the largest object's nodes; its only FLApp is the last item.
func TestNodeBoundListsFillsTheCeilings(t *testing.T) {
	data, lists := NodeBoundLists(FileCeiling)
	if len(data) > FileCeiling || len(data) < FileCeiling-100 {
		t.Errorf("%d bytes, want just under %d", len(data), FileCeiling)
	}
	docs := strings.Split(string(data), "\n---\n")
	if len(docs) != lists || lists < 2 {
		t.Fatalf("%d documents, NodeBoundLists says %d; want at least 2", len(docs), lists)
	}
	largest, flapps := 0, 0
	for i, doc := range docs {
		if b := yamlnodes.Bound(doc); b > DocumentNodes || b < DocumentNodes*999/1000 {
			t.Errorf("document %d: node bound %d, want just under %d", i+1, b, DocumentNodes)
		}
		node, err := yaml.Parse(doc)
		if err != nil {
			t.Fatalf("document %d: %v", i+1, err)
		}
		items := node.Field("items").Value.YNode().Content
		for j, item := range items {
			largest = max(largest, krmio.CountNodes(item, ObjectNodes+1))
			if kind := yaml.NewRNode(item).GetKind(); kind == "FLApp" {
				flapps++
				if i != len(docs)-1 || j != len(items)-1 {
					t.Errorf("an FLApp at document %d, item %d: want only the last item", i+1, j)
				}
			}
		}
	}
	if largest > ObjectNodes || largest < ObjectNodes*999/1000 {
		t.Errorf("largest object has %d nodes, want just under %d", largest, ObjectNodes)
	}
	if flapps != 1 {
		t.Errorf("%d FLApps, want 1", flapps)
	}
}

// MentioningObjects is as many ConfigMaps as SmallObjects would hold, each
// mentioning FLApp, and one FLApp last.
func TestMentioningObjectsEndsWithItsOneFLApp(t *testing.T) {
	data, n := MentioningObjects(64 << 10)
	if len(data) > 64<<10 || len(data) < 64<<10-100 {
		t.Errorf("%d bytes, want just under %d", len(data), 64<<10)
	}
	nodes, err := kio.FromBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != n+1 {
		t.Fatalf("%d objects, want %d ConfigMaps and the FLApp", len(nodes), n)
	}
	for i, node := range nodes {
		kind, s := node.GetKind(), node.MustString()
		switch {
		case i == n && kind != "FLApp":
			t.Errorf("the last object is a %s, want the FLApp", kind)
		case i < n && (kind != "ConfigMap" || !strings.Contains(s, "FLApp")):
			t.Errorf("object %d is a %s that does not mention FLApp: %s", i, kind, s)
		}
	}
	if _, m := SmallObjects(64 << 10); m < n {
		t.Errorf("SmallObjects holds %d ConfigMaps in the same size, MentioningObjects %d", m, n)
	}
}
