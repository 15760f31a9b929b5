package kustomize

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	h "github.com/fedlearner/flapp-services/test/integration/internal/harness"
)

// The side-by-side test: every kustomization below is built twice from the
// root of a temporary repository, by the real kustomize as an exec
// transformer (`kustomize build --enable-alpha-plugins --enable-exec DIR`)
// and by `flapp-services render DIR`, and the two must give the same
// objects, in the same order. Nothing is hard-coded: whatever kustomize
// prints is the expected result. Each case covers one kustomization feature
// that decides where the function runs among the transformers, or what
// happens to its Services afterwards.

// sideCase is one kustomization tree.
type sideCase struct {
	name  string
	dir   string            // the kustomization root built, relative to the repository root
	files map[string]string // the tree: path relative to the repository root -> content
	// shows are strings kustomize build's output must hold: the case
	// exercises its feature (a guard on the case, not an expected output).
	shows []string
	lacks []string // and strings it must not hold
	// refused, when set, is what the render says instead of an output: the
	// one place it differs from kustomize on purpose (README.md,
	// "Kustomizations"). kustomize outputs Services a later transformer
	// changed into ones the fedlearner operator would not make or claim
	// (renamed, relabelled, or made for an FLApp scaled since); the render
	// refuses.
	refused string
}

// fnBin is where the sandbox puts the binary; entries name it by a path
// relative to the directory kustomize runs them from.
const fnBin = "bin/flapp-services"

// execPath is fnBin relative to dir (both relative to the repository root):
// kustomize runs an exec function in the directory of the kustomization
// whose transformers: list reaches its entry.
func execPath(dir string) string {
	rel, err := filepath.Rel(dir, fnBin)
	if err != nil {
		panic(err)
	}
	return filepath.ToSlash(rel)
}

// entry is a flapp-services transformer entry named name (a ConfigMap, like
// examples/kustomize/leader/flapp-services.yaml, in the exec form), for
// kustomize to run from the directory dir.
func entry(dir, name string) string {
	return `apiVersion: v1
kind: ConfigMap
metadata:
  name: ` + name + `
  annotations:
    config.kubernetes.io/function: |
      exec:
        path: ` + execPath(dir) + `
data:
  ownerReferences: Never
`
}

// flappYAML is the leader FLApp of examples/kustomize/leader, its Master
// and Worker types only, named name, with workers Worker replicas.
func flappYAML(name string, workers int) string {
	return fmt.Sprintf(`apiVersion: fedlearner.k8s.io/v1alpha1
kind: FLApp
metadata:
  name: %s
spec:
  role: Leader
  cleanPodPolicy: All
  peerSpecs:
    Follower:
      peerURL: fedlearner-stack-ingress-nginx-controller.fl-follower.svc:80
      authority: mnist-follower.fl.example.com
  flReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          restartPolicy: Never
          containers:
            - name: tensorflow
              image: fedlearner/fedlearner:v2.3.0
              ports:
                - name: flapp-port
                  containerPort: 50051
    Worker:
      pair: true
      replicas: %d
      template:
        spec:
          restartPolicy: Never
          containers:
            - name: tensorflow
              image: fedlearner/fedlearner:v2.3.0
              ports:
                - name: flapp-port
                  containerPort: 50051
                - name: tf-port
                  containerPort: 50052
`, name, workers)
}

// prefixYAML is a builtin PrefixSuffixTransformer adding prefix to names.
func prefixYAML(prefix string) string {
	return `apiVersion: builtin
kind: PrefixSuffixTransformer
metadata:
  name: prefix-` + strings.TrimSuffix(prefix, "-") + `
prefix: ` + prefix + `
fieldSpecs:
  - path: metadata/name
`
}

// kustomization is a Kustomization file with body.
func kustomization(body string) string {
	return "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n" + body
}

// component is a Component file with body.
func component(body string) string {
	return "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n" + body
}

// plainApp is app/: the FLApp and the entry, with the kustomization body.
func plainApp(body string) map[string]string {
	return map[string]string{
		"app/flapp.yaml":          flappYAML("mnist", 2),
		"app/flapp-services.yaml": entry("app", "flapp-services"),
		"app/kustomization.yaml":  kustomization(body),
	}
}

