package framework

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

// KubeRay is a running operator of one release.
type KubeRay struct {
	Release string   // e.g. kuberay-v1.6.2: a folder of E2E_DIR and a binary of BIN
	CRDDir  string   // config/crd/bases of the release's module
	Process *Process // the operator
	CRDs    []CRD    // what CRDDir defines
}

// CRD is one custom resource definition of a release.
type CRD struct {
	Name     string // e.g. rayclusters.ray.io
	Group    string
	Plural   string
	Kind     string
	Versions []string // served
	Storage  string   // the storage version
}

// GVR is the resource at its storage version.
func (c CRD) GVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: c.Group, Version: c.Storage, Resource: c.Plural}
}

// only one operator at a time: two releases must never reconcile one object.
var operatorMu sync.Mutex

// Operator applies the CRDs of KubeRay RELEASE (the module that
// E2E_DIR/RELEASE/go.mod requires: its config/crd/bases, `kubectl apply
// --server-side --force-conflicts`, then condition Established), and starts
// BIN/RELEASE (operatorCommand): the admin KUBECONFIG,
// --metrics-addr and --health-probe-bind-address on free loopback ports,
// --enable-leader-election=false, inside `unshare --mount` with RESOLV_CONF
// bind-mounted on /etc/resolv.conf (its lookups go to the cluster's CoreDNS
// alone), with ENV (KEY=VALUE) added to its environment. It returns once
// /readyz answers 200. When t ends the operator is stopped, the finalizers of
// the remaining custom resources of those CRDs are dropped and the CRDs
// deleted. Only one Operator runs at a
// time: a second call fails t while the first is running.
func Operator(t testing.TB, release string, env ...string) *KubeRay {
	t.Helper()
	return OperatorArgs(t, release, nil, env...)
}

// OperatorArgs is Operator with ARGS after the operator's own flags (e.g.
// --feature-gates=RayCronJob=true).
func OperatorArgs(t testing.TB, release string, args []string, env ...string) *KubeRay {
	t.Helper()
	c := Attach(t)
	if !operatorMu.TryLock() {
		t.Fatalf("Operator(%s): another operator started by this suite is still running", release)
	}
	t.Cleanup(operatorMu.Unlock)
	bin := filepath.Join(c.Bin, release)
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("Operator(%s): %v (scripts/e2e.sh --build builds it)", release, err)
	}
	k := &KubeRay{Release: release}
	k.CRDDir = crdDir(t, c, release)
	k.CRDs = readCRDs(t, k.CRDDir)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// Removal is registered before the apply, so a half-applied set goes too;
	// it runs after the operator's own cleanup (registered later, run first).
	t.Cleanup(func() { removeCRDs(t, c, k) })
	if out, err := c.kubectl(ctx, "apply", "--server-side", "--force-conflicts", "-f", k.CRDDir); err != nil {
		t.Fatalf("Operator(%s): applying its CRDs: %v\n%s", release, err, lastLines(out, 10))
	}
	if _, err := c.kubectl(ctx, "wait", "--for", "condition=established", "--timeout=60s", "-f", k.CRDDir); err != nil {
		t.Fatalf("Operator(%s): its CRDs not established: %v", release, err)
	}
	metrics, probe := freePort(t, "127.0.0.1"), freePort(t, "127.0.0.1")
	cmd := operatorCommand(c, release, metrics, probe)
	cmd.Args = append(cmd.Args, args...)
	cmd.Env = append(cmd.Env, env...)
	k.Process = start(t, c, "operator-"+release, cmd)
	waitHTTP(t, k.Process, "http://127.0.0.1:"+itoa(probe)+"/readyz", 90*time.Second)
	t.Logf("operator %s running (pid %d, probes 127.0.0.1:%d, args %v, env %v, log %s)", release, k.Process.Pid(), probe, args, env, k.Process.Log)
	return k
}

// crdDir is config/crd/bases of the ray-operator module E2E_DIR/RELEASE requires.
func crdDir(t testing.TB, c *Cluster, release string) string {
	t.Helper()
	dir, err := operatorCRDDir(c, release)
	if err != nil {
		t.Fatalf("Operator(%s): %v", release, err)
	}
	return dir
}

func operatorCRDDir(c *Cluster, release string) (string, error) {
	dir, err := moduleDir(filepath.Join(c.E2EDir, release), "github.com/ray-project/kuberay/ray-operator")
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "config", "crd", "bases"), nil
}

// operatorCommand runs BIN/RELEASE in a mount namespace of its own whose
// /etc/resolv.conf is RESOLV_CONF (CoreDNS alone): it reaches head Services
// by name as a Pod does, and no name it looks up leaves this machine.
func operatorCommand(c *Cluster, release string, metrics, probe int) *exec.Cmd {
	cmd := exec.Command("unshare", "--mount", "--", "sh", "-c", `mount --bind "$1" /etc/resolv.conf && shift && exec "$@"`,
		"sh", c.ResolvConf, filepath.Join(c.Bin, release),
		"--metrics-addr", "127.0.0.1:"+itoa(metrics),
		"--health-probe-bind-address", "127.0.0.1:"+itoa(probe),
		"--enable-leader-election=false")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.Kubeconfig)
	return cmd
}

func readCRDs(t testing.TB, dir string) []CRD {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs in %s (%v)", dir, err)
	}
	sort.Strings(files)
	var crds []CRD
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("%v", err)
		}
		var doc struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Spec struct {
				Group string `json:"group"`
				Names struct {
					Plural string `json:"plural"`
					Kind   string `json:"kind"`
				} `json:"names"`
				Versions []struct {
					Name    string `json:"name"`
					Served  bool   `json:"served"`
					Storage bool   `json:"storage"`
				} `json:"versions"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if doc.Kind != "CustomResourceDefinition" {
			continue
		}
		crd := CRD{Name: doc.Metadata.Name, Group: doc.Spec.Group, Plural: doc.Spec.Names.Plural, Kind: doc.Spec.Names.Kind}
		for _, v := range doc.Spec.Versions {
			if v.Served {
				crd.Versions = append(crd.Versions, v.Name)
			}
			if v.Storage {
				crd.Storage = v.Name
			}
		}
		crds = append(crds, crd)
	}
	return crds
}

// removeCRDs: the custom resources' finalizers dropped (the operator is
// stopped, nothing else would remove them), then the CRDs deleted and waited
// for.
func removeCRDs(t testing.TB, c *Cluster, k *KubeRay) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if k.Process != nil {
		k.Process.Stop()
	}
	for _, crd := range k.CRDs {
		list, err := c.Dynamic.Resource(crd.GVR()).Namespace(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		if err != nil {
			if !apierrors.IsNotFound(err) {
				t.Logf("listing %s: %v", crd.Name, err)
			}
			continue
		}
		for _, o := range list.Items {
			if len(o.GetFinalizers()) == 0 {
				continue
			}
			_, err := c.Dynamic.Resource(crd.GVR()).Namespace(o.GetNamespace()).Patch(ctx, o.GetName(),
				types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				t.Logf("dropping the finalizers of %s %s/%s: %v", crd.Kind, o.GetNamespace(), o.GetName(), err)
			}
		}
	}
	if out, err := c.kubectl(ctx, "delete", "--ignore-not-found", "--timeout=120s", "-f", k.CRDDir); err != nil {
		t.Errorf("removing the CRDs of %s: %v\n%s", k.Release, err, lastLines(out, 5))
	}
}
