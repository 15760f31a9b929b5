package benchdata

import (
	"fmt"
	"strings"
)

// CorpusDir holds, under the bench data directory, the kustomize corpus:
// kustomization roots laid out as teams lay them out (bases, overlays,
// components, operator installs with hundreds of CRDs, patches with
// selectors, generators, replacements), each running flapp-services as an
// exec transformer. make bench builds every root with kustomize and with
// `flapp-services render`, side by side (bench/run, the corpus section).
// Roots share directories as a repository's overlays share their bases; a
// root's reads all stay inside CorpusDir, from which render runs.
const CorpusDir = "kustomize-corpus"

// CorpusRoot is one kustomization root of the corpus.
type CorpusRoot struct {
	Root   string   // the root, relative to CorpusDir (slash-separated)
	Input  string   // what it is, as the report says it
	FLApps int      // FLApps in its build's output
	Args   []string // render's flags besides the root (none: the defaults)
	Large  bool     // one of the slowest to build (go test -short leaves it out)
}

// corpusLayout is a directory of CorpusDir: its roots, and its files.
type corpusLayout struct {
	roots []CorpusRoot
	files func(t tree, bin string)
}

// tree is files by path, relative to CorpusDir.
type tree map[string]string

// CorpusRoots are the corpus's roots, in the order the report lists them,
// smallest first; nothing is generated.
func CorpusRoots() []CorpusRoot {
	var roots []CorpusRoot
	for _, l := range corpusLayouts() {
		roots = append(roots, l.roots...)
	}
	return roots
}

// CorpusFiles are the corpus's files by path relative to CorpusDir, the
// function's entries running bin (kustomize execs it; render reads the
// entry as its configuration and runs nothing).
func CorpusFiles(bin string) map[string]string {
	t := tree{}
	for _, l := range corpusLayouts() {
		l.files(t, bin)
	}
	return t
}

// functionEntry is the transformer entry, configured by the typed kind.
func functionEntry(bin string) string {
	return fmt.Sprintf(`apiVersion: fn.fedlearner.k8s.io/v1alpha1
kind: FLAppServices
metadata:
  name: flapp-services
  annotations:
    config.kubernetes.io/function: |
      exec:
        path: %s
spec:
  ownerReferences: Never
`, bin)
}

