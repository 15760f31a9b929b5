package krmio

import (
	"testing"

	"github.com/fedlearner/flapp-services/fn"
	corev1 "k8s.io/api/core/v1"
)

// For the differential tests in package krmio_test, which drive this
// package through its callers (fn, internal/cli).

// CheckService is checkService: the fast encoder writes svc as kyaml does.
func CheckService(t *testing.T, svc *corev1.Service) bool { return checkService(t, svc) }

// StreamAnnotations is svc's annotations as StreamWriter writes them.
func StreamAnnotations(svc *corev1.Service) map[string]string {
	m := map[string]string{}
	for _, a := range streamAnnotations(svc.Annotations) {
		m[a.key] = a.value
	}
	return m
}

// readObjects calls each with every node ReadDocuments yields, as an
// object of file, and stops at the first error: the nodes kio.ByteReader.Read
// returns, as a callback for the tests that compare them.
func readObjects(data []byte, file string, limits ReadLimits, each func(fn.Object) error) error {
	for doc, err := range ReadDocuments(data, file, limits) {
		if err != nil {
			return err
		}
		if err := each(fn.Object{Node: doc.Node, Origin: fn.Origin{File: file}, SeqIndent: doc.SeqIndent}); err != nil {
			return err
		}
	}
	return nil
}

// RandomCases is randomCases, for the external tests.
var RandomCases = randomCases
