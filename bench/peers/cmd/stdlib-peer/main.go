// stdlib-peer serves ray-webhook's review (package raypod) on /mutate and
// /validate with nothing but Go's standard library around the Kubernetes API
// types: net/http, crypto/tls and encoding/json, and a JSON patch that
// replaces the containers it changed. It is the lower bound of a Go webhook;
// controller-runtime-peer is what most are built on. It takes ceiling_server's
// flags, so that bench/compare.sh starts it as it starts the ceiling.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"ray-webhook/bench/peers/raypod"
)

type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

func review(w http.ResponseWriter, r *http.Request, mutate bool, domain string) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var in admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &in); err != nil || in.Request == nil {
		http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
		return
	}
	resp := &admissionv1.AdmissionResponse{UID: in.Request.UID, Allowed: true}
	var pod corev1.Pod
	if err := json.Unmarshal(in.Request.Object.Raw, &pod); err != nil {
		resp.Allowed = false
		resp.Result = &metav1.Status{Code: http.StatusBadRequest, Message: err.Error()}
	} else if d := raypod.DuplicateMount(&pod); d != "" {
		resp.Allowed = false
		resp.Result = &metav1.Status{Code: http.StatusForbidden, Message: d}
	} else if mutate && raypod.Mutate(&pod, in.Request.Namespace, domain) {
		ops := []patchOp{{"replace", "/spec/containers", pod.Spec.Containers}}
		if len(pod.Spec.InitContainers) > 0 {
			ops = append(ops, patchOp{"replace", "/spec/initContainers", pod.Spec.InitContainers})
		}
		if resp.Patch, err = json.Marshal(ops); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		pt := admissionv1.PatchTypeJSONPatch
		resp.PatchType = &pt
	}
	out, err := json.Marshal(admissionv1.AdmissionReview{TypeMeta: in.TypeMeta, Response: resp})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(out)
}

func main() {
	f := raypod.ParseFlags()

	mux := http.NewServeMux()
	mux.HandleFunc("/mutate", func(w http.ResponseWriter, r *http.Request) { review(w, r, true, f.ClusterDomain) })
	mux.HandleFunc("/validate", func(w http.ResponseWriter, r *http.Request) { review(w, r, false, f.ClusterDomain) })
	addr := net.JoinHostPort(f.Bind, strconv.Itoa(f.Port))
	if err := http.ListenAndServeTLS(addr, f.CertFile, f.KeyFile, mux); err != nil {
		fmt.Fprintln(os.Stderr, "stdlib-peer:", err)
		os.Exit(1)
	}
}