const plainBody = `resources:
  - flapp.yaml
transformers:
  - flapp-services.yaml
`

// with adds files to a tree.
func with(files map[string]string, more map[string]string) map[string]string {
	for k, v := range more {
		files[k] = v
	}
	return files
}

// scaleWorkersPatch is a patch of the FLApp's Worker replicas, selected by
// kind.
func scaleWorkersPatch(n int) string {
	return fmt.Sprintf(`patches:
  - target:
      kind: FLApp
    patch: |-
      - op: replace
        path: /spec/flReplicaSpecs/Worker/replicas
        value: %d
`, n)
}

// crdDefinitions is a `crds:` file in the format kustomize reads there
// (OpenAPI definitions by type name; a CustomResourceDefinition object such
// as examples/crd/flapp-crd.yaml fails the build): FLApp's
// spec.ingressSpec.secretName refers to a Secret, so a generated Secret's
// hashed name reaches it.
const crdDefinitions = `github.com/bytedance/fedlearner/v1alpha1.FLApp:
  Schema:
    description: FLApp
    properties:
      apiVersion:
        type: string
      kind:
        type: string
      metadata:
        $ref: k8s.io/apimachinery/pkg/apis/meta/v1.ObjectMeta
      spec:
        $ref: github.com/bytedance/fedlearner/v1alpha1.FLAppSpec
github.com/bytedance/fedlearner/v1alpha1.FLAppSpec:
  Schema:
    properties:
      ingressSpec:
        x-kubernetes-object-ref-api-version: v1
        x-kubernetes-object-ref-kind: Secret
        x-kubernetes-object-ref-name-key: secretName
        type: object
`

// openAPISchema is a tiny `openapi: path:` schema (it replaces kustomize's
// builtin one): FLApp's containers merge by name and their ports by
// containerPort in a strategic merge patch (without it, the patch would
// replace the whole container list).
const openAPISchema = `{
  "definitions": {
    "io.k8s.fedlearner.v1alpha1.FLApp": {
      "type": "object",
      "x-kubernetes-group-version-kind": [{"group": "fedlearner.k8s.io", "kind": "FLApp", "version": "v1alpha1"}],
      "properties": {
        "spec": {"type": "object", "properties": {"flReplicaSpecs": {"type": "object",
          "additionalProperties": {"type": "object", "properties": {"template": {"type": "object",
            "properties": {"spec": {"$ref": "#/definitions/podSpec"}}}}}}}}
      }
    },
    "podSpec": {
      "type": "object",
      "properties": {
        "containers": {
          "type": "array", "x-kubernetes-patch-merge-key": "name", "x-kubernetes-patch-strategy": "merge",
          "items": {"type": "object", "properties": {"ports": {
            "type": "array", "x-kubernetes-patch-merge-key": "containerPort", "x-kubernetes-patch-strategy": "merge",
            "items": {"type": "object"}}}}
        }
      }
    }
  }
}
`

// annotateServices is a transformers: item, an inline builtin
// PatchTransformer annotating every Service.
const annotateServices = `  - |-
    apiVersion: builtin
    kind: PatchTransformer
    metadata:
      name: annotate-services
    target:
      kind: Service
    patch: |-
      - op: add
        path: /metadata/annotations/patched
        value: late
`

// nameReferenceConfig is a `configurations:` file: the FLApp's pod
// templates refer to ConfigMaps (so a generated one's hashed name reaches
// them) and the kustomization's labels land in the Worker's pod template.
const nameReferenceConfig = `nameReference:
  - kind: ConfigMap
    version: v1
    fieldSpecs:
      - kind: FLApp
        path: spec/flReplicaSpecs/Worker/template/spec/volumes/configMap/name
commonLabels:
  - kind: FLApp
    path: spec/flReplicaSpecs/Worker/template/metadata/labels
    create: true
`

// flappWithConfigMap is the FLApp with a volume from the ConfigMap settings.
func flappWithConfigMap() string {
	return strings.Replace(flappYAML("mnist", 2), `    Worker:
      pair: true
      replicas: 2
      template:
        spec:
          restartPolicy: Never
`, `    Worker:
      pair: true
      replicas: 2
      template:
        spec:
          restartPolicy: Never
          volumes:
            - name: settings
              configMap:
                name: settings
`, 1)
}

