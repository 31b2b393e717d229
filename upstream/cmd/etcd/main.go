// etcd is etcd's own server (go.etcd.io/etcd/server/v3, at the release kube-apiserver v1.37's
// client pins), built here for scheduler_perf, whose test framework listens on a unix socket that
// Debian's etcd 3.4 does not accept.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
