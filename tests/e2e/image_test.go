package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"ray-webhook/tests/e2e/framework"
)

// TestImage: the replicas run from the image users install (scripts/image.sh),
// as the Deployment asks a container runtime to run it: the image's
// entrypoint and user, a read-only root filesystem, the serving Secret at the
// entrypoint's --cert-dir, the ServiceAccount volume at the kubelet's path.
// A replica that came up at all has also shown that the image's libraries
// load and its entrypoint serves (it answered /readyz on the probe port).
func TestImage(t *testing.T) {
	c := framework.Attach(t)
	if c.Image == nil {
		t.Fatalf("the cluster runs ray-webhook from %s, not from its image (E2E_IMAGE unset; scripts/e2e.sh builds it)", c.RayWebhook)
	}
	r := framework.StartReplica(t, framework.ReplicaOptions{Name: "ray-webhook-image", Route: framework.RouteNone})
	proc := "/proc/" + strconv.Itoa(r.Process.Pid())

	t.Run("runs-as-the-image-user", func(t *testing.T) {
		status, err := os.ReadFile(proc + "/status")
		if err != nil {
			t.Fatal(err)
		}
		uid, gid := field(string(status), "Uid:"), field(string(status), "Gid:")
		want := strings.SplitN(c.Image.User, ":", 2)
		if len(want) != 2 || uid != want[0] || gid != want[1] {
			t.Fatalf("the server runs as uid %s gid %s; the image's user is %q", uid, gid, c.Image.User)
		}
		if want[0] == "0" {
			t.Fatalf("the image's user is root (%s); the Deployment has runAsNonRoot", c.Image.User)
		}
		t.Logf("uid %s, gid %s, as the image's USER %s", uid, gid, c.Image.User)
	})

	t.Run("entrypoint-of-the-image", func(t *testing.T) {
		cmdline, err := os.ReadFile(proc + "/cmdline")
		if err != nil {
			t.Fatal(err)
		}
		args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
		if len(args) < len(c.Image.Entrypoint) || strings.Join(args[:len(c.Image.Entrypoint)], " ") != strings.Join(c.Image.Entrypoint, " ") {
			t.Fatalf("the server's command line %q does not start with the image's entrypoint %q", args, c.Image.Entrypoint)
		}
		root, err := os.Readlink(proc + "/root")
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Clean(root) != filepath.Clean(c.Image.Rootfs) {
			t.Fatalf("the server's root is %s, not the image's root filesystem %s", root, c.Image.Rootfs)
		}
		exe, err := os.Readlink(proc + "/exe")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(exe, filepath.Clean(c.Image.Rootfs)+"/") {
			t.Fatalf("the server's executable %s is not inside the image", exe)
		}
		t.Logf("%s inside the image, started as %q", strings.TrimPrefix(exe, filepath.Clean(c.Image.Rootfs)), args)
	})

	t.Run("read-only-root", func(t *testing.T) {
		// The mount the server sees at / (the last one listed on /), and the
		// Secret's at the entrypoint's --cert-dir, are read-only.
		mounts, err := os.ReadFile(proc + "/mountinfo")
		if err != nil {
			t.Fatal(err)
		}
		options := map[string]string{}
		for _, line := range strings.Split(string(mounts), "\n") {
			if f := strings.Fields(line); len(f) > 5 {
				options[f[4]] = f[5]
			}
		}
		certDir := ""
		for i, a := range c.Image.Entrypoint {
			if a == "--cert-dir" && i+1 < len(c.Image.Entrypoint) {
				certDir = c.Image.Entrypoint[i+1]
			}
		}
		for _, mount := range []string{"/", certDir} {
			opts, ok := options[mount]
			if !ok {
				t.Errorf("nothing is mounted at %q in the server's view", mount)
				continue
			}
			if !strings.HasPrefix(opts+",", "ro,") {
				t.Errorf("%q is mounted %s, not read-only", mount, opts)
			}
		}
		if _, err := os.Stat(proc + "/root" + certDir + "/tls.crt"); err != nil {
			t.Errorf("the serving Secret is not at the entrypoint's --cert-dir: %v", err)
		}
		t.Logf("/ mounted %s; the Secret at %s mounted %s", options["/"], certDir, options[certDir])
	})
}

// field is the first value after KEY in /proc/PID/status.
func field(status, key string) string {
	for _, line := range strings.Split(status, "\n") {
		if rest, ok := strings.CutPrefix(line, key); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				return f[0]
			}
		}
	}
	return ""
}
