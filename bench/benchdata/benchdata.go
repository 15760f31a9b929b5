// Package benchdata makes the synthetic FLApps of the benchmarks: each has
// Master 1, PS 2 and Worker 17 replicas (20 Services) and a tensorflow
// container with two named ports.
package benchdata

import (
	"bytes"
	"fmt"
	"strings"
)

// ServicesPerFLApp is how many Services each synthetic FLApp produces.
const ServicesPerFLApp = 20

// ResourceList is a ResourceList of n FLApps; withPaths adds the annotations
// kpt sets on items read from a package (one file per FLApp).
func ResourceList(n int, withPaths bool) []byte {
	var b bytes.Buffer
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	for i := 0; i < n; i++ {
		var doc bytes.Buffer
		path := ""
		if withPaths {
			path = "apps/" + AppName(i) + ".yaml"
		}
		WriteFLApp(&doc, i, path, true)
		for j, line := range strings.SplitAfter(doc.String(), "\n") {
			if line == "" {
				continue
			}
			if j == 0 {
				b.WriteString("- " + line)
			} else {
				b.WriteString("  " + line)
			}
		}
	}
	return b.Bytes()
}

// AppName is the name of FLApp i.
func AppName(i int) string { return fmt.Sprintf("job-%04d", i) }

// WriteFLApp writes FLApp i: a realistic FLApp as exported from a cluster
// (with its UID) or written in a repository.
func WriteFLApp(b *bytes.Buffer, i int, path string, withUID bool) {
	fmt.Fprintf(b, "apiVersion: fedlearner.k8s.io/v1alpha1\nkind: FLApp\nmetadata:\n  name: %s\n  namespace: team-%d\n", AppName(i), i%5)
	if withUID {
		fmt.Fprintf(b, "  uid: %08x-%04x-4%03x-8%03x-%012x\n", 0x1a2b0000+i*7919, i%65536, i%4096, (i*31)%4096, 0x5e0000000000+i*104729)
	}
	fmt.Fprintf(b, "  labels:\n    team: team-%d\n", i%5)
	if path != "" {
		fmt.Fprintf(b, "  annotations:\n    internal.config.kubernetes.io/path: '%s'\n    internal.config.kubernetes.io/index: '0'\n    config.kubernetes.io/path: '%s'\n    config.kubernetes.io/index: '0'\n", path, path)
	}
	b.WriteString(`spec:
  role: Leader
  peerSpecs:
    Follower:
      peerURL: fedlearner-operator.follower.svc.cluster.local:8100
      authority: follower.fl.example.com
  flReplicaSpecs:
`)
	for _, rt := range []struct {
		name     string
		replicas int
		pair     bool
	}{{"Master", 1, false}, {"PS", 2, false}, {"Worker", 17, true}} {
		fmt.Fprintf(b, `    %s:
      pair: %t
      replicas: %d
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: tensorflow
            image: fedlearner/fedlearner:v2.3
            command: ["/app/deploy/scripts/trainer/run_trainer_%s.sh"]
            env:
            - name: ROLE
              value: leader
            - name: APPLICATION_ID
              value: %s
            resources:
              limits: {cpu: "4", memory: 8Gi}
              requests: {cpu: "2", memory: 4Gi}
            ports:
            - name: flapp-port
              containerPort: 50051
            - name: tf-port
              containerPort: 50052
`, rt.name, rt.pair, rt.replicas, strings.ToLower(rt.name), AppName(i))
	}
}