// buildMetadataShows is what each buildMetadata option adds to kustomize
// build's output.
var buildMetadataShows = map[string]string{
	"originAnnotations":      "config.kubernetes.io/origin:",
	"managedByLabel":         "app.kubernetes.io/managed-by: kustomize-",
	"transformerAnnotations": "alpha.config.kubernetes.io/transformations:",
}

func sideBySideCases() []sideCase {
	cases := []sideCase{
		{name: "plain", dir: "app", shows: []string{"name: mnist-leader-worker-1"}, files: plainApp(plainBody)},
	}

	for _, md := range [][]string{
		{"originAnnotations"},
		{"managedByLabel"},
		{"transformerAnnotations"},
		{"originAnnotations", "managedByLabel", "transformerAnnotations"},
	} {
		name := "buildMetadata/" + strings.Join(md, "+")
		if len(md) == 3 {
			name = "buildMetadata/all"
		}
		var want []string
		for _, m := range md {
			want = append(want, buildMetadataShows[m])
		}
		cases = append(cases, sideCase{name: name, dir: "app", shows: want,
			files: plainApp(plainBody + "buildMetadata: [" + strings.Join(md, ", ") + "]\n")})
	}

	cases = append(cases,
		// kustomize renames the Services after the function made them: they
		// keep app-name: mnist, and the operator labels late-mnist's pods
		// app-name: late-mnist.
		sideCase{name: "builtin transformer after the function", dir: "app", shows: []string{"name: late-mnist-leader-master-0", "app-name: mnist\n"},
			refused: "Service late-mnist-leader-master-0: metadata.labels[app-name]: \"mnist\", a Service of FLApp late-mnist, would not work beside the fedlearner operator: the operator claims only Services labelled app-name: late-mnist, role: leader; changed after the flapp-services entry that made it, by transformers[1] in app/kustomization.yaml",
			files: with(plainApp(`resources:
  - flapp.yaml
transformers:
  - flapp-services.yaml
  - prefix.yaml
`), map[string]string{"app/prefix.yaml": prefixYAML("late-")})},

		sideCase{name: "builtin transformer before the function", dir: "app", shows: []string{"name: early-mnist-leader-master-0", "app-name: early-mnist"},
			files: with(plainApp(`resources:
  - flapp.yaml
transformers:
  - prefix.yaml
  - flapp-services.yaml
`), map[string]string{"app/prefix.yaml": prefixYAML("early-")})},

		sideCase{name: "namePrefix commonLabels namespace beside the entry", dir: "app", shows: []string{"namespace: fl-team-a", "app-name: team-a-mnist", "team: a"},
			files: plainApp(`namespace: fl-team-a
namePrefix: team-a-
commonLabels:
  team: a
` + plainBody)},

		sideCase{name: "overlay renaming an FLApp its base rendered", dir: "overlay", shows: []string{"name: staging-mnist-leader-worker-1", "namespace: fl-staging", "app-name: mnist"},
			refused: "Service fl-staging/staging-mnist-leader-worker-1: spec.selector[app-name]: \"mnist\", a Service of FLApp fl-staging/staging-mnist, would not work beside the fedlearner operator: the operator labels this replica's pod {app-name: staging-mnist, fl-replica-index: 1, fl-replica-type: worker, role: leader}: the Service selects no pod; changed after the flapp-services entry that made it, by namePrefix in overlay/kustomization.yaml",
			files: map[string]string{
				"base/flapp.yaml":          flappYAML("mnist", 2),
				"base/flapp-services.yaml": entry("base", "flapp-services"),
				"base/kustomization.yaml":  kustomization(plainBody),
				"overlay/kustomization.yaml": kustomization(`resources:
  - ../base
namePrefix: staging-
namespace: fl-staging
`),
			}},

		// kustomize outputs 3 Workers and the 2 Services the base made for
		// 2; a GitOps engine would prune the third's live Service.
		sideCase{name: "overlay scaling an FLApp its base rendered", dir: "overlay", shows: []string{"replicas: 3", "name: mnist-leader-worker-1"}, lacks: []string{"name: mnist-leader-worker-2"},
			refused: "FLApp fl-staging/mnist needs Service fl-staging/mnist-leader-worker-2, which the build's output lacks; changed after the flapp-services entry that made it, by patches in overlay/kustomization.yaml: list the flapp-services entry in the transformers of overlay/kustomization.yaml, after that change",
			files: map[string]string{
				"base/flapp.yaml":          flappYAML("mnist", 2),
				"base/flapp-services.yaml": entry("base", "flapp-services"),
				"base/kustomization.yaml":  kustomization(plainBody),
				"overlay/kustomization.yaml": kustomization(`resources:
  - ../base
namespace: fl-staging
` + scaleWorkersPatch(3)),
			}},

		// The fix: the overlay runs the function again.
		sideCase{name: "overlay scaling an FLApp and running the function again", dir: "overlay", shows: []string{"replicas: 3", "name: mnist-leader-worker-2"},
			files: map[string]string{
				"base/flapp.yaml":             flappYAML("mnist", 2),
				"base/flapp-services.yaml":    entry("base", "flapp-services"),
				"base/kustomization.yaml":     kustomization(plainBody),
				"overlay/flapp-services.yaml": entry("overlay", "flapp-services"),
				"overlay/kustomization.yaml": kustomization(`resources:
  - ../base
namespace: fl-staging
transformers:
  - flapp-services.yaml
` + scaleWorkersPatch(3)),
			}},

		// kustomize builds fns/ as a kustomization for the entries it holds
		// and runs them from app/, the kustomization that lists fns.
		sideCase{name: "entry reached through a directory", dir: "app", shows: []string{"name: mnist-leader-worker-1"},
			files: map[string]string{
				"app/flapp.yaml":              flappYAML("mnist", 2),
				"app/fns/flapp-services.yaml": entry("app", "flapp-services"),
				"app/fns/kustomization.yaml":  kustomization("resources:\n  - flapp-services.yaml\n"),
				"app/kustomization.yaml":      kustomization("resources:\n  - flapp.yaml\ntransformers:\n  - fns\n"),
			}},

		sideCase{name: "component adding the entry", dir: "app", shows: []string{"name: mnist-leader-worker-1"},
			files: map[string]string{
				"app/flapp.yaml":         flappYAML("mnist", 2),
				"app/kustomization.yaml": kustomization("resources:\n  - flapp.yaml\ncomponents:\n  - ../fn\n"),
				"fn/flapp-services.yaml": entry("fn", "flapp-services"),
				"fn/kustomization.yaml":  component("transformers:\n  - flapp-services.yaml\n"),
			}},

		sideCase{name: "component patching the FLApp", dir: "app", shows: []string{"name: mnist-leader-worker-3"},
			files: with(plainApp(`resources:
  - flapp.yaml
components:
  - ../scale
transformers:
  - flapp-services.yaml
`), map[string]string{"scale/kustomization.yaml": component(scaleWorkersPatch(4))})},

		sideCase{name: "replacements", dir: "app", shows: []string{"name: mnist-leader-worker-2", "team: a"},
			files: with(plainApp(`resources:
  - flapp.yaml
  - team.yaml
replacements:
  - source:
      kind: ConfigMap
      name: team
      fieldPath: data.team
    targets:
      - select:
          kind: FLApp
        fieldPaths:
          - metadata.labels.team
        options:
          create: true
  - source:
      kind: ConfigMap
      name: team
      fieldPath: data.workers
    targets:
      - select:
          kind: FLApp
        fieldPaths:
          - spec.flReplicaSpecs.Worker.replicas
transformers:
  - flapp-services.yaml
`), map[string]string{"app/team.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: team\ndata:\n  team: a\n  workers: \"3\"\n"})},

		sideCase{name: "configurations", dir: "app", shows: []string{"name: settings-fc8d24ffm6", "team: a"},
			files: with(plainApp(`resources:
  - flapp.yaml
configurations:
  - flapp-config.yaml
commonLabels:
  team: a
configMapGenerator:
  - name: settings
    literals:
      - learningRate=0.01
transformers:
  - flapp-services.yaml
`), map[string]string{
				"app/flapp.yaml":        flappWithConfigMap(),
				"app/flapp-config.yaml": nameReferenceConfig,
			})},

		sideCase{name: "crds", dir: "app", shows: []string{"secretName: p-ingress-tls-"},
			files: with(plainApp(`resources:
  - flapp.yaml
crds:
  - flapp-definitions.yaml
secretGenerator:
  - name: ingress-tls
    literals:
      - tls.crt=x
namePrefix: p-
transformers:
  - flapp-services.yaml
`), map[string]string{
				"app/flapp.yaml": strings.Replace(flappYAML("mnist", 2), "  cleanPodPolicy: All\n",
					"  cleanPodPolicy: All\n  ingressSpec:\n    secretName: ingress-tls\n", 1),
				"app/flapp-definitions.yaml": crdDefinitions,
			})},

		sideCase{name: "openapi", dir: "app", shows: []string{"targetPort: extra-port", "targetPort: tf-port"},
			files: with(plainApp(`resources:
  - flapp.yaml
openapi:
  path: schema.json
patches:
  - patch: |-
      apiVersion: fedlearner.k8s.io/v1alpha1
      kind: FLApp
      metadata:
        name: mnist
      spec:
        flReplicaSpecs:
          Worker:
            template:
              spec:
                containers:
                  - name: tensorflow
                    ports:
                      - name: extra-port
                        containerPort: 50053
transformers:
  - flapp-services.yaml
`), map[string]string{"app/schema.json": openAPISchema})},

		sideCase{name: "sortOptions fifo", dir: "app", shows: []string{"name: mnist-leader-worker-1"},
			files: with(plainApp(`resources:
  - before.yaml
  - flapp.yaml
  - after.yaml
sortOptions:
  order: fifo
transformers:
  - flapp-services.yaml
`), map[string]string{
				"app/before.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: before\n",
				"app/after.yaml":  "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: after\n",
			})},

		sideCase{name: "sortOptions legacy orderFirst orderLast", dir: "app", shows: []string{"name: mnist-leader-worker-1"},
			files: with(plainApp(`resources:
  - cm.yaml
  - flapp.yaml
sortOptions:
  order: legacy
  legacySortOptions:
    orderFirst:
      - FLApp
      - ConfigMap
    orderLast:
      - Service
transformers:
  - flapp-services.yaml
`), map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n"})},

		sideCase{name: "inline entry", dir: "app", shows: []string{"name: mnist-leader-worker-1"},
			files: map[string]string{
				"app/flapp.yaml": flappYAML("mnist", 2),
				"app/kustomization.yaml": kustomization("resources:\n  - flapp.yaml\ntransformers:\n  - |-\n" +
					indent(entry("app", "flapp-services"), "    ")),
			}},

		sideCase{name: "inline patch", dir: "app", shows: []string{"tier: inline", "name: mnist-leader-worker-0"},
			files: plainApp(`resources:
  - flapp.yaml
patches:
  - target:
      group: fedlearner.k8s.io
      kind: FLApp
      name: mnist
    patch: |-
      - op: replace
        path: /spec/flReplicaSpecs/Worker/replicas
        value: 1
      - op: add
        path: /metadata/labels
        value: {tier: inline}
transformers:
  - flapp-services.yaml
`)},

		// kustomize reads a kustomization's inline transformers before the
		// files it lists, whatever the order of the list: this patch runs
		// before the function and finds no Service.
		sideCase{name: "inline builtin patch listed after a file entry", dir: "app",
			shows: []string{"name: mnist-leader-worker-1"}, lacks: []string{"patched: late"},
			files: plainApp(`resources:
  - flapp.yaml
transformers:
  - flapp-services.yaml
` + annotateServices)},

		sideCase{name: "inline entry then inline builtin patch", dir: "app", shows: []string{"patched: late"},
			files: map[string]string{
				"app/flapp.yaml": flappYAML("mnist", 2),
				"app/kustomization.yaml": kustomization("resources:\n  - flapp.yaml\ntransformers:\n  - |-\n" +
					indent(entry("app", "flapp-services"), "    ") + annotateServices),
			}},

		// The overlay's entry sees the base's Services (they carry the
		// marker label), prunes Worker 1 and regenerates the rest.
		sideCase{name: "entries in a base and in the overlay", dir: "overlay",
			shows: []string{"environment: staging", "name: mnist-leader-worker-0"}, lacks: []string{"name: mnist-leader-worker-1"},
			files: map[string]string{
				"base/flapp.yaml":             flappYAML("mnist", 2),
				"base/flapp-services.yaml":    entry("base", "flapp-services"),
				"base/kustomization.yaml":     kustomization("namespace: fl-leader\n" + plainBody),
				"overlay/flapp-services.yaml": entry("overlay", "flapp-services"),
				"overlay/kustomization.yaml": kustomization(`resources:
  - ../base
labels:
  - pairs:
      environment: staging
` + scaleWorkersPatch(1) + `transformers:
  - flapp-services.yaml
`),
			}},

		// The overlay's entry replaces the base's Services: kustomize keeps
		// each in the place of the one it replaces (fifo shows it), and a
		// Service of the repository's own sits among them.
		sideCase{name: "entries in a base and in a fifo overlay, beside a Service of its own", dir: "overlay",
			shows: []string{"name: mnist-leader-worker-2", "name: mnist-leader-other"},
			files: map[string]string{
				"base/flapp.yaml":          flappYAML("mnist", 2),
				"base/flapp-services.yaml": entry("base", "flapp-services"),
				"base/kustomization.yaml":  kustomization("namespace: fl-leader\n" + plainBody),
				"overlay/other.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: mnist-leader-other\n  namespace: fl-leader\n" +
					"spec:\n  ports:\n  - port: 80\n",
				"overlay/flapp-services.yaml": entry("overlay", "flapp-services"),
				"overlay/kustomization.yaml": kustomization(`resources:
  - other.yaml
  - ../base
sortOptions:
  order: fifo
` + scaleWorkersPatch(3) + `transformers:
  - flapp-services.yaml
`),
			}},

		// kustomize's legacy order puts the root's last entry's Services
		// among the repository's own, by name.
		sideCase{name: "a Service of the repository's own among the generated ones", dir: "app",
			shows: []string{"name: mnist-leader-other", "name: mnist-leader-worker-1"},
			files: with(plainApp(`resources:
  - flapp.yaml
  - other.yaml
transformers:
  - flapp-services.yaml
`), map[string]string{"app/other.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: mnist-leader-other\nspec:\n  ports:\n  - port: 80\n"})},

		sideCase{name: "two entries in one kustomization", dir: "app", shows: []string{"name: mnist-leader-worker-1"},
			files: with(plainApp(`resources:
  - flapp.yaml
transformers:
  - flapp-services.yaml
  - flapp-services-again.yaml
`), map[string]string{"app/flapp-services-again.yaml": entry("app", "flapp-services-again")})},

		sideCase{name: "configMapGenerator with a hash referenced by the FLApp", dir: "app", shows: []string{"name: x-settings-"},
			files: with(plainApp(`resources:
  - flapp.yaml
configurations:
  - flapp-config.yaml
namePrefix: x-
configMapGenerator:
  - name: settings
    literals:
      - learningRate=0.01
transformers:
  - flapp-services.yaml
`), map[string]string{
				"app/flapp.yaml":        flappWithConfigMap(),
				"app/flapp-config.yaml": nameReferenceConfig,
			})},
	)
	return cases
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n") + "\n"
}

// TestSideBySide builds every case with the real kustomize and with
// `flapp-services render`: the objects must be the same, in the same order.
func TestSideBySide(t *testing.T) {
	kust := kustomize(t)
	bin := h.Binary(t)
	for _, c := range sideBySideCases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			root := h.Sandbox(t)
			for p, content := range c.files {
				full := filepath.Join(root, filepath.FromSlash(p))
				require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
				require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
			}

			want := h.Run(t, root, nil, kust, "build", "--enable-alpha-plugins", "--enable-exec", c.dir)
			require.Equal(t, 0, want.ExitCode,
				"the case is wrong: kustomize build %s failed:\n%s", c.dir, want.Stderr)
			for _, s := range c.shows {
				if !strings.Contains(want.Stdout, s) {
					t.Fatalf("the case is wrong: the output of kustomize build %s does not hold %q:\n%s", c.dir, s, want.Stdout)
				}
			}
			for _, s := range c.lacks {
				if strings.Contains(want.Stdout, s) {
					t.Fatalf("the case is wrong: the output of kustomize build %s holds %q:\n%s", c.dir, s, want.Stdout)
				}
			}
			wantObjs := h.MustParseObjects(t, []byte(want.Stdout))
			require.NotEmpty(t, wantObjs, "kustomize build %s printed no objects", c.dir)

			got := h.Run(t, root, nil, bin, "render", c.dir)
			if c.refused != "" {
				assert.Equal(t, 1, got.ExitCode, "kustomize build gave %d objects (%s)", len(wantObjs), strings.Join(keys(wantObjs), ", "))
				assert.Empty(t, got.Stdout)
				assert.Contains(t, got.Stderr, c.refused)
				return
			}
			if got.ExitCode != 0 {
				t.Fatalf("flapp-services render %s: exit %d, kustomize build gave %d objects (%s)\nstderr:\n%s",
					c.dir, got.ExitCode, len(wantObjs), strings.Join(keys(wantObjs), ", "), got.Stderr)
			}
			gotObjs := h.MustParseObjects(t, []byte(got.Stdout))
			if report := compareObjects(wantObjs, gotObjs); report != "" {
				t.Errorf("flapp-services render %s differs from kustomize build --enable-alpha-plugins --enable-exec %s:\n%s",
					c.dir, c.dir, report)
			}
		})
	}
}

