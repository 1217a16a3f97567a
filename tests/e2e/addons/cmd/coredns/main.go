// Command coredns is CoreDNS (github.com/coredns/coredns, the version pinned in
// ../../go.mod) with only the plugins the end-to-end cluster's Corefile uses:
// kubernetes (Service and Pod records from the API server, through a
// kubeconfig), bind (one address per instance), errors, log and ready. The upstream binary compiles in every
// plugin (core/plugin/zplugin.go); the directive order stays upstream's
// (core/dnsserver/zdirectives.go), so a plugin is placed as it would be there.
package main

import (
	"github.com/coredns/coredns/coremain"
	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"
)

func main() {
	coremain.Run()
}
