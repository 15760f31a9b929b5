package fn

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The tests of this file hold each rule at its boundary: at a ceiling and
// one past it, at 0, at the last index and one past it. Every expectation is
// written by hand from the operator's rules and the README (Where it differs from the fedlearner operator),
// never taken from the function's own output.

// flappDoc is an FLApp whose replica types are given as "Type=replicas"
// (each with a tensorflow container of one port, p: 5000), in namespace ns.
func flappDoc(ns, name, role, uid string, types ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: fedlearner.k8s.io/v1alpha1\nkind: FLApp\nmetadata:\n  name: %s\n  namespace: %s\n", name, ns)
	if uid != "" {
		fmt.Fprintf(&b, "  uid: %s\n", uid)
	}
	fmt.Fprintf(&b, "spec:\n  role: %s\n  peerSpecs: {Follower: {peerURL: x}}\n  flReplicaSpecs:\n", role)
	for _, t := range types {
		name, replicas, _ := strings.Cut(t, "=")
		fmt.Fprintf(&b, "    %s:\n      replicas: %s\n      template: {spec: {containers: [{name: tensorflow, ports: [{name: p, containerPort: 5000}]}]}}\n", name, replicas)
	}
	return b.String()
}

// serviceDoc is a Service in ns; generated marks it as this tool's own, for
// the FLApp flapp with the given role, type and index labels.
func serviceDoc(ns, name string, generated bool, flapp, role, replicaType, index string) string {
	s := fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata:\n  name: %s\n  namespace: %s\n", name, ns)
	if generated {
		s += fmt.Sprintf("  labels: {app.kubernetes.io/managed-by: flapp-services, role: %s, fl-replica-type: %s, fl-replica-index: %q}\n"+
			"  annotations: {fn.fedlearner.k8s.io/flapp: %s}\n", role, replicaType, index, flapp)
	}
	return s + "spec: {ports: [{port: 1}]}\n"
}

// runDocs adds the documents, in order, and finishes with cfg.
func runDocs(t *testing.T, cfg Config, docs ...string) (*Output, Results) {
	t.Helper()
	r := NewRun()
	for i, d := range docs {
		node, err := yaml.Parse(d)
		require.NoError(t, err, d)
		r.Add(ItemObject(i, node))
	}
	return r.Finish(cfg)
}

func serviceNames(out *Output) []string {
	if out == nil {
		return nil
	}
	var names []string
	for svc := range out.Services() {
		names = append(names, svc.Namespace+"/"+svc.Name)
	}
	return names
}

func messages(results Results, severity framework.Severity) []string {
	var m []string
	for _, r := range results {
		if r.Severity == severity {
			m = append(m, r.Message)
		}
	}
	return m
}

func withLimits(services, perFLApp int64) Config {
	cfg := DefaultConfig()
	cfg.MaxServices, cfg.MaxServicesPerFLApp = services, perFLApp
	return cfg
}

// maxServices: a run of exactly the limit renders, one more Service fails
// with the one error README promises (the total, the limit and the largest
// FLApps, most Services first, then by name), and nothing is generated.
func TestMaxServicesAtTheCeiling(t *testing.T) {
	docs := []string{
		flappDoc("ns", "a", "Leader", "", "Worker=2"),
		flappDoc("ns", "b", "Leader", "", "Worker=1", "PS=1"),
	}
	out, results := runDocs(t, withLimits(4, 10), docs...)
	require.Zero(t, results.ExitCode(), results.Error())
	assert.Equal(t, []string{"ns/a-leader-worker-0", "ns/a-leader-worker-1", "ns/b-leader-ps-0", "ns/b-leader-worker-0"}, serviceNames(out))

	out, results = runDocs(t, withLimits(3, 10), docs...)
	assert.Nil(t, out)
	assert.Equal(t, []string{"the input would produce 4 Services, more than maxServices (3): the largest FLApps are ns/a (2), ns/b (2); " +
		"lower their replicas, split the input, or raise maxServices if this is intended"}, messages(results, framework.Error))
	assert.Empty(t, messages(results, framework.Info), "nothing was generated")
}