// keys names each object (h.Key), a repeated name numbered.
func keys(objs []h.Object) []string {
	seen := map[string]int{}
	out := make([]string, len(objs))
	for i, o := range objs {
		k := h.Key(o)
		if av, _ := o["apiVersion"].(string); strings.Contains(av, "/") {
			k = strings.SplitN(av, "/", 2)[0] + " " + k
		}
		seen[k]++
		if n := seen[k]; n > 1 {
			k = fmt.Sprintf("%s (#%d)", k, n)
		}
		out[i] = k
	}
	return out
}

// compareObjects compares the objects of kustomize build (want) and of the
// render (got): in order first, then as a set. It returns "" when they are
// the same list, or a report: its first line is the first difference, then
// the objects only one side has, every object that differs with the fields
// that differ (the first in full), and the orders.
func compareObjects(want, got []h.Object) string {
	if reflect.DeepEqual(want, got) {
		return ""
	}
	wk, gk := keys(want), keys(got)
	wantBy, gotBy := map[string]h.Object{}, map[string]h.Object{}
	for i, k := range wk {
		wantBy[k] = want[i]
	}
	for i, k := range gk {
		gotBy[k] = got[i]
	}
	var onlyWant, onlyGot, differ []string
	for _, k := range wk {
		g, ok := gotBy[k]
		switch {
		case !ok:
			onlyWant = append(onlyWant, k)
		case !reflect.DeepEqual(wantBy[k], g):
			differ = append(differ, k)
		}
	}
	for _, k := range gk {
		if _, ok := wantBy[k]; !ok {
			onlyGot = append(onlyGot, k)
		}
	}

	var b strings.Builder
	// The first line: the first difference.
	switch {
	case len(differ) > 0:
		lines := fieldDiff(wantBy[differ[0]], gotBy[differ[0]])
		fmt.Fprintf(&b, "FIRST DIFFERENCE: %s: %s", differ[0], lines[0])
		if len(lines) > 1 {
			fmt.Fprintf(&b, " (and %d more field(s))", len(lines)-1)
		}
		if len(differ) > 1 {
			fmt.Fprintf(&b, "; %d more object(s) differ", len(differ)-1)
		}
		if len(onlyWant)+len(onlyGot) > 0 {
			fmt.Fprintf(&b, "; %d object(s) only in kustomize, %d only in render", len(onlyWant), len(onlyGot))
		}
		b.WriteString("\n")
	case len(onlyWant)+len(onlyGot) > 0:
		fmt.Fprintf(&b, "FIRST DIFFERENCE: objects only in kustomize build: %s; only in render: %s\n",
			listOrNone(onlyWant), listOrNone(onlyGot))
	default:
		i := 0
		for i < len(wk) && wk[i] == gk[i] {
			i++
		}
		fmt.Fprintf(&b, "FIRST DIFFERENCE: the same %d objects in another order: at position %d kustomize has %s, render has %s\n",
			len(wk), i, wk[i], gk[i])
	}

	fmt.Fprintf(&b, "kustomize build: %d objects, render: %d objects\n", len(want), len(got))
	if len(onlyWant) > 0 {
		fmt.Fprintf(&b, "only in kustomize build (%d):\n", len(onlyWant))
		for _, k := range onlyWant {
			fmt.Fprintf(&b, "  %s\n", k)
		}
	}
	if len(onlyGot) > 0 {
		fmt.Fprintf(&b, "only in render (%d):\n", len(onlyGot))
		for _, k := range onlyGot {
			fmt.Fprintf(&b, "  %s\n", k)
		}
	}
	if len(differ) > 0 {
		fmt.Fprintf(&b, "in both, different (%d):\n", len(differ))
		for _, k := range differ {
			fmt.Fprintf(&b, "  %s:\n", k)
			for _, l := range fieldDiff(wantBy[k], gotBy[k]) {
				fmt.Fprintf(&b, "    %s\n", l)
			}
		}
		fmt.Fprintf(&b, "%s as kustomize build gives it:\n%s", differ[0], indent(toYAML(wantBy[differ[0]]), "  | "))
		fmt.Fprintf(&b, "%s as render gives it:\n%s", differ[0], indent(toYAML(gotBy[differ[0]]), "  | "))
	}
	if !reflect.DeepEqual(common(wk, gotBy), common(gk, wantBy)) {
		b.WriteString("order of the objects both have differs:\n")
	} else {
		b.WriteString("order:\n")
	}
	fmt.Fprintf(&b, "  kustomize build: %s\n", strings.Join(wk, ", "))
	fmt.Fprintf(&b, "  render:          %s\n", strings.Join(gk, ", "))
	return b.String()
}

