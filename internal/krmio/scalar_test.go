package krmio

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedlearner/flapp-services/fn"
	"github.com/fedlearner/flapp-services/fn/fntest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// fastAlphabet is the alphabet of the strings scalarForm decides by itself
// (after a letter, or digits alone, or a UUID).
const fastAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._/"

// TestScalarFormYAML11 holds scalarForm's quoting to kyaml's rule without
// running it: every string it decides is quoted exactly when
// yaml.IsValueNonString (a YAML 1.1 parse) says a plain one would read as
// another type. The strings: every one of up to 3 characters of
// fastAlphabet, every case spelling of yaml.v2's bool/null words and every
// string one edit away from them (the only words of 4 or 5 letters that
// qualify), all digit strings of up to 4, random UUIDs, the encoder tests'
// strings, random ones, and every string of every Service the golden
// cases generate.
func TestScalarFormYAML11(t *testing.T) {
	strs := shortStrings(3)
	for _, w := range []string{"y", "yes", "n", "no", "true", "false", "on", "off", "null"} {
		for _, v := range caseSpellings(w) {
			strs = append(strs, v)
			strs = append(strs, oneEditAway(v)...)
		}
	}
	for n := 1; n <= 4; n++ {
		for i := 0; i < pow(10, n); i++ {
			strs = append(strs, fmt.Sprintf("%0*d", n, i))
		}
	}
	rnd := rand.New(rand.NewSource(17))
	for i := 0; i < 2000; i++ {
		strs = append(strs, randomUUID(rnd))
	}
	strs = append(strs, trickyStrings...)
	strs = append(strs, ordinaryStrings...)
	for _, ordinary := range []bool{true, false} {
		ordinaryOnly = ordinary
		for i := 0; i < 20000; i++ {
			strs = append(strs, randomString(rnd))
		}
	}
	ordinaryOnly = false
	strs = append(strs, goldenServiceStrings(t)...)

	decided := 0
	for _, s := range strs {
		form := scalarForm(s, false)
		if form == formUnknown {
			continue
		}
		decided++
		if (form == formQuoted) != yaml.IsValueNonString(s) {
			t.Errorf("%q: scalarForm quotes it: %v; yaml.IsValueNonString: %v", s, form == formQuoted, yaml.IsValueNonString(s))
		}
		if key := scalarForm(s, true); key != form && (key != formUnknown || len(s) <= 128) {
			t.Errorf("%q: decided %d as a key, %d as a value", s, key, form)
		}
	}
	t.Logf("%d strings, %d decided by scalarForm", len(strs), decided)
	assert.Greater(t, decided, 300000)
}

// shortStrings is every string of 1 to n characters of fastAlphabet.
func shortStrings(n int) []string {
	out := []string{""}
	level := []string{""}
	for ; n > 0; n-- {
		var next []string
		for _, p := range level {
			for i := 0; i < len(fastAlphabet); i++ {
				next = append(next, p+fastAlphabet[i:i+1])
			}
		}
		out = append(out, next...)
		level = next
	}
	return out
}

// caseSpellings is every upper/lower case spelling of an ASCII word.
func caseSpellings(w string) []string {
	out := []string{""}
	for i := 0; i < len(w); i++ {
		var next []string
		for _, p := range out {
			next = append(next, p+strings.ToLower(w[i:i+1]), p+strings.ToUpper(w[i:i+1]))
		}
		out = next
	}
	return out
}

// oneEditAway is every string one insertion, deletion or substitution of a
// fastAlphabet character away from w.
func oneEditAway(w string) []string {
	var out []string
	for i := 0; i <= len(w); i++ {
		if i < len(w) {
			out = append(out, w[:i]+w[i+1:])
		}
		for j := 0; j < len(fastAlphabet); j++ {
			c := fastAlphabet[j : j+1]
			out = append(out, w[:i]+c+w[i:])
			if i < len(w) {
				out = append(out, w[:i]+c+w[i+1:])
			}
		}
	}
	return out
}

func pow(b, n int) int {
	r := 1
	for ; n > 0; n-- {
		r *= b
	}
	return r
}

func randomUUID(rnd *rand.Rand) string {
	const hex = "0123456789abcdefABCDEF"
	b := make([]byte, 36)
	for i := range b {
		switch i {
		case 8, 13, 18, 23:
			b[i] = '-'
		default:
			b[i] = hex[rnd.Intn(len(hex))]
		}
	}
	return string(b)
}

// goldenServiceStrings is every string of every Service the golden cases
// generate: names, namespaces, label and annotation keys and values, owner
// references, port names and protocols.
func goldenServiceStrings(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, dir := range fntest.GoldenCases(t, "../../testdata") {
		input, err := os.ReadFile(filepath.Join(dir, "input.yaml"))
		require.NoError(t, err)
		rw := &kio.ByteReadWriter{Reader: bytes.NewReader(input)}
		items, err := rw.Read()
		if err != nil {
			continue
		}
		cfg, results := fn.ParseConfig(rw.FunctionConfig, fn.Origin{})
		if results.ExitCode() != 0 {
			continue
		}
		_, o, _ := fntest.Generate(items, cfg)
		if o == nil {
			continue
		}
		for svc := range o.Services() {
			out = append(out, serviceStrings(svc)...)
		}
	}
	require.NotEmpty(t, out)
	return out
}

func serviceStrings(svc *corev1.Service) []string {
	out := []string{svc.Name, svc.Namespace}
	for _, m := range []map[string]string{svc.Labels, svc.Annotations, svc.Spec.Selector} {
		for k, v := range m {
			out = append(out, k, v)
		}
	}
	for _, o := range svc.OwnerReferences {
		out = append(out, o.APIVersion, o.Kind, o.Name, string(o.UID))
	}
	for _, p := range svc.Spec.Ports {
		out = append(out, p.Name, string(p.Protocol), p.TargetPort.StrVal)
	}
	return out
}