// configMapEntry is the transformer entry, configured by a ConfigMap.
func configMapEntry(bin string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: flapp-services
  annotations:
    config.kubernetes.io/function: |
      exec:
        path: %s
data:
  ownerReferences: Never
`, bin)
}

const kustomizationHead = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
const componentHead = "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n"

// flappFiles writes flapps as one file each under dir/apps and returns
// their paths relative to dir.
func (t tree) flappFiles(dir string, flapps []flapp) []string {
	var names []string
	for _, f := range flapps {
		var b strings.Builder
		f.write(&b)
		name := "apps/" + f.name + ".yaml"
		t[dir+"/"+name] = b.String()
		names = append(names, name)
	}
	return names
}

// stream is objects as one YAML stream.
func stream(flapps []flapp) string {
	var b strings.Builder
	for i, f := range flapps {
		if i > 0 {
			b.WriteString("---\n")
		}
		f.write(&b)
	}
	return b.String()
}

// team is n FLApps of a team, each reading configMap and secret when set.
func team(name string, n int, configMap, secret string) []flapp {
	var fs []flapp
	for i := 0; i < n; i++ {
		f := corpusFLApp(name, i)
		f.configMap, f.secret = configMap, secret
		fs = append(fs, f)
	}
	return fs
}

// list is a kustomization list field of the given entries.
func list(field string, entries []string) string {
	var b strings.Builder
	b.WriteString(field + ":\n")
	for _, e := range entries {
		b.WriteString("- " + e + "\n")
	}
	return b.String()
}

// jsonPatch is a patches entry: a JSON 6902 patch of one op over a target.
func jsonPatch(target, op, path, value string) string {
	return fmt.Sprintf("- target: %s\n  patch: |-\n    - op: %s\n      path: %s\n      value: %s\n", target, op, path, value)
}

// workerReplicas is the patch that sets Worker replicas over a target.
func workerReplicas(target string, n int) string {
	return jsonPatch(target, "replace", "/spec/flReplicaSpecs/Worker/replicas", fmt.Sprint(n))
}

// templateAnnotations adds pod-template annotations to every replica type
// of the FLApps a target selects.
func templateAnnotations(target, annotations string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "- target: %s\n  patch: |-\n", target)
	for _, rt := range []string{"Master", "PS", "Worker"} {
		fmt.Fprintf(&b, "    - op: add\n      path: /spec/flReplicaSpecs/%s/template/metadata\n      value: {annotations: %s}\n", rt, annotations)
	}
	return b.String()
}

// gpuPatch gives the Workers of the selected FLApps a GPU, a node pool and
// its toleration.
const gpuPatch = `- target: {group: fedlearner.k8s.io, kind: FLApp, labelSelector: accelerator=gpu}
  patch: |-
    - op: replace
      path: /spec/flReplicaSpecs/Worker/template/spec/containers/0/resources/limits
      value: {cpu: "8", memory: 32Gi, nvidia.com/gpu: "1"}
    - op: add
      path: /spec/flReplicaSpecs/Worker/template/spec/nodeSelector
      value: {cloud.example.com/node-pool: gpu-a100}
    - op: add
      path: /spec/flReplicaSpecs/Worker/template/spec/tolerations
      value: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
`

// monitoringComponent is a Component that labels everything and has every
// pod scraped.
func monitoringComponent() string {
	return componentHead + `labels:
- pairs:
    monitoring.example.com/enabled: "true"
patches:
` + templateAnnotations("{group: fedlearner.k8s.io, kind: FLApp}", `{prometheus.io/scrape: "true", prometheus.io/port: "9090"}`) + `- target: {kind: Deployment}
  patch: |-
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: any
    spec:
      template:
        metadata:
          annotations:
            prometheus.io/scrape: "true"
            prometheus.io/port: "8080"
`
}

// crdFiles writes CRDs from..to-1 under dir/crds, one file per service, and
// returns the files relative to dir.
func (t tree) crdFiles(dir string, from, to int) []string {
	files := map[string]*strings.Builder{}
	var order []string
	for i := from; i < to; i++ {
		_, group := crdKind(i)
		name := "crds/" + strings.SplitN(group, ".", 2)[0] + ".yaml"
		b, ok := files[name]
		if !ok {
			b = &strings.Builder{}
			files[name] = b
			order = append(order, name)
		} else {
			b.WriteString("---\n")
		}
		writeCRD(b, i, 3+pick(i, 11, 8))
	}
	for _, name := range order {
		t[dir+"/"+name] = files[name].String()
	}
	return order
}

func corpusLayouts() []corpusLayout {
	return []corpusLayout{
		{roots: []CorpusRoot{{Root: "mnist", FLApps: 1,
			Input: "1 FLApp, the entry in the same kustomization (namespace, labels)"}},
			files: func(t tree, bin string) {
				f := flapp{name: "mnist", workers: 2, ps: 1, image: "fedlearner/fedlearner:v2.3.0"}
				t["mnist/mnist-leader.yaml"] = stream([]flapp{f})
				t["mnist/flapp-services.yaml"] = functionEntry(bin)
				t["mnist/kustomization.yaml"] = kustomizationHead + `namespace: fl-leader
labels:
- pairs:
    app.kubernetes.io/part-of: mnist-federation
resources:
- mnist-leader.yaml
transformers:
- flapp-services.yaml
`
			}},
		{roots: []CorpusRoot{{Root: "mnist-follower/overlays/staging", FLApps: 1,
			Input: "1 follower FLApp, the entry (a ConfigMap) in its base; overlay: namespace, labels, images"}},
			files: func(t tree, bin string) {
				f := flapp{name: "mnist", follower: true, workers: 2, ps: 1, image: "fedlearner/fedlearner:v2.3.0"}
				t["mnist-follower/base/mnist-follower.yaml"] = stream([]flapp{f})
				t["mnist-follower/base/flapp-services.yaml"] = configMapEntry(bin)
				t["mnist-follower/base/kustomization.yaml"] = kustomizationHead + "namespace: fl-follower\nresources:\n- mnist-follower.yaml\ntransformers:\n- flapp-services.yaml\n"
				t["mnist-follower/overlays/staging/kustomization.yaml"] = kustomizationHead + `resources:
- ../../base
namespace: fl-follower-staging
labels:
- pairs:
    environment: staging
images:
- name: fedlearner/fedlearner
  newTag: v2.4.0-rc1
`
			}},
		{roots: []CorpusRoot{{Root: "tiny-component/overlays/dev", FLApps: 2,
			Input: "2 FLApps; overlay: the entry in a component, namespace, a patch by kind"}},
			files: func(t tree, bin string) {
				t["tiny-component/base/flapps.yaml"] = stream(team("tiny", 2, "", ""))
				t["tiny-component/base/kustomization.yaml"] = kustomizationHead + "resources:\n- flapps.yaml\n"
				t["tiny-component/components/flapp-services/flapp-services.yaml"] = functionEntry(bin)
				t["tiny-component/components/flapp-services/kustomization.yaml"] = componentHead + "transformers:\n- flapp-services.yaml\n"
				t["tiny-component/overlays/dev/kustomization.yaml"] = kustomizationHead + "resources:\n- ../../base\nnamespace: tiny-dev\npatches:\n" +
					jsonPatch("{group: fedlearner.k8s.io, kind: FLApp}", "add", "/spec/flReplicaSpecs/Worker/template/spec/priorityClassName", "fl-dev") +
					"components:\n- ../../components/flapp-services\n"
			}},
		{roots: []CorpusRoot{{Root: "federation/follower", FLApps: 10,
			Input: "10 follower FLApps in one kustomization: namespace, labels, images, patches by label; the entry"}},
			files: func(t tree, bin string) {
				fs := team("fed", 10, "", "")
				for i := range fs {
					fs[i].follower = true
				}
				t["federation/follower/flapps.yaml"] = stream(fs)
				t["federation/follower/flapp-services.yaml"] = functionEntry(bin)
				t["federation/follower/kustomization.yaml"] = kustomizationHead + `namespace: fl-follower
labels:
- pairs:
    app.kubernetes.io/part-of: federation
images:
- name: fedlearner/fedlearner
  newName: registry.example.com/fedlearner/fedlearner
  newTag: v2.3.1
resources:
- flapps.yaml
patches:
` + workerReplicas("{kind: FLApp, labelSelector: tier=eval}", 1) +
					jsonPatch("{kind: FLApp, labelSelector: priority=high}", "add", "/spec/flReplicaSpecs/Worker/template/spec/priorityClassName", "fl-high") +
					"transformers:\n- flapp-services.yaml\n"
			}},
		{roots: []CorpusRoot{{Root: "fifo", FLApps: 12,
			Input: "sortOptions fifo: a namespace, RBAC, a Deployment, 12 FLApps, quotas; the entry"}},
			files: func(t tree, bin string) {
				var b strings.Builder
				rbac(&b)
				t["fifo/rbac.yaml"] = b.String()
				b.Reset()
				deployment(&b, "model-server", 2, "", "")
				t["fifo/model-server.yaml"] = b.String()
				t["fifo/namespace.yaml"] = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: fl-fifo\n"
				t["fifo/quota.yaml"] = "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: fl-jobs\nspec:\n  hard: {requests.cpu: \"200\", requests.memory: 400Gi, pods: \"500\"}\n---\n" +
					"apiVersion: v1\nkind: LimitRange\nmetadata:\n  name: fl-defaults\nspec:\n  limits:\n  - type: Container\n    default: {cpu: \"1\", memory: 1Gi}\n    defaultRequest: {cpu: 500m, memory: 512Mi}\n"
				t["fifo/flapps.yaml"] = stream(team("fifo", 12, "", ""))
				t["fifo/flapp-services.yaml"] = functionEntry(bin)
				t["fifo/kustomization.yaml"] = kustomizationHead + `sortOptions:
  order: fifo
namespace: fl-fifo
resources:
- namespace.yaml
- rbac.yaml
- quota.yaml
- model-server.yaml
- flapps.yaml
transformers:
- flapp-services.yaml
`
			}},
		{roots: []CorpusRoot{{Root: "team-b/overlays/staging", FLApps: 12,
			Input: "base (12 FLApps, a release ConfigMap); overlay: 2 components (patches; the entry), namespace, replacements, a patch by label"}},
			files: func(t tree, bin string) {
				t["team-b/base/flapps.yaml"] = stream(team("team-b", 12, "", ""))
				t["team-b/base/release.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: model-release\ndata:\n  version: \"2026.11.3\"\n  image: registry.example.com/fedlearner/fedlearner:v2.4.0\n"
				t["team-b/base/kustomization.yaml"] = kustomizationHead + "namespace: team-b\nresources:\n- flapps.yaml\n- release.yaml\n"
				t["team-b/components/istio/kustomization.yaml"] = componentHead + "patches:\n" +
					templateAnnotations("{group: fedlearner.k8s.io, kind: FLApp}", `{sidecar.istio.io/inject: "false"}`)
				t["team-b/components/flapp-services/flapp-services.yaml"] = functionEntry(bin)
				t["team-b/components/flapp-services/kustomization.yaml"] = componentHead + `labels:
- pairs:
    platform.example.com/rendered-by: flapp-services
transformers:
- flapp-services.yaml
`
				var repl strings.Builder
				repl.WriteString("replacements:\n- source: {kind: ConfigMap, name: model-release, fieldPath: data.version}\n  targets:\n  - select: {kind: FLApp}\n    fieldPaths:\n")
				for _, rt := range []string{"Master", "PS", "Worker"} {
					fmt.Fprintf(&repl, "    - spec.flReplicaSpecs.%s.template.spec.containers.[name=tensorflow].env.[name=MODEL_VERSION].value\n", rt)
				}
				repl.WriteString("- source: {kind: ConfigMap, name: model-release, fieldPath: data.image}\n  targets:\n  - select: {kind: FLApp, labelSelector: tier=train}\n    fieldPaths:\n")
				for _, rt := range []string{"Master", "PS", "Worker"} {
					fmt.Fprintf(&repl, "    - spec.flReplicaSpecs.%s.template.spec.containers.[name=tensorflow].image\n", rt)
				}
				t["team-b/overlays/staging/kustomization.yaml"] = kustomizationHead + "resources:\n- ../../base\nnamespace: team-b-staging\ncomponents:\n- ../../components/istio\n- ../../components/flapp-services\n" +
					repl.String() + "patches:\n" + jsonPatch("{kind: FLApp, labelSelector: tier=eval}", "replace", "/spec/cleanPodPolicy", "None")
			}},
		teamA(),
		{roots: []CorpusRoot{{Root: "origins/overlays/prod", FLApps: 30,
			Input: "buildMetadata [originAnnotations]: base (30 FLApps in 3 files, a generated ConfigMap); overlay: namespace, patches by label; the entry"}},
			files: func(t tree, bin string) {
				fs := team("origins", 30, "trainer-config", "")
				var files []string
				for k := 0; k < 3; k++ {
					name := fmt.Sprintf("jobs-%d.yaml", k)
					t["origins/base/"+name] = stream(fs[k*10 : k*10+10])
					files = append(files, name)
				}
				t["origins/base/kustomizeconfig/flapp.yaml"] = flappNameReferences
				t["origins/base/kustomization.yaml"] = kustomizationHead + list("resources", files) + `configMapGenerator:
- name: trainer-config
  literals:
  - LOG_LEVEL=info
  - DATA_SOURCE=hdfs://namenode:8020/fl/origins
configurations:
- kustomizeconfig/flapp.yaml
`
				t["origins/overlays/prod/flapp-services.yaml"] = functionEntry(bin)
				t["origins/overlays/prod/kustomization.yaml"] = kustomizationHead + `buildMetadata:
- originAnnotations
resources:
- ../../base
namespace: fl-origins
patches:
` + workerReplicas("{kind: FLApp, labelSelector: tier=train}", 4) + gpuPatch + "transformers:\n- flapp-services.yaml\n"
			}},
		{roots: []CorpusRoot{{Root: "replacements/overlays/prod", FLApps: 25,
			Input: "base (25 FLApps, a release ConfigMap); overlay: 6 replacements into every FLApp, namespace, labels; the entry"}},
			files: func(t tree, bin string) {
				t["replacements/base/flapps.yaml"] = stream(team("repl", 25, "", ""))
				t["replacements/base/release.yaml"] = `apiVersion: v1
kind: ConfigMap
metadata:
  name: release
data:
  version: "2026.12.1"
  image: registry.example.com/fedlearner/fedlearner:v2.4.0
  eval-image: registry.example.com/fedlearner/fedlearner:v2.4.0-eval
  peer: fedlearner-stack-ingress-nginx-controller.fl-partner.svc:443
  cleanup: None
`
				t["replacements/base/kustomization.yaml"] = kustomizationHead + "resources:\n- flapps.yaml\n- release.yaml\n"
				var r strings.Builder
				r.WriteString("replacements:\n")
				add := func(field, selector string, paths ...string) {
					fmt.Fprintf(&r, "- source: {kind: ConfigMap, name: release, fieldPath: data.%s}\n  targets:\n  - select: {kind: FLApp%s}\n    fieldPaths:\n", field, selector)
					for _, p := range paths {
						r.WriteString("    - " + p + "\n")
					}
					if strings.HasPrefix(paths[0], "metadata.") {
						r.WriteString("    options: {create: true}\n")
					}
				}
				each := func(format string) []string {
					var ps []string
					for _, rt := range []string{"Master", "PS", "Worker"} {
						ps = append(ps, fmt.Sprintf(format, rt))
					}
					return ps
				}
				add("version", "", each("spec.flReplicaSpecs.%s.template.spec.containers.[name=tensorflow].env.[name=MODEL_VERSION].value")...)
				add("image", ", labelSelector: tier=train", each("spec.flReplicaSpecs.%s.template.spec.containers.[name=tensorflow].image")...)
				add("eval-image", ", labelSelector: tier=eval", each("spec.flReplicaSpecs.%s.template.spec.containers.[name=tensorflow].image")...)
				add("peer", "", "spec.peerSpecs.Follower.peerURL")
				add("cleanup", ", labelSelector: tier=eval", "spec.cleanPodPolicy")
				add("version", ", labelSelector: priority=high", "metadata.annotations.release")
				t["replacements/overlays/prod/flapp-services.yaml"] = functionEntry(bin)
				t["replacements/overlays/prod/kustomization.yaml"] = kustomizationHead + "resources:\n- ../../base\nnamespace: fl-repl\nlabels:\n- pairs:\n    environment: prod\n" +
					r.String() + "transformers:\n- flapp-services.yaml\n"
			}},
		{roots: []CorpusRoot{{Root: "generators", FLApps: 20,
			Input: "20 FLApps and 4 Deployments, 24 configMapGenerators and 10 secretGenerators (hash suffixes) they reference, generatorOptions; the entry"}},
			files: func(t tree, bin string) {
				fs := team("gen", 20, "", "")
				var files, gens []string
				for i := range fs {
					fs[i].configMap = fs[i].name + "-config"
					fs[i].secret = fmt.Sprintf("peer-credentials-%d", i%10)
					t["generators/config/"+fs[i].name+".properties"] = fmt.Sprintf("data.source=hdfs://namenode:8020/fl/gen/%s\nbatch.size=%d\nlearning.rate=0.0%d\nepochs=%d\n", fs[i].name, 256<<pick(i, 12, 3), 1+pick(i, 13, 9), 1+pick(i, 14, 20))
					gens = append(gens, fmt.Sprintf("- name: %s\n  files:\n  - trainer.properties=config/%s.properties\n  literals:\n  - LOG_LEVEL=info\n", fs[i].configMap, fs[i].name))
				}
				files = t.flappFiles("generators", fs)
				var b strings.Builder
				for d := 0; d < 4; d++ {
					if d > 0 {
						b.WriteString("---\n")
					}
					name := fmt.Sprintf("serving-%d", d)
					deployment(&b, name, 2, name+"-config", fmt.Sprintf("peer-credentials-%d", d))
					t["generators/config/"+name+".env"] = fmt.Sprintf("MODEL=%s\nPORT=8080\nWORKERS=%d\n", name, 2+d)
					gens = append(gens, fmt.Sprintf("- name: %s-config\n  envs:\n  - config/%s.env\n", name, name))
				}
				t["generators/serving.yaml"] = b.String()
				var secrets strings.Builder
				for s := 0; s < 10; s++ {
					fmt.Fprintf(&secrets, "- name: peer-credentials-%d\n  literals:\n  - token=%016x\n  - ca.crt=%064x\n", s, mix(s, 15), mix(s, 16))
				}
				t["generators/kustomizeconfig/flapp.yaml"] = flappNameReferences
				t["generators/flapp-services.yaml"] = functionEntry(bin)
				t["generators/kustomization.yaml"] = kustomizationHead + "namespace: fl-gen\n" + list("resources", append(files, "serving.yaml")) +
					"generatorOptions:\n  labels:\n    generated-by: kustomize\n" +
					"configMapGenerator:\n" + strings.Join(gens, "") + "secretGenerator:\n" + secrets.String() +
					"configurations:\n- kustomizeconfig/flapp.yaml\ntransformers:\n- flapp-services.yaml\n"
			}},
		mlPipelines(),
		platformPerTeam(),
		operator(),
		providerCloud(),
		platform(),
	}
}

// teamA is a team's base with two environments: dev and prod.
func teamA() corpusLayout {
	return corpusLayout{
		roots: []CorpusRoot{
			{Root: "team-a/overlays/dev", FLApps: 16,
				Input: "base (16 FLApp files, a Deployment, RBAC, generators with hash suffixes, commonLabels); overlay: a component, namespace, namePrefix, patches by kind and label, images; the entry"},
			{Root: "team-a/overlays/prod", FLApps: 16,
				Input: "the same base; overlay: 2 components, namespace, patches by label, a merged generator, replicas, images, labels; the entry"},
		},
		files: func(t tree, bin string) {
			fs := team("team-a", 16, "trainer-config", "peer-credentials")
			files := t.flappFiles("team-a/base", fs)
			var b strings.Builder
			rbac(&b)
			t["team-a/base/rbac.yaml"] = b.String()
			b.Reset()
			deployment(&b, "data-portal", 2, "trainer-config", "peer-credentials")
			t["team-a/base/data-portal.yaml"] = b.String()
			t["team-a/base/config/trainer.properties"] = "data.source=hdfs://namenode:8020/fl/team-a\nbatch.size=512\ncheckpoint.interval=600\n"
			t["team-a/base/kustomizeconfig/flapp.yaml"] = flappNameReferences
			t["team-a/base/kustomization.yaml"] = kustomizationHead + list("resources", append([]string{"rbac.yaml", "data-portal.yaml"}, files...)) + `commonLabels:
  fedlearner.k8s.io/team: team-a
configMapGenerator:
- name: trainer-config
  files:
  - config/trainer.properties
  literals:
  - LOG_LEVEL=info
secretGenerator:
- name: peer-credentials
  literals:
  - token=5f3a9c1e7b2d4086
configurations:
- kustomizeconfig/flapp.yaml
`
			t["team-a/components/monitoring/kustomization.yaml"] = monitoringComponent()
			t["team-a/components/gpu/kustomization.yaml"] = componentHead + "patches:\n" + gpuPatch
			for _, env := range []string{"dev", "prod"} {
				t["team-a/overlays/"+env+"/flapp-services.yaml"] = functionEntry(bin)
			}
			t["team-a/overlays/dev/kustomization.yaml"] = kustomizationHead + `resources:
- ../../base
components:
- ../../components/monitoring
namespace: team-a-dev
namePrefix: dev-
patches:
` + workerReplicas("{group: fedlearner.k8s.io, kind: FLApp}", 1) + `- target: {kind: Deployment, labelSelector: app=data-portal}
  patch: |-
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: data-portal
    spec:
      template:
        spec:
          containers:
          - name: server
            args: ["--port=8080", "--log-level=debug"]
images:
- name: fedlearner/fedlearner
  newTag: v2.4.0-rc1
transformers:
- flapp-services.yaml
`
			t["team-a/overlays/prod/kustomization.yaml"] = kustomizationHead + `resources:
- ../../base
components:
- ../../components/monitoring
- ../../components/gpu
namespace: team-a
patches:
` + workerReplicas("{kind: FLApp, labelSelector: tier=train}", 8) +
				jsonPatch("{kind: FLApp, labelSelector: priority=high}", "add", "/spec/flReplicaSpecs/Worker/template/spec/priorityClassName", "fl-high") + `configMapGenerator:
- name: trainer-config
  behavior: merge
  literals:
  - LOG_LEVEL=warn
replicas:
- name: data-portal
  count: 3
images:
- name: fedlearner/fedlearner
  newTag: v2.3.1
- name: fedlearner/fedlearner-web-console
  digest: sha256:8d4e2b1f6a3c5e7d9f0b2a4c6e8d0f1a3b5c7e9d1f3a5b7c9e1d3f5a7b9c1e3d
labels:
- pairs:
    environment: prod
transformers:
- flapp-services.yaml
`
		},
	}
}

// mlPipelines is a base composed with four components, and the entry in
// the overlay's transformers, after its namePrefix.
func mlPipelines() corpusLayout {
	return corpusLayout{
		roots: []CorpusRoot{{Root: "ml-pipelines/overlays/gpu", FLApps: 40,
			Input: "base (40 FLApp files, 3 Deployments); overlay: 4 components (labels, patches by kind and label), namespace, namePrefix, the entry after them"}},
		files: func(t tree, bin string) {
			fs := team("mlp", 40, "", "")
			files := t.flappFiles("ml-pipelines/base", fs)
			var b strings.Builder
			for d, name := range []string{"feature-store", "model-registry", "data-join"} {
				if d > 0 {
					b.WriteString("---\n")
				}
				deployment(&b, name, 1+d, "", "")
			}
			t["ml-pipelines/base/services.yaml"] = b.String()
			t["ml-pipelines/base/kustomization.yaml"] = kustomizationHead + list("resources", append(files, "services.yaml"))
			t["ml-pipelines/components/monitoring/kustomization.yaml"] = monitoringComponent()
			t["ml-pipelines/components/gpu/kustomization.yaml"] = componentHead + "patches:\n" + gpuPatch
			t["ml-pipelines/components/istio/kustomization.yaml"] = componentHead + "commonAnnotations:\n  networking.example.com/mesh: istio\npatches:\n" +
				templateAnnotations("{group: fedlearner.k8s.io, kind: FLApp}", `{sidecar.istio.io/inject: "false"}`)
			t["ml-pipelines/components/spot/kustomization.yaml"] = componentHead + "labels:\n- pairs:\n    cost-center: ml-research\npatches:\n" +
				jsonPatch("{kind: FLApp, labelSelector: \"tier=eval,accelerator=cpu\"}", "add", "/spec/flReplicaSpecs/Worker/template/spec/tolerations",
					"[{key: cloud.example.com/spot, operator: Exists, effect: NoSchedule}]") +
				jsonPatch("{kind: FLApp, labelSelector: priority=normal}", "add", "/spec/flReplicaSpecs/Worker/template/spec/priorityClassName", "fl-preemptible")
			t["ml-pipelines/overlays/gpu/kustomization.yaml"] = kustomizationHead + `resources:
- ../../base
namespace: ml-gpu
namePrefix: gpu-
components:
- ../../components/monitoring
- ../../components/gpu
- ../../components/istio
- ../../components/spot
transformers:
- flapp-services.yaml
`
			// The entry in the overlay's own transformers, which run after its
			// namePrefix: in a component it would run before the rename and
			// make Services the operator would not claim (the render refuses).
			t["ml-pipelines/overlays/gpu/flapp-services.yaml"] = functionEntry(bin)
		},
	}
}

// platformPerTeam is a cluster overlay over six team bases that each run
// the function themselves.
func platformPerTeam() corpusLayout {
	const teams, perTeam = 6, 10
	return corpusLayout{
		roots: []CorpusRoot{{Root: "platform-per-team/clusters/prod", FLApps: teams * perTeam,
			Input: "6 team bases (10 FLApp files each, namespace, commonLabels, a generated ConfigMap), each with the entry; cluster overlay: labels, commonAnnotations"}},
		files: func(t tree, bin string) {
			var bases []string
			for k := 0; k < teams; k++ {
				name := fmt.Sprintf("team-%02d", k)
				dir := "platform-per-team/teams/" + name
				files := t.flappFiles(dir, team(name, perTeam, "trainer-config", ""))
				t[dir+"/flapp-services.yaml"] = functionEntry(bin)
				t[dir+"/kustomizeconfig/flapp.yaml"] = flappNameReferences
				t[dir+"/kustomization.yaml"] = kustomizationHead + "namespace: " + name + "\ncommonLabels:\n  fedlearner.k8s.io/team: " + name + "\n" + list("resources", files) +
					"configMapGenerator:\n- name: trainer-config\n  literals:\n  - DATA_SOURCE=hdfs://namenode:8020/fl/" + name + "\nconfigurations:\n- kustomizeconfig/flapp.yaml\ntransformers:\n- flapp-services.yaml\n"
				bases = append(bases, "../../teams/"+name)
			}
			t["platform-per-team/clusters/prod/kustomization.yaml"] = kustomizationHead + list("resources", bases) +
				"labels:\n- pairs:\n    environment: prod\ncommonAnnotations:\n  platform.example.com/cluster: prod-eu-1\n"
		},
	}
}

// operator is an operator install: 200 CRDs as plain resources, the
// operator's Deployment and RBAC, and a few FLApps.
func operator() corpusLayout {
	return corpusLayout{
		roots: []CorpusRoot{{Root: "operator", FLApps: 3, Large: true,
			Input: "an operator install: 200 CRDs (5–16 kB each), its Deployment and RBAC, 3 FLApps; namespace, commonLabels, images; the entry"}},
		files: func(t tree, bin string) {
			crds := t.crdFiles("operator", 0, 200)
			var b strings.Builder
			b.WriteString("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: fedlearner-system\n---\n")
			rbac(&b)
			b.WriteString(`---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: fedlearner-operator
rules:
- apiGroups: [fedlearner.k8s.io]
  resources: [flapps, flapps/status, flapps/finalizers]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [""]
  resources: [pods, services, events, configmaps]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [apiextensions.k8s.io]
  resources: [customresourcedefinitions]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: fedlearner-operator
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: fedlearner-operator
subjects:
- kind: ServiceAccount
  name: fedlearner
  namespace: fedlearner-system
---
`)
			deployment(&b, "fedlearner-operator", 1, "", "")
			t["operator/manager/manager.yaml"] = strings.ReplaceAll(b.String(), "fedlearner/fedlearner-web-console:v2.3.0", "fedlearner/fedlearner-operator:v1.5.0")
			t["operator/jobs/flapps.yaml"] = stream(team("op", 3, "", ""))
			t["operator/flapp-services.yaml"] = functionEntry(bin)
			t["operator/kustomization.yaml"] = kustomizationHead + "namespace: fedlearner-system\ncommonLabels:\n  app.kubernetes.io/part-of: fedlearner\n" +
				list("resources", append(crds, "manager/manager.yaml", "jobs/flapps.yaml")) +
				"images:\n- name: fedlearner/fedlearner-operator\n  newTag: v1.5.2\ntransformers:\n- flapp-services.yaml\n"
		},
	}
}

// providerCloud is a provider's 200 CRDs in a base, and an overlay that
// patches them all by selector (a CA injection, a conversion webhook on
// some), with two FLApps.
func providerCloud() corpusLayout {
	return corpusLayout{
		roots: []CorpusRoot{{Root: "provider-cloud/overlays/prod", FLApps: 2, Large: true,
			Input: "base: 200 CRDs (5–16 kB each); overlay: patches by kind and label over all of them, labels, namespace, 2 FLApps; the entry"}},
		files: func(t tree, bin string) {
			crds := t.crdFiles("provider-cloud/base", 200, 400)
			t["provider-cloud/base/kustomization.yaml"] = kustomizationHead + "labels:\n- pairs:\n    app.kubernetes.io/managed-by: crossplane\n" + list("resources", crds)
			t["provider-cloud/overlays/prod/flapps.yaml"] = stream(team("provider", 2, "", ""))
			t["provider-cloud/overlays/prod/flapp-services.yaml"] = functionEntry(bin)
			t["provider-cloud/overlays/prod/kustomization.yaml"] = kustomizationHead + `resources:
- ../../base
- flapps.yaml
namespace: crossplane-system
labels:
- pairs:
    environment: prod
patches:
- target: {group: apiextensions.k8s.io, kind: CustomResourceDefinition}
  patch: |-
    - op: add
      path: /metadata/annotations/cert-manager.io~1inject-ca-from
      value: crossplane-system/provider-cloud-webhook
- target: {group: apiextensions.k8s.io, kind: CustomResourceDefinition, labelSelector: conversion=webhook}
  patch: |-
    - op: add
      path: /spec/conversion
      value:
        strategy: Webhook
        webhook:
          conversionReviewVersions: [v1]
          clientConfig:
            service: {name: provider-cloud-webhook, namespace: crossplane-system, path: /convert}
transformers:
- flapp-services.yaml
`
		},
	}
}

// platform is the large root: 200 FLApps across 10 team bases, aggregated
// by an overlay that patches them by kind and label and runs the function.
func platform() corpusLayout {
	const teams, perTeam = 10, 20
	return corpusLayout{
		roots: []CorpusRoot{{Root: "platform/overlays/prod", FLApps: teams * perTeam, Large: true,
			Input: "200 FLApp files across 10 team bases (namespace, labels with selectors, a generated ConfigMap each); overlay: labels, patches by kind and label, images; the entry"}},
		files: func(t tree, bin string) {
			var bases []string
			for k := 0; k < teams; k++ {
				name := fmt.Sprintf("team-%02d", k)
				dir := "platform/teams/" + name
				files := t.flappFiles(dir, team(name, perTeam, "trainer-config", ""))
				t[dir+"/kustomizeconfig/flapp.yaml"] = flappNameReferences
				t[dir+"/kustomization.yaml"] = kustomizationHead + "namespace: " + name + "\nlabels:\n- pairs:\n    fedlearner.k8s.io/team: " + name + "\n  includeSelectors: true\n" +
					list("resources", files) +
					"configMapGenerator:\n- name: trainer-config\n  literals:\n  - DATA_SOURCE=hdfs://namenode:8020/fl/" + name + "\nconfigurations:\n- kustomizeconfig/flapp.yaml\n"
				bases = append(bases, "../../teams/"+name)
			}
			t["platform/overlays/prod/flapp-services.yaml"] = functionEntry(bin)
			t["platform/overlays/prod/kustomization.yaml"] = kustomizationHead + list("resources", bases) + `labels:
- pairs:
    environment: prod
images:
- name: fedlearner/fedlearner
  newName: registry.example.com/fedlearner/fedlearner
  newTag: v2.4.0
patches:
` + jsonPatch("{kind: FLApp, labelSelector: priority=high}", "add", "/spec/flReplicaSpecs/Worker/template/spec/priorityClassName", "fl-high") +
				workerReplicas("{kind: FLApp, labelSelector: \"tier=eval\"}", 1) + gpuPatch + "transformers:\n- flapp-services.yaml\n"
		},
	}
}
