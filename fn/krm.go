package fn

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/fedlearner/flapp-services/internal/fastyaml"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ResourceList versions callers send; the answer uses the version received.
var resourceListVersions = []string{"config.kubernetes.io/v1", "config.kubernetes.io/v1beta1", "config.kubernetes.io/v1alpha1"}

// ErrFailed is returned after a failure has been fully reported (results and
// stderr); the caller only has to exit non-zero.
var ErrFailed = errors.New("flapp-services failed")

// RunKRM is the KRM function mode: a ResourceList on in, a ResourceList on
// out. The output is buffered and written whole, also on failure, when it is
// the input's items unchanged plus error results; errors also go to errOut.
func RunKRM(in io.Reader, out, errOut io.Writer) (err error) {
	var buf bytes.Buffer
	defer func() {
		// Last line of defence: a bug must fail closed, never exit 0.
		if r := recover(); r != nil {
			err = failKRM(out, errOut, "", fmt.Sprintf("internal error: %v", r))
		}
	}()
	rw := &kio.ByteReadWriter{Reader: in, Writer: &buf, KeepReaderAnnotations: true}
	var results framework.Results
	generate := func(rl *framework.ResourceList) ([]corev1.Service, error) {
		if msg := checkWrapper(rw); msg != "" {
			// Answer with a ResourceList all the same, holding the error.
			rw.WrappingKind, rw.WrappingAPIVersion = kio.ResourceListKind, kio.ResourceListAPIVersion
			rl.Results = framework.Results{runError(msg)}
			results = rl.Results
			return nil, results
		}
		services, err := generateFor(rl)
		results = rl.Results
		return services, err
	}
	execErr := fastyaml.Execute(generate, rw)
	if execErr != nil && buf.Len() == 0 {
		// Execute could not read the input at all.
		return failKRM(out, errOut, rw.WrappingAPIVersion, "input is not a readable ResourceList: "+execErr.Error())
	}
	if _, err := out.Write(buf.Bytes()); err != nil {
		return err
	}
	if execErr != nil {
		printErrors(errOut, results, execErr)
		return ErrFailed
	}
	PrintWarnings(errOut, results)
	return nil
}

func checkWrapper(rw *kio.ByteReadWriter) string {
	if rw.WrappingKind != kio.ResourceListKind {
		return "input is not a ResourceList (kind: ResourceList, apiVersion: config.kubernetes.io/v1): flapp-services reads a ResourceList on stdin; to render plain manifests, use 'flapp-services render PATH'"
	}
	if slices.Contains(resourceListVersions, rw.WrappingAPIVersion) {
		return ""
	}
	return fmt.Sprintf("unsupported ResourceList apiVersion %q: expected one of %s", rw.WrappingAPIVersion, strings.Join(resourceListVersions, ", "))
}

// failKRM answers input that could not be read with a ResourceList that
// holds only the error: there are no items to give back.
func failKRM(out, errOut io.Writer, apiVersion, msg string) error {
	if !slices.Contains(resourceListVersions, apiVersion) {
		apiVersion = kio.ResourceListAPIVersion
	}
	results := framework.Results{runError(msg)}
	b, err := yaml.Marshal(results)
	if err == nil {
		var node *yaml.RNode
		if node, err = yaml.Parse(string(b)); err == nil {
			w := kio.ByteWriter{Writer: out, WrappingKind: kio.ResourceListKind, WrappingAPIVersion: apiVersion, Results: node}
			err = w.Write(nil)
		}
	}
	PrintErrors(errOut, results)
	if err != nil {
		return err
	}
	return ErrFailed
}