// The error names the largest FLApps, fn.MaxNamed of them, and counts the
// others.
func TestMaxServicesNamesTheLargest(t *testing.T) {
	docs := []string{
		flappDoc("ns", "f", "Leader", "", "Worker=1"),
		flappDoc("ns", "e", "Leader", "", "Worker=1"),
		flappDoc("ns", "d", "Leader", "", "Worker=1"),
		flappDoc("ns", "c", "Leader", "", "Worker=3"),
		flappDoc("ns", "b", "Leader", "", "Worker=2"),
		flappDoc("ns", "a", "Leader", "", "Worker=2"),
	}
	require.Equal(t, 5, MaxNamed)
	_, results := runDocs(t, withLimits(9, 10), docs...)
	assert.Equal(t, []string{"the input would produce 10 Services, more than maxServices (9): the largest FLApps are ns/c (3), ns/a (2), ns/b (2), ns/d (1), ns/e (1) and 1 more; " +
		"lower their replicas, split the input, or raise maxServices if this is intended"}, messages(results, framework.Error))
	_, results = runDocs(t, withLimits(8, 10), docs[1:]...)
	assert.Equal(t, []string{"the input would produce 9 Services, more than maxServices (8): the largest FLApps are ns/c (3), ns/a (2), ns/b (2), ns/d (1), ns/e (1); " +
		"lower their replicas, split the input, or raise maxServices if this is intended"}, messages(results, framework.Error))
}

// maxServicesPerFLApp: an FLApp of exactly the limit renders, one of one
// more fails on its own, naming the count and the limit.
func TestMaxServicesPerFLAppAtTheCeiling(t *testing.T) {
	doc := flappDoc("ns", "a", "Leader", "", "Worker=2", "PS=1")
	out, results := runDocs(t, withLimits(100, 3), doc)
	require.Zero(t, results.ExitCode(), results.Error())
	assert.Len(t, serviceNames(out), 3)

	out, results = runDocs(t, withLimits(100, 2), doc)
	assert.Nil(t, out)
	assert.Equal(t, []string{"Invalid value: 3: the FLApp would produce 3 Services, more than maxServicesPerFLApp (2)"}, messages(results, framework.Error))
}

// An FLApp at maxServicesPerFLApp counts towards maxServices; one past it
// fails on its own and is left out of the total, so it is not reported twice.
func TestCeilingsTogether(t *testing.T) {
	_, results := runDocs(t, withLimits(5, 3),
		flappDoc("ns", "a", "Leader", "", "Worker=3"),
		flappDoc("ns", "b", "Leader", "", "Worker=3"))
	assert.Equal(t, []string{"the input would produce 6 Services, more than maxServices (5): the largest FLApps are ns/a (3), ns/b (3); " +
		"lower their replicas, split the input, or raise maxServices if this is intended"}, messages(results, framework.Error))

	_, results = runDocs(t, withLimits(3, 3),
		flappDoc("ns", "a", "Leader", "", "Worker=4"),
		flappDoc("ns", "b", "Leader", "", "Worker=3"))
	assert.Equal(t, []string{"Invalid value: 4: the FLApp would produce 4 Services, more than maxServicesPerFLApp (3)"}, messages(results, framework.Error))
}

// Settings of 0 (and below) are errors, as README says ("a positive
// integer"): 0 does not mean "no limit" nor "the default". 1 is the least
// accepted.
func TestConfigSettingsOfZero(t *testing.T) {
	for _, key := range []string{"maxServices", "maxServicesPerFLApp"} {
		for _, form := range []string{
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  %s: %q\n",
			"apiVersion: fn.fedlearner.k8s.io/v1alpha1\nkind: FLAppServices\nmetadata: {name: c}\nspec:\n  %s: %s\n",
		} {
			for _, value := range []string{"0", "-1"} {
				cfg, results := ParseConfig(yaml.MustParse(fmt.Sprintf(form, key, value)), Origin{})
				assert.Equal(t, []string{fmt.Sprintf("functionConfig: %s must be a positive integer, not %q", key, value)}, messages(results, framework.Error), form)
				assert.Equal(t, DefaultConfig(), cfg)
			}
			cfg, results := ParseConfig(yaml.MustParse(fmt.Sprintf(form, key, "1")), Origin{})
			require.Empty(t, results, form)
			want := DefaultConfig()
			if key == "maxServices" {
				want.MaxServices = 1
			} else {
				want.MaxServicesPerFLApp = 1
			}
			assert.Equal(t, want, cfg, form)
		}
	}
}

