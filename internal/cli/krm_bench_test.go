package cli

import (
	"bytes"
	"fmt"
	"github.com/fedlearner/flapp-services/fn/fntest"
	"io"
	"sync"
	"testing"

	"github.com/fedlearner/flapp-services/bench/benchdata"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
)

// Benchmarks of the whole KRM path on the synthetic FLApps of `make bench`
// (bench/benchdata); render mode's is in bench_test.go. Run with
//
//	go test ./internal/cli -run '^$' -bench KRM -benchmem -cpuprofile cpu.prof

var (
	benchOnce  sync.Once
	benchInput struct {
		krm10k, kpt10k, floor10k []byte
	}
)

func benchInputs(b *testing.B) {
	b.Helper()
	benchOnce.Do(func() {
		benchInput.krm10k = benchdata.ResourceList(500, false)
		var first bytes.Buffer
		if err := RunKRM(bytes.NewReader(benchdata.ResourceList(500, true)), &first, io.Discard); err != nil {
			b.Fatal(err)
		}
		rl := first.Bytes()
		if i := bytes.Index(rl, []byte("\nresults:\n")); i >= 0 {
			rl = rl[:i+1]
		}
		benchInput.kpt10k = rl
		var floor bytes.Buffer
		if err := RunKRM(bytes.NewReader(benchInput.krm10k), &floor, io.Discard); err != nil {
			b.Fatal(err)
		}
		benchInput.floor10k = floor.Bytes()
	})
}

func benchKRM(b *testing.B, input []byte) {
	b.SetBytes(int64(len(input)))
	b.ReportAllocs()
	for b.Loop() {
		if err := RunKRM(bytes.NewReader(input), io.Discard, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkKRM10k: 500 FLApps in, 10,000 Services out.
func BenchmarkKRM10k(b *testing.B) {
	benchInputs(b)
	benchKRM(b, benchInput.krm10k)
}

// BenchmarkKRM10kReference is the same through framework.Execute and
// fntest.Processor (a yaml node per Service), the reference path the golden
// tests use.
func BenchmarkKRM10kReference(b *testing.B) {
	benchInputs(b)
	b.ReportAllocs()
	for b.Loop() {
		rw := &kio.ByteReadWriter{Reader: bytes.NewReader(benchInput.krm10k), Writer: io.Discard, KeepReaderAnnotations: true}
		if err := framework.Execute(fntest.Processor{}, rw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkKPT10k: the second kpt render, whose input already holds the
// 10,000 Services of the first.
func BenchmarkKPT10k(b *testing.B) {
	benchInputs(b)
	benchKRM(b, benchInput.kpt10k)
}

// BenchmarkFloor10k is the do-nothing kyaml function on the function's own
// output: the baseline of `make bench`.
func BenchmarkFloor10k(b *testing.B) {
	benchInputs(b)
	b.SetBytes(int64(len(benchInput.floor10k)))
	b.ReportAllocs()
	noop := framework.ResourceListProcessorFunc(func(*framework.ResourceList) error { return nil })
	for b.Loop() {
		rw := &kio.ByteReadWriter{Reader: bytes.NewReader(benchInput.floor10k), Writer: io.Discard, KeepReaderAnnotations: true}
		if err := framework.Execute(noop, rw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkKRMScaling: KRM mode at 1k, 10k and 100k Services; compare the
// ns/Service metric across sizes.
func BenchmarkKRMScaling(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		input := benchdata.ResourceList(n/benchdata.ServicesPerFLApp, false)
		b.Run(fmt.Sprintf("services=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := RunKRM(bytes.NewReader(input), io.Discard, io.Discard); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/Service")
		})
	}
}
