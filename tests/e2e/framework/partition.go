package framework

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// CutLink drops every packet this host sends to IP:PORT (nftables table
// inet rwcut-PID, hook output: kube-apiserver's calls to a ray-webhook
// replica, new connections and kept-alive ones alike, as a network partition
// between them would) until the returned function is called or t ends.
// Nothing is refused: the caller sees timeouts, as across a partition.
func CutLink(t testing.TB, ip string, port int) (restore func()) {
	t.Helper()
	table := fmt.Sprintf("rwcut-%d", os.Getpid())
	rules := fmt.Sprintf(`table inet %s {
	chain output {
		type filter hook output priority filter; policy accept;
		ip daddr %s tcp dport %d drop
	}
}
`, table, ip, port)
	cmd := exec.Command("nft", "-f", "-")
	cmd.Stdin = strings.NewReader(rules)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("CutLink: nft: %v: %s", err, out)
	}
	done := false
	restore = func() {
		if done {
			return
		}
		done = true
		if out, err := exec.Command("nft", "delete", "table", "inet", table).CombinedOutput(); err != nil {
			t.Errorf("CutLink: removing table inet %s: %v: %s", table, err, out)
		}
	}
	t.Cleanup(restore)
	return restore
}
