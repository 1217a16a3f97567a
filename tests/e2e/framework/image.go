package framework

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Image is ray-webhook's container image unpacked (buildah from + mount of
// scripts/image.sh's OCI archive) and what its configuration says: a
// replica runs its Entrypoint as its User with its Env, inside the root
// filesystem made read-only, as a container runtime would start it for the
// Deployment (readOnlyRootFilesystem, runAsUser 65532). What differs from a
// kubelet: no network, PID or user namespace of its own (the replica binds
// its own address with --bind), no seccomp profile, no cgroup limits.
type Image struct {
	Archive    string   // the OCI archive
	Container  string   // buildah's working container, removed by Stop
	Rootfs     string   // its mounted root filesystem
	Entrypoint []string // config.Entrypoint
	User       string   // config.User, UID:GID
	Env        []string // config.Env (PATH)
}

// The Deployment's mounts: the serving Secret at the entrypoint's --cert-dir,
// and the ServiceAccount volume where the kubelet projects it (/var/run is
// a symlink to /run in the image: the real path, so no mount follows a link).
const serviceAccountMount = "/run/secrets/kubernetes.io/serviceaccount"

// buildah with the storage scripts/image.sh uses.
func buildah(args ...string) (string, error) {
	cmd := exec.Command("buildah", args...)
	cmd.Env = append(os.Environ(), "STORAGE_DRIVER=vfs")
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		return "", fmt.Errorf("buildah %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(msg))
	}
	return strings.TrimSpace(string(out)), nil
}

// openImage unpacks ARCHIVE into a working container named NAME.
func openImage(archive, name string) (*Image, error) {
	_, _ = buildah("rm", name)
	if _, err := buildah("from", "--quiet", "--name", name, "oci-archive:"+archive); err != nil {
		return nil, err
	}
	im := &Image{Archive: archive, Container: name}
	var err error
	if im.Rootfs, err = buildah("mount", name); err != nil {
		im.close()
		return nil, err
	}
	inspect, err := buildah("inspect", "--type", "container", name)
	if err != nil {
		im.close()
		return nil, err
	}
	var info struct {
		OCIv1 struct {
			Config struct {
				User       string
				Env        []string
				Entrypoint []string
			} `json:"config"`
		}
	}
	if err := json.Unmarshal([]byte(inspect), &info); err != nil {
		im.close()
		return nil, fmt.Errorf("the image's configuration: %v", err)
	}
	c := info.OCIv1.Config
	config := fmt.Sprintf("%+v", c)
	if len(c.Entrypoint) == 0 || c.User == "" {
		im.close()
		return nil, fmt.Errorf("the image has no entrypoint or no user (%s)", config)
	}
	im.Entrypoint, im.User, im.Env = c.Entrypoint, c.User, c.Env
	return im, nil
}

func (im *Image) close() {
	_, _ = buildah("umount", im.Container)
	_, _ = buildah("rm", im.Container)
}

// certPath is the entrypoint's --cert-dir, where the Deployment mounts the Secret.
func (im *Image) certPath() (string, error) {
	for i, a := range im.Entrypoint {
		if v, ok := strings.CutPrefix(a, "--cert-dir="); ok {
			return v, nil
		}
		if a == "--cert-dir" && i+1 < len(im.Entrypoint) {
			return im.Entrypoint[i+1], nil
		}
	}
	return "", fmt.Errorf("the image's entrypoint %q names no --cert-dir", im.Entrypoint)
}

// mountScript runs in a mount namespace of its own (unshare --mount, private
// propagation): the root filesystem on itself, the Secret and the
// ServiceAccount volume read-only at their mount paths, /proc, /sys and
// /dev, then the root read-only, and the entrypoint as the image's user.
const mountScript = `set -e
root=$1 certs=$2 sa=$3 certpath=$4 user=$5
shift 5
mkdir -p "$root$certpath" "$root` + serviceAccountMount + `" "$root/proc" "$root/sys" "$root/dev"
mount --bind "$root" "$root"
mount --bind "$certs" "$root$certpath"
mount -o remount,bind,ro "$root$certpath"
mount --bind "$sa" "$root` + serviceAccountMount + `"
mount -o remount,bind,ro "$root` + serviceAccountMount + `"
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"
mount -o remount,bind,ro "$root"
exec chroot --userspec="$user" "$root" "$@"
`

// serverCommand is ray-webhook serve with ARGS (after "serve", without
// --cert-dir and the lookup's flags), its certificates in CERTDIR, the
// lookup's ServiceAccount volume SADIR and API server API (the cluster's
// own, APISERVER, unless a test names another), and ENV added.
//   - From the work tree's binary: serve --cert-dir CERTDIR ARGS
//     --kube-api-server API --kube-ca-file SADIR/ca.crt --kube-token-file SADIR/token.
//   - From the image: its entrypoint (which names the certificate folder)
//     and ARGS, inside the image (mountScript); the lookup as in a Pod:
//     KUBERNETES_SERVICE_HOST/PORT and the ServiceAccount volume at its
//     default path (the lookup's flags only when API is not the cluster's).
func serverCommand(im *Image, binary, clusterAPI, certDir, saDir, api string, args, env []string) (*exec.Cmd, error) {
	if im == nil {
		full := append([]string{"serve", "--cert-dir", certDir}, args...)
		full = append(full, "--kube-api-server", api, "--kube-ca-file", filepath.Join(saDir, "ca.crt"),
			"--kube-token-file", filepath.Join(saDir, "token"))
		cmd := exec.Command(binary, full...)
		cmd.Env = append(os.Environ(), env...)
		return cmd, nil
	}
	certPath, err := im.certPath()
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(clusterAPI)
	if err != nil {
		return nil, err
	}
	full := append([]string{"--mount", "--propagation", "private", "--", "sh", "-c", mountScript, "sh",
		im.Rootfs, certDir, saDir, certPath, im.User}, im.Entrypoint...)
	full = append(full, args...)
	if api != clusterAPI {
		// Another API server than the in-cluster one: its CA and token are
		// then named too (only the in-cluster default implies the volume's).
		const sa = "/var/run/secrets/kubernetes.io/serviceaccount"
		full = append(full, "--kube-api-server", api, "--kube-ca-file", sa+"/ca.crt", "--kube-token-file", sa+"/token")
	}
	cmd := exec.Command("unshare", full...)
	// What a container sees: the image's Env, the kubelet's service variables, the Deployment's env.
	cmd.Env = append(append(append([]string{}, im.Env...),
		"KUBERNETES_SERVICE_HOST="+u.Hostname(), "KUBERNETES_SERVICE_PORT="+u.Port()), env...)
	return cmd, nil
}