// splitServiceName reads a name as a generated one only when it ends in
// '-' and a decimal index written as strconv.Itoa writes it.
func TestSplitServiceName(t *testing.T) {
	for name, want := range map[string]struct {
		prefix string
		index  int
		ok     bool
	}{
		"a-leader-worker-0":           {"a-leader-worker-", 0, true},
		"a-leader-worker-1":           {"a-leader-worker-", 1, true},
		"a-leader-worker-10":          {"a-leader-worker-", 10, true},
		"a-leader-worker-1234567890":  {"a-leader-worker-", 1234567890, true},
		"a-leader-worker-00":          {},
		"a-leader-worker-01":          {},
		"a-leader-worker-":            {},
		"a-leader-worker-12345678901": {},
		"a-leader-worker-x":           {},
		"a-leader-worker-+1":          {},
		"a-leader-worker- 1":          {},
		"a-leader-worker--1":          {"a-leader-worker--", 1, true},
		"worker0":                     {},
		"0":                           {},
		"-0":                          {"-", 0, true},
	} {
		prefix, index, ok := splitServiceName(objectKey{"ns", name})
		assert.Equal(t, want.ok, ok, name)
		if want.ok {
			assert.Equal(t, objectKey{"ns", want.prefix}, prefix, name)
			assert.Equal(t, want.index, index, name)
		}
	}
}

// A foreign Service (not generated by this tool) blocks the FLApp only when
// it holds a name the FLApp generates: <prefix>-<i> for i in 0..replicas-1,
// in the FLApp's namespace. <prefix>-00, <prefix>-01, the index at replicas
// and a name in another namespace are other names, left beside the output.
func TestForeignServiceNames(t *testing.T) {
	flapp := flappDoc("ns", "a", "Leader", "", "Worker=2")
	generated := []string{"ns/a-leader-worker-0", "ns/a-leader-worker-1"}
	for _, name := range []string{"a-leader-worker-00", "a-leader-worker-01", "a-leader-worker-2", "a-leader-worker-", "a-leader-worker", "a-leader-worker-+1"} {
		out, results := runDocs(t, DefaultConfig(), flapp, serviceDoc("ns", name, false, "", "", "", ""))
		require.Zero(t, results.ExitCode(), "%s: %s", name, results.Error())
		assert.Equal(t, generated, serviceNames(out), name)
	}
	out, results := runDocs(t, DefaultConfig(), flapp, serviceDoc("other", "a-leader-worker-0", false, "", "", "", ""))
	require.Zero(t, results.ExitCode(), results.Error())
	assert.Equal(t, generated, serviceNames(out))

	for name, reported := range map[string]string{
		"a-leader-worker-1": "ns/a-leader-worker-1", // the last index
		"a-leader-worker-0": "ns/a-leader-worker-0",
	} {
		out, results := runDocs(t, DefaultConfig(), flapp, serviceDoc("ns", name, false, "", "", "", ""))
		assert.Nil(t, out, name)
		assert.Equal(t, []string{"Service " + reported + " would be generated for FLApp a, but the input already holds a Service of that name that flapp-services did not generate; " +
			"it is left as it is: remove or rename it, or rename the FLApp"}, messages(results, framework.Error), name)
	}
	// Two foreign Services in range: the lowest index is named, whatever the order.
	_, results = runDocs(t, DefaultConfig(), flapp,
		serviceDoc("ns", "a-leader-worker-1", false, "", "", "", ""),
		serviceDoc("ns", "a-leader-worker-0", false, "", "", "", ""),
		serviceDoc("ns", "a-leader-worker-2", false, "", "", "", ""))
	assert.Len(t, messages(results, framework.Error), 1)
	assert.Contains(t, messages(results, framework.Error)[0], "Service ns/a-leader-worker-0 would be generated")
}

