// Command etcd runs the etcd server for the e2e tests. It lives in its own
// module because go.etcd.io/etcd/server/v3 and k8s.io/kubernetes do not
// resolve to a buildable set of dependencies together.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
