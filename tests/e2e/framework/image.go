package framework

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// Image is ray-webhook's container image unpacked (the OCI archive pulled by
// digest from the suite's registry, into WORK/image/rootfs) and what its configuration says: a
// replica runs its Entrypoint as its User with its Env, inside the root
// filesystem made read-only, as a container runtime would start it for the
// Deployment (readOnlyRootFilesystem, runAsUser 65532). What differs from a
// kubelet: no network, PID or user namespace of its own (the replica binds
// its own address with --bind), no seccomp profile, no cgroup limits.
type Image struct {
	Archive    string   // the OCI archive
	Digest     string   // the digest of the manifest its index names (set when unpacked)
	Rootfs     string   // its unpacked root filesystem
	Entrypoint []string // config.Entrypoint
	User       string   // config.User, UID:GID
	Env        []string // config.Env (PATH)
}

// The Deployment's mounts: the serving Secret at the entrypoint's --cert-dir,
// and the ServiceAccount volume where the kubelet projects it (/var/run is
// a symlink to /run in the image: the real path, so no mount follows a link).
const serviceAccountMount = "/run/secrets/kubernetes.io/serviceaccount"

// openImage unpacks the OCI archive (an image layout in a tar: index.json,
// the manifest, its config and gzip layers in blobs/sha256/) into DIR/rootfs,
// layer over layer with the OCI whiteouts (.wh.NAME removes NAME from the
// layers below, .wh..wh..opq empties its folder), owners and modes kept.
// Only the image scripts/image.sh built is unpacked: its paths are trusted.
func openImage(archive, dir string) (*Image, error) {
	layout := filepath.Join(dir, "layout")
	if err := os.MkdirAll(layout, 0o755); err != nil {
		return nil, err
	}
	if out, err := exec.Command("tar", "-xf", archive, "-C", layout).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("tar -xf %s: %v: %s", archive, err, out)
	}
	defer os.RemoveAll(layout)
	blob := func(digest string) string {
		return filepath.Join(layout, "blobs", "sha256", strings.TrimPrefix(digest, "sha256:"))
	}
	readJSON := func(file string, v any) error {
		b, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		return json.Unmarshal(b, v)
	}
	type descriptor struct{ Digest string }
	var index struct{ Manifests []descriptor }
	if err := readJSON(filepath.Join(layout, "index.json"), &index); err != nil || len(index.Manifests) != 1 {
		return nil, fmt.Errorf("%s: index.json names %d manifests (%v)", archive, len(index.Manifests), err)
	}
	var manifest struct {
		Config descriptor
		Layers []descriptor
	}
	if err := readJSON(blob(index.Manifests[0].Digest), &manifest); err != nil {
		return nil, fmt.Errorf("%s: the manifest: %v", archive, err)
	}
	var config struct {
		Config struct {
			User       string
			Env        []string
			Entrypoint []string
		}
	}
	if err := readJSON(blob(manifest.Config.Digest), &config); err != nil {
		return nil, fmt.Errorf("%s: the image's configuration: %v", archive, err)
	}
	c := config.Config
	if len(c.Entrypoint) == 0 || c.User == "" {
		return nil, fmt.Errorf("%s: the image has no entrypoint or no user (%+v)", archive, c)
	}
	im := &Image{Archive: archive, Digest: index.Manifests[0].Digest, Rootfs: filepath.Join(dir, "rootfs"),
		Entrypoint: c.Entrypoint, User: c.User, Env: c.Env}
	if err := os.MkdirAll(im.Rootfs, 0o755); err != nil {
		return nil, err
	}
	for _, l := range manifest.Layers {
		if err := unpackLayer(blob(l.Digest), im.Rootfs); err != nil {
			return nil, fmt.Errorf("%s: layer %s: %v", archive, l.Digest, err)
		}
	}
	return im, nil
}

// unpackLayer applies one gzip tar layer onto ROOT.
func unpackLayer(file, root string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := path.Clean("/" + h.Name)
		target := filepath.Join(root, name)
		dir, base := path.Split(name)
		if base == ".wh..wh..opq" {
			entries, _ := os.ReadDir(filepath.Join(root, dir))
			for _, e := range entries {
				os.RemoveAll(filepath.Join(root, dir, e.Name()))
			}
			continue
		}
		if hidden, ok := strings.CutPrefix(base, ".wh."); ok {
			os.RemoveAll(filepath.Join(root, dir, hidden))
			continue
		}
		if h.Typeflag != tar.TypeDir {
			os.RemoveAll(target)
		}
		mode := os.FileMode(h.Mode).Perm()
		if h.Mode&04000 != 0 {
			mode |= os.ModeSetuid
		}
		if h.Mode&02000 != 0 {
			mode |= os.ModeSetgid
		}
		if h.Mode&01000 != 0 {
			mode |= os.ModeSticky
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			out, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
			if err != nil {
				return err
			}
			_, err = io.Copy(out, tr)
			out.Close()
			if err != nil {
				return err
			}
		case tar.TypeSymlink:
			if err := os.Symlink(h.Linkname, target); err != nil {
				return err
			}
		case tar.TypeLink:
			if err := os.Link(filepath.Join(root, path.Clean("/"+h.Linkname)), target); err != nil {
				return err
			}
		case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
			kind := map[byte]uint32{tar.TypeChar: syscall.S_IFCHR, tar.TypeBlock: syscall.S_IFBLK, tar.TypeFifo: syscall.S_IFIFO}[h.Typeflag]
			// Linux's encoding of a device number (major, minor): sys/sysmacros.h makedev.
			major, minor := uint64(h.Devmajor), uint64(h.Devminor)
			dev := int(minor&0xff | (major&0xfff)<<8 | (minor&^0xff)<<12 | (major&^0xfff)<<32)
			if err := syscall.Mknod(target, kind|uint32(mode.Perm()), dev); err != nil {
				return err
			}
		default:
			continue
		}
		if err := os.Lchown(target, h.Uid, h.Gid); err != nil {
			return err
		}
		if h.Typeflag != tar.TypeSymlink {
			// After the owner: chown clears set-user-ID and set-group-ID.
			if err := os.Chmod(target, mode); err != nil {
				return err
			}
		}
	}
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
