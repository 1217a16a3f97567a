// Command etcd is the etcd server of go.etcd.io/etcd/server/v3 (the version
// pinned in go.mod), for the end-to-end suite. etcdmain.Main
// (server/etcdmain/main.go) parses the same flags as the released etcd binary.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
