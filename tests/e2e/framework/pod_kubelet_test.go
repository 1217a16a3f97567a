package framework

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestExpand(t *testing.T) {
	vals := map[string]string{"RAY_IP": "head-svc", "PORT": "6379"}
	lookup := func(k string) (string, bool) { v, ok := vals[k]; return v, ok }
	for in, want := range map[string]string{
		"--address=$(RAY_IP):$(PORT)": "--address=head-svc:6379",
		"$(UNSET) stays":              "$(UNSET) stays",
		"$$(RAY_IP) is escaped":       "$(RAY_IP) is escaped",
		"shell $RAY_IP is not ours":   "shell $RAY_IP is not ours",
		"unclosed $(RAY_IP":           "unclosed $(RAY_IP",
		"trailing $":                  "trailing $",
	} {
		if got := expand(in, lookup); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
}

func podWithDNS(policy corev1.DNSPolicy, cfg *corev1.PodDNSConfig) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "team-a"},
		Spec: corev1.PodSpec{DNSPolicy: policy, DNSConfig: cfg}}
}

func TestResolvConf(t *testing.T) {
	k := Kubelet{ClusterDNS: "10.200.0.3", ClusterDomain: "cluster.local"}
	five := "5"
	for _, c := range []struct {
		name string
		pod  *corev1.Pod
		want string
	}{
		{"ClusterFirst by default", podWithDNS("", nil),
			"nameserver 10.200.0.3\nsearch team-a.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5\n"},
		{"None: only dnsConfig", podWithDNS(corev1.DNSNone, &corev1.PodDNSConfig{Nameservers: []string{"10.200.0.3"}}),
			"nameserver 10.200.0.3\n"},
		{"ClusterFirst merged with dnsConfig", podWithDNS(corev1.DNSClusterFirst, &corev1.PodDNSConfig{
			Searches: []string{"example.org"}, Options: []corev1.PodDNSConfigOption{{Name: "attempts", Value: &five}, {Name: "rotate"}}}),
			"nameserver 10.200.0.3\nsearch team-a.svc.cluster.local svc.cluster.local cluster.local example.org\noptions ndots:5 attempts:5 rotate\n"},
	} {
		if got := resolvConf(k, c.pod); got != c.want {
			t.Errorf("%s:\n%s\nwant\n%s", c.name, got, c.want)
		}
	}
}

func TestFieldAndResourceValues(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns", UID: "u-1", Labels: map[string]string{"ray.io/group": "small"}},
		Spec:       corev1.PodSpec{NodeName: "kwok-node-0"},
		Status:     corev1.PodStatus{PodIP: "10.200.64.7", PodIPs: []corev1.PodIP{{IP: "10.200.64.7"}}},
	}
	for path, want := range map[string]string{"metadata.name": "w", "metadata.namespace": "ns", "metadata.uid": "u-1",
		"status.podIP": "10.200.64.7", "spec.nodeName": "kwok-node-0", "metadata.labels['ray.io/group']": "small"} {
		if got, err := fieldValue(pod, path); err != nil || got != want {
			t.Errorf("fieldValue(%s) = %q, %v; want %q", path, got, err, want)
		}
	}
	if _, err := fieldValue(pod, "status.nothing"); err == nil {
		t.Errorf("an unknown field path gave no error")
	}
	ctr := corev1.Container{Resources: corev1.ResourceRequirements{
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m"), corev1.ResourceMemory: resource.MustParse("1G")},
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}}}
	for _, c := range []struct {
		res, divisor, want string
	}{
		{"limits.cpu", "", "2"}, // rounded up, as the kubelet does
		{"limits.cpu", "1m", "1500"},
		{"requests.cpu", "1m", "250"},
		{"limits.memory", "", "1000000000"},
		{"requests.memory", "", "1000000000"}, // no request: the limit
	} {
		sel := &corev1.ResourceFieldSelector{Resource: c.res}
		if c.divisor != "" {
			sel.Divisor = resource.MustParse(c.divisor)
		}
		if got, err := resourceValue(ctr, sel); err != nil || got != c.want {
			t.Errorf("resourceValue(%s, %s) = %q, %v; want %q", c.res, c.divisor, got, err, c.want)
		}
	}
}

func TestShmSize(t *testing.T) {
	limit := resource.MustParse("2G")
	pod := &corev1.Pod{Spec: corev1.PodSpec{Volumes: []corev1.Volume{
		{Name: "shared-mem", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}},
		{Name: "sized", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: &limit}}},
	}}}
	ctr := corev1.Container{Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1G")}}}
	if got := shmSize(pod, ctr); got != "67108864" {
		t.Errorf("no /dev/shm mount: %s, want the runtime's 64 MiB", got)
	}
	ctr.VolumeMounts = []corev1.VolumeMount{{Name: "shared-mem", MountPath: "/dev/shm"}}
	if got := shmSize(pod, ctr); got != "1000000000" {
		t.Errorf("KubeRay's shared-mem: %s, want the memory limit", got)
	}
	ctr.VolumeMounts = []corev1.VolumeMount{{Name: "sized", MountPath: "/dev/shm/"}}
	if got := shmSize(pod, ctr); got != "2000000000" {
		t.Errorf("a sized emptyDir: %s, want its sizeLimit", got)
	}
}

func TestEtcHosts(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "rc-head"}, Status: corev1.PodStatus{PodIP: "10.200.64.1"}}
	if got := etcHosts(pod); !strings.Contains(got, "10.200.64.1\trc-head\n") || !strings.HasPrefix(got, "127.0.0.1\tlocalhost\n") {
		t.Errorf("etcHosts: %q", got)
	}
}