// common is the keys of ks that other has, in order.
func common(ks []string, other map[string]h.Object) []string {
	var out []string
	for _, k := range ks {
		if _, ok := other[k]; ok {
			out = append(out, k)
		}
	}
	return out
}

func listOrNone(ks []string) string {
	if len(ks) == 0 {
		return "none"
	}
	return strings.Join(ks, ", ")
}

// fieldDiff lists the fields in which want (kustomize build) and got (the
// render) differ, one line each: path, then both values.
func fieldDiff(want, got any) []string {
	var out []string
	walkDiff("", want, got, &out)
	if len(out) == 0 {
		out = append(out, "(no field differs, but the values' types do)")
	}
	return out
}

const absent = "<absent>"

var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

func walkDiff(path string, want, got any, out *[]string) {
	if reflect.DeepEqual(want, got) {
		return
	}
	wm, wIsMap := want.(map[string]any)
	gm, gIsMap := got.(map[string]any)
	if wIsMap && gIsMap {
		all := map[string]bool{}
		for k := range wm {
			all[k] = true
		}
		for k := range gm {
			all[k] = true
		}
		ks := make([]string, 0, len(all))
		for k := range all {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		for _, k := range ks {
			p := path + "." + k
			if !plainKey.MatchString(k) {
				p = fmt.Sprintf("%s[%q]", path, k)
			}
			w, wok := wm[k]
			g, gok := gm[k]
			switch {
			case !wok:
				*out = append(*out, fmt.Sprintf("%s: kustomize %s, render %s", strings.TrimPrefix(p, "."), absent, show(g)))
			case !gok:
				*out = append(*out, fmt.Sprintf("%s: kustomize %s, render %s", strings.TrimPrefix(p, "."), show(w), absent))
			default:
				walkDiff(p, w, g, out)
			}
		}
		return
	}
	wl, wIsList := want.([]any)
	gl, gIsList := got.([]any)
	if wIsList && gIsList && len(wl) == len(gl) {
		for i := range wl {
			walkDiff(fmt.Sprintf("%s[%d]", path, i), wl[i], gl[i], out)
		}
		return
	}
	*out = append(*out, fmt.Sprintf("%s: kustomize %s, render %s", strings.TrimPrefix(path, "."), show(want), show(got)))
}

// show is a value as compact JSON, cut at 300 bytes.
func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}

func toYAML(o h.Object) string {
	b, err := yaml.Marshal(o)
	if err != nil {
		return fmt.Sprint(o)
	}
	return string(b)
}