// Two FLApps whose names, roles and types meet in one prefix would generate
// the same Services: FLApp a, type b-leader-c and FLApp a-leader-b, type c
// both name a-leader-b-leader-c-0. In another namespace they do not meet.
func TestTwoFLAppsClaimOneName(t *testing.T) {
	out, results := runDocs(t, DefaultConfig(),
		flappDoc("ns", "a", "Leader", "", "b-leader-c=1"),
		flappDoc("ns", "a-leader-b", "Leader", "", "c=1"))
	assert.Nil(t, out)
	assert.Equal(t, []string{"Service ns/a-leader-b-leader-c-0 would be generated for both FLApp a-leader-b and FLApp a: rename one of them"},
		messages(results, framework.Error))

	out, results = runDocs(t, DefaultConfig(),
		flappDoc("ns", "a", "Leader", "", "b-leader-c=1"),
		flappDoc("other", "a-leader-b", "Leader", "", "c=1"))
	require.Zero(t, results.ExitCode(), results.Error())
	assert.Equal(t, []string{"ns/a-leader-b-leader-c-0", "other/a-leader-b-leader-c-0"}, serviceNames(out))
}

// A Service an earlier run generated is replaced while its index is below
// replicas and pruned from the index at replicas on; one whose name is not
// a generated name of the FLApp (-00, -01) is pruned too.
func TestPreviousServicesPrunedPastTheLastIndex(t *testing.T) {
	flapp := flappDoc("ns", "a", "Leader", "u1", "Worker=2")
	prev := func(name, index string) string {
		return serviceDoc("ns", name, true, "a", "leader", "worker", index)
	}
	out, results := runDocs(t, DefaultConfig(), flapp,
		prev("a-leader-worker-1", "1"), // the last index: replaced
		prev("a-leader-worker-2", "2"), // one past it: pruned
		prev("a-leader-worker-01", "01"),
		prev("a-leader-worker-00", "00"))
	require.Zero(t, results.ExitCode(), results.Error())
	assert.Equal(t, []string{"ns/a-leader-worker-0", "ns/a-leader-worker-1"}, serviceNames(out))
	assert.Equal(t, []string{
		"generated 2 Service(s) owned by UID u1",
		"pruned Service ns/a-leader-worker-00: replica index 00 is not below replicas (2) of Worker in FLApp ns/a",
		"pruned Service ns/a-leader-worker-01: replica index 01 is not below replicas (2) of Worker in FLApp ns/a",
		"pruned Service ns/a-leader-worker-2: replica index 2 is not below replicas (2) of Worker in FLApp ns/a",
	}, sortedMessages(results, framework.Info))
}

// Each reason a previous Service is pruned, by hand.
func TestPruneReasons(t *testing.T) {
	prev := func(flapp, role, replicaType string) string {
		return serviceDoc("ns", flapp+"-"+role+"-"+replicaType+"-0", true, flapp, role, replicaType, "0")
	}
	_, results := runDocs(t, DefaultConfig(),
		flappDoc("ns", "a", "Follower", "u1", "Worker=1"),
		prev("a", "leader", "worker"),
		prev("a", "follower", "ps"),
		prev("gone", "leader", "worker"))
	require.Zero(t, results.ExitCode(), results.Error())
	assert.Equal(t, []string{
		"generated 1 Service(s) owned by UID u1",
		"pruned Service ns/a-follower-ps-0: replica type \"ps\" is no longer in FLApp ns/a",
		"pruned Service ns/a-leader-worker-0: the role of FLApp ns/a is now Follower",
		"pruned Service ns/gone-leader-worker-0: its FLApp ns/gone is no longer in the input",
	}, sortedMessages(results, framework.Info))
}

