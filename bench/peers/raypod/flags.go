package raypod

import (
	"flag"
	"fmt"
	"os"
)

// Flags are ceiling_server's flags, which both peers take so that
// bench/compare.sh starts them as it starts the ceiling.
type Flags struct {
	Bind, CertFile, KeyFile, ClusterDomain string
	Port                                   int
}

// ParseFlags reads the command line, and exits 2 on a positional argument:
// bench/compare.sh tells ray-webhook from the others by `BINARY review`.
func ParseFlags() Flags {
	var f Flags
	flag.StringVar(&f.Bind, "bind", "127.0.0.1", "address to listen on")
	flag.IntVar(&f.Port, "port", 8443, "port to listen on")
	flag.StringVar(&f.CertFile, "tls-cert", "tls.crt", "certificate file")
	flag.StringVar(&f.KeyFile, "tls-key", "tls.key", "key file")
	flag.StringVar(&f.ClusterDomain, "cluster-domain", "cluster.local", "cluster domain")
	flag.Int("threads", 0, "ignored (ceiling_server's flag)")
	flag.String("body", "", "ignored (ceiling_server's flag)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "%s: unexpected argument %q\n", os.Args[0], flag.Arg(0))
		os.Exit(2)
	}
	return f
}
