// controller-runtime-peer serves ray-webhook's review (package raypod) on
// /mutate and /validate through controller-runtime's webhook.Server and an
// admission.Handler, the way KubeRay's own webhooks and most Kubernetes webhooks
// are written: the Pod decoded by admission.Decoder, the patch computed by
// admission.PatchResponseFromRaw. It takes ceiling_server's flags, so that
// bench/compare.sh starts it as it starts the ceiling.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"ray-webhook/bench/peers/raypod"
)

type rayPodReview struct {
	decoder       admission.Decoder
	clusterDomain string
	mutate        bool
}

func (r *rayPodReview) Handle(_ context.Context, req admission.Request) admission.Response {
	pod := &corev1.Pod{}
	if err := r.decoder.Decode(req, pod); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if d := raypod.DuplicateMount(pod); d != "" {
		return admission.Denied(d)
	}
	if !r.mutate || !raypod.Mutate(pod, req.Namespace, r.clusterDomain) {
		return admission.Allowed("")
	}
	mutated, err := json.Marshal(pod)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, mutated)
}

func main() {
	f := raypod.ParseFlags()
	if filepath.Dir(f.CertFile) != filepath.Dir(f.KeyFile) {
		fmt.Fprintln(os.Stderr, "controller-runtime-peer: --tls-cert and --tls-key must sit in one directory (webhook.Options.CertDir)")
		os.Exit(2)
	}

	// Logging off, as ray-webhook's --log-level warn logs nothing per review.
	ctrllog.SetLogger(logr.Discard())
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	decoder := admission.NewDecoder(scheme)
	server := webhook.NewServer(webhook.Options{
		Host:     f.Bind,
		Port:     f.Port,
		CertDir:  filepath.Dir(f.CertFile),
		CertName: filepath.Base(f.CertFile),
		KeyName:  filepath.Base(f.KeyFile),
	})
	server.Register("/mutate", &webhook.Admission{Handler: &rayPodReview{decoder, f.ClusterDomain, true}})
	server.Register("/validate", &webhook.Admission{Handler: &rayPodReview{decoder, f.ClusterDomain, false}})

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := server.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "controller-runtime-peer:", err)
		os.Exit(1)
	}
}
