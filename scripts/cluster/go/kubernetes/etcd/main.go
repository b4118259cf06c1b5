// Command etcd is etcd's own server entry point, built from the etcd server module that
// Kubernetes' module graph already holds (the version kube-apiserver is tested with).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