func sortedMessages(results Results, severity framework.Severity) []string {
	m := messages(results, severity)
	sortStrings(m)
	return m
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// The info result of an FLApp says how many Services it got, 0 included
// (the FLApp was read and renders nothing); the owner note and the run's
// "owner references omitted" note are only about FLApps with Services.
func TestInfoForZeroServices(t *testing.T) {
	_, results := runDocs(t, DefaultConfig(),
		flappDoc("ns", "a", "Leader", "u1", "Worker=0"),
		flappDoc("ns", "b", "Leader", "", "Worker=0"),
		flappDoc("ns", "c", "Leader", "u3", "Worker=1"))
	require.Zero(t, results.ExitCode(), results.Error())
	var got []string
	for _, r := range results {
		require.Equal(t, framework.Info, r.Severity, r.Message)
		name := ""
		if r.ResourceRef != nil {
			name = r.ResourceRef.Name + ": "
		}
		got = append(got, name+r.Message)
	}
	sortStrings(got)
	assert.Equal(t, []string{"a: generated 0 Service(s)", "b: generated 0 Service(s)", "c: generated 1 Service(s) owned by UID u3"}, got)

	_, results = runDocs(t, DefaultConfig(), flappDoc("ns", "b", "Leader", "", "Worker=1"))
	assert.Equal(t, []string{"generated 1 Service(s)", "owner references omitted for 1 FLApp(s) whose metadata.uid is not in the input (ns/b): " +
		"render from a live export (kubectl get flapps -o yaml) to set them; until then the GitOps engine's own tracking prunes these Services"},
		sortedMessages(results, framework.Info))
}

// The operator's rule: the container named exactly tensorflow defines the
// ports; TensorFlow is another container.
func TestTensorflowContainerIsCaseSensitive(t *testing.T) {
	doc := "apiVersion: fedlearner.k8s.io/v1alpha1\nkind: FLApp\nmetadata: {name: a, namespace: ns}\nspec:\n  role: Leader\n  peerSpecs: {Follower: {peerURL: x}}\n" +
		"  flReplicaSpecs:\n    Worker:\n      replicas: 1\n      template: {spec: {containers: [" +
		"{name: TensorFlow, ports: [{name: upper, containerPort: 1}]}, {name: tensorflow, ports: [{name: lower, containerPort: 2}]}]}}\n"
	out, results := runDocs(t, DefaultConfig(), doc)
	require.Zero(t, results.ExitCode(), results.Error())
	var ports []string
	for svc := range out.Services() {
		for _, p := range svc.Spec.Ports {
			ports = append(ports, fmt.Sprintf("%s:%d->%s", p.Name, p.Port, p.TargetPort.String()))
		}
	}
	assert.Equal(t, []string{"lower:2->lower", "flapp-port:8888->flapp-port"}, ports)

	only := strings.Replace(doc, ", {name: tensorflow, ports: [{name: lower, containerPort: 2}]}", "", 1)
	out, results = runDocs(t, DefaultConfig(), only)
	assert.Nil(t, out)
	assert.Equal(t, []string{`Required value: no container named "tensorflow": its ports define the Services of 1 replica(s)`}, messages(results, framework.Error))
}

// The pair check compares only types that either side marks pair: true; a
// type with pair: false (or no pair) may differ between the parties.
func TestPairCheckOnlyPairedTypes(t *testing.T) {
	job := func(leaderPair, followerPair string, leaderReplicas, followerReplicas int) []string {
		side := func(role, pair string, replicas int) string {
			d := flappDoc("ns-"+strings.ToLower(role), "job", role, "", fmt.Sprintf("Worker=%d", replicas))
			if pair != "" {
				d = strings.Replace(d, "      replicas:", "      pair: "+pair+"\n      replicas:", 1)
			}
			return d
		}
		_, results := runDocs(t, DefaultConfig(), side("Leader", leaderPair, leaderReplicas), side("Follower", followerPair, followerReplicas))
		require.Zero(t, results.ExitCode(), results.Error())
		return messages(results, framework.Warning)
	}
	assert.Empty(t, job("false", "false", 2, 3), "pair: false on both sides")
	assert.Empty(t, job("", "", 2, 3), "no pair on either side")
	assert.Empty(t, job("false", "", 2, 3))
	assert.Empty(t, job("true", "true", 2, 2), "equal counts")
	mismatch := "paired replica type Worker has 2 replicas in Leader FLApp ns-leader/job but 3 replicas in Follower FLApp ns-follower/job: " +
		"the operator pairs them one to one and the leader waits for the follower until both counts are equal"
	assert.Equal(t, []string{mismatch}, job("true", "true", 2, 3))
	assert.Equal(t, []string{mismatch}, job("true", "false", 2, 3), "one side pairs")
	assert.Equal(t, []string{mismatch}, job("false", "true", 2, 3), "the other side pairs")
	assert.Equal(t, []string{strings.Replace(mismatch, "2 replicas in Leader", "1 replica in Leader", 1)}, job("true", "true", 1, 3))
}

// A paired type missing on one side is named as missing.
func TestPairCheckMissingType(t *testing.T) {
	leader := strings.Replace(flappDoc("a", "job", "Leader", "", "Worker=1"), "      replicas:", "      pair: true\n      replicas:", 1)
	follower := flappDoc("b", "job", "Follower2", "", "PS=1")
	_, results := runDocs(t, DefaultConfig(), leader, follower)
	assert.Equal(t, []string{"paired replica type Worker has 1 replica in Leader FLApp a/job but no replicas (the type is missing) in Follower FLApp b/job: " +
		"the operator pairs them one to one and the leader waits for the follower until both counts are equal"}, messages(results, framework.Warning))
	// Another job's name, or two leaders: nothing to compare.
	_, results = runDocs(t, DefaultConfig(), leader, strings.Replace(follower, "name: job", "name: other", 1))
	assert.Empty(t, messages(results, framework.Warning))
	_, results = runDocs(t, DefaultConfig(), leader, strings.Replace(follower, "role: Follower2", "role: Leader", 1))
	assert.Empty(t, messages(results, framework.Warning))
}

// Replica types that differ only in case share their Service names; that is
// an error only when both have Services. With one at 0 replicas, the other
// renders alone, and a Service past its last index is pruned naming it.
func TestReplicaTypesDifferingInCase(t *testing.T) {
	out, results := runDocs(t, DefaultConfig(), flappDoc("ns", "a", "Leader", "", "Worker=0", "worker=2"))
	require.Zero(t, results.ExitCode(), results.Error())
	assert.Equal(t, []string{"ns/a-leader-worker-0", "ns/a-leader-worker-1"}, serviceNames(out))

	out, results = runDocs(t, DefaultConfig(), flappDoc("ns", "a", "Leader", "", "Worker=1", "worker=1"))
	assert.Nil(t, out)
	assert.Equal(t, []string{"Duplicate value: \"worker\": replica types Worker and worker differ only in case, so both would generate the Services a-leader-worker-0, ...: rename or merge one of them"},
		messages(results, framework.Error))
}

// With types Worker (0 replicas) and worker (2), the Services are worker's:
// one past its last index is pruned naming worker and its replicas.
func TestPruneNamesTheTypeThatGenerates(t *testing.T) {
	_, results := runDocs(t, DefaultConfig(),
		flappDoc("ns", "a", "Leader", "u1", "Worker=0", "worker=2"),
		serviceDoc("ns", "a-leader-worker-2", true, "a", "leader", "worker", "2"))
	require.Zero(t, results.ExitCode(), results.Error())
	assert.Equal(t, []string{
		"generated 2 Service(s) owned by UID u1",
		"pruned Service ns/a-leader-worker-2: replica index 2 is not below replicas (2) of worker in FLApp ns/a",
	}, sortedMessages(results, framework.Info))
}

// Objects an in-place entry of a kustomize build already rendered are output
// as they are (Add keeps them) and are not this run's: an FLApp among them
// generates nothing, and a v1 Service among them, marked or not, is a
// foreign Service, never replaced nor pruned.
func TestRenderedObjects(t *testing.T) {
	rendered := func(text string) Object {
		return Object{Node: yaml.MustParse(text), Origin: Origin{File: "base/a.yaml", Build: "overlay", BuildOutput: true}}
	}
	run := func(objects ...Object) ([]bool, *Output, Results) {
		r := NewRun()
		var kept []bool
		for _, o := range objects {
			kept = append(kept, r.Add(o))
		}
		out, results := r.Finish(DefaultConfig())
		return kept, out, results
	}
	app := Object{Node: yaml.MustParse(flappDoc("ns", "a", "Leader", "u1", "Worker=2")), Origin: Origin{File: "a.yaml"}}
	// A build's FLApp with the Services its entry made, and a marked Service
	// without its FLApp, are held to the operator's rules (fit_test.go,
	// TestBuiltOutputFits); here, what a build outputs beside them.
	unmarked := serviceDoc("ns", "a-leader-worker-5", false, "a", "leader", "worker", "5")

	kept, out, results := run(app, rendered(unmarked), rendered("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"))
	require.Zero(t, results.ExitCode(), results.Error())
	assert.Equal(t, []bool{true, true, true}, kept)
	assert.Equal(t, []string{"ns/a-leader-worker-0", "ns/a-leader-worker-1"}, serviceNames(out))
	assert.Equal(t, []string{"generated 2 Service(s) owned by UID u1"}, messages(results, framework.Info), "the build's Service is not pruned")

	for _, name := range []string{"a-leader-worker-1", "a-leader-worker-0"} {
		_, out, results = run(app, rendered(serviceDoc("ns", name, false, "a", "leader", "worker", "0")))
		assert.Nil(t, out, name)
		assert.Equal(t, []string{"Service ns/" + name + " would be generated for FLApp a, but the input already holds a Service of that name that flapp-services did not generate (in base/a.yaml (in the build of overlay)); " +
			"it is left as it is: remove or rename it, or rename the FLApp"}, messages(results, framework.Error), name)
	}
	// Only a v1 Service holds a Service name.
	for _, other := range []string{
		"apiVersion: v2\nkind: Service\nmetadata: {name: a-leader-worker-0, namespace: ns}\n",
		"apiVersion: v1\nkind: Endpoints\nmetadata: {name: a-leader-worker-0, namespace: ns}\n",
	} {
		_, out, results = run(app, rendered(other))
		require.Zero(t, results.ExitCode(), results.Error())
		assert.Len(t, serviceNames(out), 2, other)
	}
	kept, _, results = run(app, Object{Origin: Origin{BuildOutput: true}})
	assert.Equal(t, []bool{true, true}, kept, "nothing to read in a rendered nil")
	require.Zero(t, results.ExitCode(), results.Error())
}

// MaxErrors (100) errors are all shown; past it the rest are counted in one
// more result.
func TestErrorResultsCapped(t *testing.T) {
	broken := func(n int) []string {
		docs := make([]string, n)
		for i := range docs {
			docs[i] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [x]}\n"
		}
		return docs
	}
	_, results := runDocs(t, DefaultConfig(), broken(100)...)
	assert.Len(t, messages(results, framework.Error), 100)
	_, results = runDocs(t, DefaultConfig(), broken(102)...)
	errs := messages(results, framework.Error)
	assert.Len(t, errs, 101)
	assert.Contains(t, errs, "2 more errors not shown (the first 100 are)")
}

