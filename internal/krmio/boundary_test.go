package krmio

import (
	"bytes"
	"errors"
	"testing"

	"github.com/fedlearner/flapp-services/fn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Boundaries of the stream I/O, expectations by hand from kio's rules.

// A separator line may carry a comment after "--- "; any other text is an
// error at the document it opens, on the separator's line.
func TestSplitDocumentsCommentedSeparator(t *testing.T) {
	docs, lines, err := splitDocuments("a: 1\n--- # two\nb: 2\n---\nc: 3\n", "f.yaml")
	require.NoError(t, err)
	assert.Equal(t, []string{"a: 1\n", "b: 2\n", "c: 3\n"}, docs)
	assert.Equal(t, []int{1, 3, 5}, lines)

	docs, _, err = splitDocuments("a: 1\n---#x\nb: 2\n", "f.yaml")
	require.NoError(t, err, "kio's rule: what follows the dashes, trimmed, starts with #")
	assert.Len(t, docs, 2)

	_, _, err = splitDocuments("a: 1\nb: 2\n--- c\nd: 3\n", "f.yaml")
	var in *fn.InputError
	require.True(t, errors.As(err, &in), "%v", err)
	assert.Equal(t, fn.Origin{File: "f.yaml", Document: 2, Line: 3}, in.Origin)
	assert.EqualError(t, in.Err, "invalid document separator: --- c")
}

func object(t *testing.T, file, text string) fn.Object {
	t.Helper()
	n, err := yaml.Parse(text)
	require.NoError(t, err)
	return fn.Object{Node: n, Origin: fn.Origin{File: file, Document: 1, Line: 1}}
}

// One object from a .json file and nothing generated: JSON, keys sorted,
// two-space indent (kio's shouldJSONEncodeSingleBareNode). Two objects, or
// one from a .yaml file: YAML.
func TestStreamWriterLoneJSON(t *testing.T) {
	const cm = `{"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "a"}}`
	write := func(objects ...fn.Object) string {
		w := NewStreamWriter()
		defer func() { require.NoError(t, w.Close()) }()
		for _, o := range objects {
			require.NoError(t, w.Add(o))
		}
		var buf bytes.Buffer
		require.NoError(t, w.WriteTo(&buf, nil))
		return buf.String()
	}
	assert.Equal(t, "{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"ConfigMap\",\n  \"metadata\": {\n    \"name\": \"a\"\n  }\n}\n", write(object(t, "dir/cm.json", cm)))
	assert.Equal(t, cm+"\n", write(object(t, "dir/cm.yaml", cm)))
	assert.Equal(t, cm+"\n---\n"+cm+"\n", write(object(t, "dir/cm.json", cm), object(t, "dir/cm.json", cm)))
}
