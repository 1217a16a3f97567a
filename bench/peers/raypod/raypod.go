// Package raypod is the review both Go peers do: ray-webhook's FQDN mutation of
// a Ray worker (the head service's bare name becomes its FQDN in the Ray
// container's `ray start --address`, in env values that hold it, and FQ_RAY_IP
// and RAY_IP are added to the Ray container and the init containers) and its
// duplicate-mount check. It is as much work as ray-webhook does on the bench
// fixtures, not every KubeRay release's Pod shape: the peers exist to measure
// what a framework costs around the same review.
package raypod

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// DuplicateMount names the first container that mounts one path twice, or "".
func DuplicateMount(pod *corev1.Pod) string {
	check := func(kind string, containers []corev1.Container) string {
		for _, c := range containers {
			seen := make(map[string]bool, len(c.VolumeMounts))
			for _, m := range c.VolumeMounts {
				if seen[m.MountPath] {
					return fmt.Sprintf("%s %q mounts %s twice", kind, c.Name, m.MountPath)
				}
				seen[m.MountPath] = true
			}
		}
		return ""
	}
	if d := check("container", pod.Spec.Containers); d != "" {
		return d
	}
	return check("init container", pod.Spec.InitContainers)
}

// Mutate changes a worker of a RayCluster in place and reports whether it did.
func Mutate(pod *corev1.Pod, namespace, clusterDomain string) bool {
	cluster := pod.Labels["ray.io/cluster"]
	if cluster == "" || pod.Labels["ray.io/node-type"] != "worker" || len(pod.Spec.Containers) == 0 {
		return false
	}
	if pod.Namespace != "" {
		namespace = pod.Namespace
	}
	service := cluster + "-head-svc"
	fqdn := service + "." + namespace + ".svc." + clusterDomain
	bare := service + ":"
	qualify := func(s string) string { return strings.ReplaceAll(s, bare, fqdn+":") }

	ray := &pod.Spec.Containers[0]
	for i := range ray.Command {
		ray.Command[i] = qualify(ray.Command[i])
	}
	for i := range ray.Args {
		ray.Args[i] = qualify(ray.Args[i])
	}
	for i := range ray.Env {
		ray.Env[i].Value = qualify(ray.Env[i].Value)
	}
	add := []corev1.EnvVar{{Name: "FQ_RAY_IP", Value: fqdn}, {Name: "RAY_IP", Value: service}}
	ray.Env = setEnv(ray.Env, add)
	for i := range pod.Spec.InitContainers {
		pod.Spec.InitContainers[i].Env = setEnv(pod.Spec.InitContainers[i].Env, add)
	}
	return true
}

func setEnv(env []corev1.EnvVar, add []corev1.EnvVar) []corev1.EnvVar {
next:
	for _, a := range add {
		for i := range env {
			if env[i].Name == a.Name {
				env[i] = a
				continue next
			}
		}
		env = append(env, a)
	}
	return env
}
