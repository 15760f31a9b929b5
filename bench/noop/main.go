// Command noop is the do-nothing baseline of `make bench`: a kyaml KRM
// function (framework.Execute) whose processor changes nothing. It only reads
// and writes the ResourceList, which is the floor any kyaml function pays.
package main

import (
	"fmt"
	"os"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
)

func main() {
	p := framework.ResourceListProcessorFunc(func(*framework.ResourceList) error { return nil })
	if err := framework.Execute(p, nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