// The settings must be an object under data or spec.
func TestConfigSettingsNotAnObject(t *testing.T) {
	for text, want := range map[string]string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: [1]\n":                                   "functionConfig: data must be an object",
		"apiVersion: fn.fedlearner.k8s.io/v1alpha1\nkind: FLAppServices\nmetadata: {name: c}\nspec: 5\n":      "functionConfig: spec must be an object",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {}\n":                                    "",
		"apiVersion: v2\nkind: ConfigMap\nmetadata: {name: c}\n":                                              "functionConfig: unsupported functionConfig v2 ConfigMap: use a v1 ConfigMap or fn.fedlearner.k8s.io/v1alpha1 FLAppServices",
		"apiVersion: fn.fedlearner.k8s.io/v1alpha2\nkind: FLAppServices\nmetadata: {name: c}\n":               "functionConfig: unsupported functionConfig fn.fedlearner.k8s.io/v1alpha2 FLAppServices: use a v1 ConfigMap or fn.fedlearner.k8s.io/v1alpha1 FLAppServices",
		"apiVersion: fn.fedlearner.k8s.io/v1alpha1\nkind: FLAppServices\nmetadata: {name: c}\ndata: {a: b}\n": "functionConfig: unknown field(s) data in FLAppServices: settings belong under spec",
	} {
		cfg, results := ParseConfig(yaml.MustParse(text), Origin{})
		assert.Equal(t, DefaultConfig(), cfg, text)
		if want == "" {
			assert.Empty(t, results, text)
			continue
		}
		assert.Equal(t, []string{want}, messages(results, framework.Error), text)
	}
}
