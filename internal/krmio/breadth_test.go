package krmio

import "flag"

// randomBreadth scales the random differential tests: make test runs a
// tenth of their full breadth, make fuzz the whole of it
// (-random-breadth=10), and more where asked.
var randomBreadth = flag.Int("random-breadth", 1, "the random differential tests' breadth, in tenths of the full")

// randomCases is how many of full random cases to run.
func randomCases(full int) int { return max(1, full**randomBreadth/10) }
