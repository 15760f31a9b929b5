package main

import (
	"maps"
	"testing"
)

func TestKindCounterCountsObjectsAcrossWrites(t *testing.T) {
	stream := "apiVersion: v1\nkind: Service\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\ndata:\n  k: |\n    kind: Service\n" +
		"---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec:\n  names:\n    kind: FLApp\n---\nkind: Service"
	want := map[string]int{"Service": 2, "ConfigMap": 1, "CustomResourceDefinition": 1}
	// Every way of cutting the stream into two writes counts the same.
	for cut := 0; cut <= len(stream); cut++ {
		c := &kindCounter{kinds: map[string]int{}}
		_, _ = c.Write([]byte(stream[:cut]))
		_, _ = c.Write([]byte(stream[cut:]))
		c.finish()
		if !maps.Equal(c.kinds, want) {
			t.Fatalf("cut at %d: counted %v, want %v", cut, c.kinds, want)
		}
	}
}

func TestObjects(t *testing.T) {
	for _, c := range []struct {
		kinds map[string]int
		want  string
	}{
		{nil, "—"},
		{map[string]int{"Service": 4, "FLApp": 1}, "5 (4 Service, 1 FLApp)"},
		{map[string]int{"Service": 155, "FLApp": 16, "ConfigMap": 1, "Secret": 1, "Role": 1, "Deployment": 1}, "175 (155 Service, 16 FLApp, 1 ConfigMap, 3 other)"},
	} {
		if got := objects(c.kinds); got != c.want {
			t.Errorf("objects(%v) = %q, want %q", c.kinds, got, c.want)
		}
	}
}

func TestMedianOf(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want float64
	}{{[]float64{3}, 3}, {[]float64{0.9, 0.1, 0.5}, 0.5}, {[]float64{0.4, 0.1, 0.2, 1.0}, 0.3}} {
		if got := medianOf(c.xs); got < c.want-1e-9 || got > c.want+1e-9 {
			t.Errorf("medianOf(%v) = %v, want %v", c.xs, got, c.want)
		}
	}
}
