package framework

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

// A volume as the kubelet writes a Secret or a projected ServiceAccount
// volume (k8s.io/kubernetes pkg/volume/util/atomic_writer.go): DIR/..data is
// a symlink to a timestamped folder and every file is a symlink through
// ..data; an update writes a new folder and renames a new ..data over the old.

// NewVolume makes a fresh volume folder in WORK holding FILES.
func NewVolume(t testing.TB, files map[string][]byte) string {
	t.Helper()
	c := Attach(t)
	dir, err := os.MkdirTemp(c.Work, "go-volume-")
	if err != nil {
		t.Fatalf("volume folder: %v", err)
	}
	if err := writeVolume(dir, files, c.volumeOwner()); err != nil {
		t.Fatalf("volume %s: %v", dir, err)
	}
	return dir
}

// SwapVolume gives volume DIR the content FILES as the kubelet updates it,
// and swaps the content it had back when t ends.
func SwapVolume(t testing.TB, dir string, files map[string][]byte) {
	t.Helper()
	c := Attach(t)
	before, err := readVolume(dir)
	if err != nil {
		t.Fatalf("volume %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := writeVolume(dir, before, c.volumeOwner()); err != nil {
			t.Errorf("restoring volume %s: %v", dir, err)
		}
	})
	if err := writeVolume(dir, files, c.volumeOwner()); err != nil {
		t.Fatalf("volume %s: %v", dir, err)
	}
}

// ServiceAccountVolume is the content of a Pod's projected ServiceAccount
// volume of namespace ray-webhook-system: TOKEN, and CA (default the API
// server's CA, PKI/ca.crt).
func ServiceAccountVolume(t testing.TB, token string, ca []byte) map[string][]byte {
	t.Helper()
	if ca == nil {
		var err error
		if ca, err = os.ReadFile(filepath.Join(Attach(t).PKI, "ca.crt")); err != nil {
			t.Fatalf("the API server's CA: %v", err)
		}
	}
	return map[string][]byte{"token": []byte(token), "ca.crt": ca, "namespace": []byte(webhookNamespace)}
}

// ReadVolume is the current content of volume DIR.
func ReadVolume(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	files, err := readVolume(dir)
	if err != nil {
		t.Fatalf("volume %s: %v", dir, err)
	}
	return files
}

func readVolume(dir string) (map[string][]byte, error) {
	entries, err := os.ReadDir(filepath.Join(dir, "..data"))
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, "..data", e.Name()))
		if err != nil {
			return nil, err
		}
		files[e.Name()] = b
	}
	return files, nil
}

// volumeOwner is how the kubelet leaves a volume's files for the Pod: the
// volume's defaultMode and the Pod's fsGroup as their group
// (pkg/volume/volume_linux.go SetVolumeOwnership); gid < 0 changes no group.
type volumeOwner struct {
	mode os.FileMode
	gid  int
}

// rootOnly is a volume only root reads (the server runs as root).
var rootOnly = volumeOwner{mode: 0o600, gid: -1}

func writeVolume(dir string, files map[string][]byte, owner volumeOwner) error {
	stamp := ".." + time.Now().UTC().Format("2006_01_02_15_04_05.000000000")
	if err := os.MkdirAll(filepath.Join(dir, stamp), 0o755); err != nil {
		return err
	}
	// The server, as the image's user, must reach the files (a folder from
	// os.MkdirTemp is 0700).
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		file := filepath.Join(dir, stamp, name)
		if err := os.WriteFile(file, files[name], 0o600); err != nil {
			return err
		}
		if owner.gid >= 0 {
			if err := os.Chown(file, 0, owner.gid); err != nil {
				return err
			}
		}
		if err := os.Chmod(file, owner.mode); err != nil {
			return err
		}
	}
	tmp := filepath.Join(dir, "..data_tmp")
	_ = os.Remove(tmp)
	if err := os.Symlink(stamp, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
		return err
	}
	for _, name := range names {
		link := filepath.Join(dir, name)
		if _, err := os.Lstat(link); err == nil {
			continue
		}
		if err := os.Symlink(filepath.Join("..data", name), link); err != nil {
			return fmt.Errorf("%s: %v", link, err)
		}
	}
	return nil
}
