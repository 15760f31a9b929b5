package argocd

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/utils/kube"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
)

const helmPluginName = "flapp-services-helm"

// A chart that templates an FLApp (replicas from the values) next to a
// ConfigMap: Helm's output carries `# Source:` comments and `---` separators.
var chart = map[string]string{
	"Chart.yaml":      "apiVersion: v2\nname: mnist\nversion: 0.1.0\n",
	"values.yaml":     "workers: 2\nrole: Leader\n",
	"values-big.yaml": "workers: 4\n",
	"templates/flapp.yaml": `apiVersion: fedlearner.k8s.io/v1alpha1
kind: FLApp
metadata:
  name: {{ .Release.Name }}
  labels:
    helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
spec:
  role: {{ .Values.role }}
  peerSpecs:
    Follower: {peerURL: "fl-follower.example.com:443"}
  flReplicaSpecs:
    Worker:
      pair: true
      replicas: {{ .Values.workers }}
      template:
        spec:
          containers:
            - name: tensorflow
              image: fedlearner/fedlearner:v2.3.0
              ports:
                - {name: flapp-port, containerPort: 50051}
`,
	"templates/settings.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-settings\ndata:\n  workers: {{ .Values.workers | quote }}\n",
}

// examples/argocd/helm/plugin.yaml, in its own argocd-cmp-server with a real
// helm on PATH: `helm template … | flapp-services render -` through Argo CD.
func TestHelmVariant(t *testing.T) {
	helm := helmBinary(t)
	tmp, err := os.MkdirTemp("", "argocd-helm-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(tmp) })
	stop, err := startPlugin(context.Background(), tmp, pluginSpec{
		config: filepath.Join(env.repo, "examples", "argocd", "helm", "plugin.yaml"),
		name:   helmPluginName,
		tools:  map[string]string{"helm": helm},
		shell:  true,
	})
	require.NoError(t, err)
	t.Cleanup(stop)

	t.Run("examples/argocd/helm/application.yaml", func(t *testing.T) {
		data, err := os.ReadFile(filepath.Join(env.repo, "examples", "argocd", "helm", "application.yaml"))
		require.NoError(t, err)
		var app v1alpha1.Application
		require.NoError(t, yaml.UnmarshalStrict(data, &app))
		src := app.Spec.Source
		require.Equal(t, helmPluginName, src.Plugin.Name)
		root := t.TempDir()
		copyDir(t, filepath.Join(env.repo, filepath.FromSlash(src.Path)), filepath.Join(root, filepath.FromSlash(src.Path)))
		resp, err := generate(t, root, application{name: app.Name, namespace: app.Spec.Destination.Namespace, path: src.Path, plugin: src.Plugin})
		require.NoError(t, err)

		// What examples/helm's README runs by hand, with Helm 3's post-renderer.
		cmd := exec.Command(helm, "template", "mnist", src.Path, "--namespace", app.Spec.Destination.Namespace,
			"--values", filepath.Join(src.Path, "values.yaml"),
			"--post-renderer", env.flapp, "--post-renderer-args", "render", "--post-renderer-args", "-")
		cmd.Dir = root
		out, err := cmd.Output()
		require.NoError(t, err)
		objs, err := kube.SplitYAML(out)
		require.NoError(t, err)
		var want []any
		for _, o := range objs {
			want = append(want, normalise(t, o.Object))
		}
		assert.Equal(t, want, manifestValues(t, resp))
		assert.Equal(t, []string{"mnist-leader-master-0", "mnist-leader-worker-0", "mnist-leader-worker-1"}, serviceNames(objectsOf(t, resp)))
	})

	files := map[string]string{}
	for k, v := range chart {
		files["charts/mnist/"+k] = v
	}
	root := repoDir(t, files)
	plugin := namedPlugin(map[string]string{"HELM_RELEASE_NAME": "mnist"}, nil)
	plugin.Name = helmPluginName
	resp, err := generate(t, root, application{name: "mnist-leader", namespace: "fl", path: "charts/mnist", plugin: plugin})
	require.NoError(t, err)
	objs := objectsOf(t, resp)
	assert.Equal(t, []string{"mnist-leader-worker-0", "mnist-leader-worker-1"}, serviceNames(objs))
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, o.GetKind())
	}
	assert.Equal(t, []string{"ConfigMap", "FLApp", "Service", "Service"}, kinds, "Helm's objects, then the Services")

	// Values files from the plugin env.
	plugin.Env = append(plugin.Env, namedPlugin(map[string]string{"HELM_VALUES": "values-big.yaml"}, nil).Env...)
	resp, err = generate(t, root, application{name: "mnist-leader", namespace: "fl", path: "charts/mnist", plugin: plugin})
	require.NoError(t, err)
	assert.Len(t, serviceNames(objectsOf(t, resp)), 4)

	// A bad value: the render's reason, no manifests.
	require.NoError(t, os.WriteFile(filepath.Join(root, "charts/mnist/values.yaml"), []byte("workers: 2\nrole: Boss\n"), 0o644))
	resp, err = generate(t, root, application{name: "mnist-leader", namespace: "fl", path: "charts/mnist", plugin: namedPluginNamed(helmPluginName)})
	require.Error(t, err)
	assert.Nil(t, resp)
	assert.Contains(t, err.Error(), `spec.role: Invalid value: "Boss"`)

	// A chart helm cannot template fails with helm's reason (pipefail).
	require.NoError(t, os.WriteFile(filepath.Join(root, "charts/mnist/templates/broken.yaml"), []byte("{{ .Values.nope.deeper }}\n"), 0o644))
	resp, err = generate(t, root, application{name: "mnist-leader", namespace: "fl", path: "charts/mnist", plugin: namedPluginNamed(helmPluginName)})
	require.Error(t, err)
	assert.Nil(t, resp)
	assert.True(t, strings.Contains(err.Error(), "nil pointer") || strings.Contains(err.Error(), "broken.yaml"), err.Error())
}

func namedPluginNamed(name string) *v1alpha1.ApplicationSourcePlugin {
	p := namedPlugin(nil, nil)
	p.Name = name
	return p
}
