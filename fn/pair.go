package fn

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fedlearner/flapp-services/render"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// pairWarnings compares the two parties of each job found in the input: a
// Leader and a Follower[N] FLApp of the same name, in any namespaces. The
// operator pairs every replica of a type marked pair: true one to one with
// the peer's, and a leader whose peer has another count waits forever
// ("still waiting for follower"). A mismatch is a warning, not an error:
// the two sides may be scaled in two commits.
func (r *Run) pairWarnings() Results {
	flapps := r.flapps
	byName := make(map[string][]*flapp)
	for _, f := range flapps { // sorted by namespace and name
		byName[f.app.Name] = append(byName[f.app.Name], f)
	}
	var results Results
	for _, leader := range flapps {
		if leader.app.Spec.Role != "Leader" {
			continue
		}
		for _, follower := range byName[leader.app.Name] {
			if strings.HasPrefix(follower.app.Spec.Role, "Follower") {
				results = append(results, comparePair(leader, follower)...)
			}
		}
	}
	return results
}

// comparePair checks every type either side marks pair: true.
func comparePair(leader, follower *flapp) Results {
	var types []string
	for _, side := range []*flapp{leader, follower} {
		for name, spec := range side.app.Spec.FLReplicaSpecs {
			if spec.Pair != nil && *spec.Pair && !slices.Contains(types, name) {
				types = append(types, name)
			}
		}
	}
	slices.Sort(types)
	var results Results
	for _, t := range types {
		l, f := replicasOf(leader, t), replicasOf(follower, t)
		if l == f {
			continue
		}
		path := field.NewPath("spec", "flReplicaSpecs").Key(t).Child("replicas").String()
		results = append(results, pairWarning(follower, path, fmt.Sprintf(
			"paired replica type %s has %s in Leader FLApp %s but %s in Follower FLApp %s: "+
				"the operator pairs them one to one and the leader waits for the follower until both counts are equal",
			t, replicaCount(l), objectKey{leader.app.Namespace, leader.app.Name},
			replicaCount(f), objectKey{follower.app.Namespace, follower.app.Name})))
	}
	return results
}

// replicasOf is the replica count of a type with the operator's defaults, -1
// when the FLApp has no such type.
func replicasOf(f *flapp, replicaType string) int32 {
	spec, ok := f.app.Spec.FLReplicaSpecs[replicaType]
	if !ok {
		return -1
	}
	return render.Replicas(spec)
}

func replicaCount(n int32) string {
	switch n {
	case -1:
		return "no replicas (the type is missing)"
	case 1:
		return "1 replica"
	}
	return fmt.Sprintf("%d replicas", n)
}
