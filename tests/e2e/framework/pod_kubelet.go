package framework

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// What a kubelet derives from a Pod's spec for its container, as RayPods
// needs it: downward API values, $(VAR) expansion, resolv.conf, /etc/hosts
// and the size of /dev/shm. Pure functions of the Pod.

// fieldValue is the downward API's value of PATH for pod.
func fieldValue(pod *corev1.Pod, path string) (string, error) {
	if k, ok := strings.CutPrefix(path, "metadata.labels['"); ok {
		return pod.Labels[strings.TrimSuffix(k, "']")], nil
	}
	if k, ok := strings.CutPrefix(path, "metadata.annotations['"); ok {
		return pod.Annotations[strings.TrimSuffix(k, "']")], nil
	}
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.podIP":
		return pod.Status.PodIP, nil
	case "status.podIPs":
		var ips []string
		for _, ip := range pod.Status.PodIPs {
			ips = append(ips, ip.IP)
		}
		return strings.Join(ips, ","), nil
	case "status.hostIP":
		return pod.Status.HostIP, nil
	}
	return "", fmt.Errorf("fieldRef %s: not known here", path)
}

// resourceValue is the downward API's value of a container resource, rounded
// up to the divisor as the kubelet does.
func resourceValue(ctr corev1.Container, ref *corev1.ResourceFieldSelector) (string, error) {
	kind, name, ok := strings.Cut(ref.Resource, ".")
	if !ok {
		return "", fmt.Errorf("resourceFieldRef %s: not known here", ref.Resource)
	}
	// The API server defaults a missing request to the limit; a missing
	// limit would be the node's allocatable.
	limit, hasLimit := ctr.Resources.Limits[corev1.ResourceName(name)]
	request, hasRequest := ctr.Resources.Requests[corev1.ResourceName(name)]
	q, found := limit, hasLimit
	if kind == "requests" && hasRequest || !hasLimit {
		q, found = request, hasRequest
	}
	if !found {
		return "", fmt.Errorf("resourceFieldRef %s: the container sets none (the node's allocatable is not known here)", ref.Resource)
	}
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	n := (q.MilliValue() + divisor.MilliValue() - 1) / divisor.MilliValue()
	return strconv.FormatInt(n, 10), nil
}

// expand replaces $(NAME) with NAME's value when it is known, and $$ with $,
// as the kubelet expands env values, command and args.
func expand(s string, lookup func(string) (string, bool)) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteByte(s[i])
				continue
			}
			name := s[i+2 : i+2+end]
			if v, ok := lookup(name); ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+3+end])
			}
			i += 2 + end
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func expandAll(in []string, env []string) []string {
	vals := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vals[k] = v
	}
	lookup := func(k string) (string, bool) { v, ok := vals[k]; return v, ok }
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = expand(s, lookup)
	}
	return out
}

// resolvConf is the resolv.conf kubelet k writes for pod: for ClusterFirst
// (the default) the cluster's DNS and the search list of its namespace, for
// None only dnsConfig; dnsConfig's entries are merged in either case.
func resolvConf(k Kubelet, pod *corev1.Pod) string {
	var servers, searches []string
	options := []string{}
	policy := pod.Spec.DNSPolicy
	if policy == "" {
		policy = corev1.DNSClusterFirst
	}
	if policy != corev1.DNSNone {
		servers = []string{k.ClusterDNS}
		d := k.ClusterDomain
		searches = []string{pod.Namespace + ".svc." + d, "svc." + d, d}
		options = []string{"ndots:5"}
	}
	if dc := pod.Spec.DNSConfig; dc != nil {
		servers = append(servers, dc.Nameservers...)
		searches = append(searches, dc.Searches...)
		for _, o := range dc.Options {
			opt := o.Name
			if o.Value != nil {
				opt += ":" + *o.Value
			}
			options = append(options, opt)
		}
	}
	var b strings.Builder
	for _, s := range servers {
		fmt.Fprintf(&b, "nameserver %s\n", s)
	}
	if len(searches) > 0 {
		fmt.Fprintf(&b, "search %s\n", strings.Join(searches, " "))
	}
	if len(options) > 0 {
		fmt.Fprintf(&b, "options %s\n", strings.Join(options, " "))
	}
	return b.String()
}

// etcHosts is the /etc/hosts the kubelet writes: localhost and the Pod's own name.
func etcHosts(pod *corev1.Pod) string {
	name := pod.Name
	if pod.Spec.Hostname != "" {
		name = pod.Spec.Hostname
	}
	return fmt.Sprintf("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n%s\t%s\n", pod.Status.PodIP, name)
}

// shmSize is the size of /dev/shm: the sizeLimit of a memory emptyDir the
// container mounts there (KubeRay's shared-mem: its memory limit), else the
// 64 MiB a container runtime gives.
func shmSize(pod *corev1.Pod, ctr corev1.Container) string {
	for _, m := range ctr.VolumeMounts {
		if strings.TrimRight(m.MountPath, "/") != "/dev/shm" {
			continue
		}
		for _, v := range pod.Spec.Volumes {
			if v.Name == m.Name && v.EmptyDir != nil && v.EmptyDir.Medium == corev1.StorageMediumMemory {
				if v.EmptyDir.SizeLimit != nil && !v.EmptyDir.SizeLimit.IsZero() {
					return strconv.FormatInt(v.EmptyDir.SizeLimit.Value(), 10)
				}
				if q, ok := ctr.Resources.Limits[corev1.ResourceMemory]; ok {
					return strconv.FormatInt(q.Value(), 10)
				}
			}
		}
	}
	return strconv.Itoa(64 << 20)
}
