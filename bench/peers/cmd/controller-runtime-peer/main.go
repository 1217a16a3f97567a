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
	"flag"
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
	bind := flag.String("bind", "127.0.0.1", "address to listen on")
	port := flag.Int("port", 8443, "port to listen on")
	cert := flag.String("tls-cert", "tls.crt", "certificate file")
	key := flag.String("tls-key", "tls.key", "key file")
	domain := flag.String("cluster-domain", "cluster.local", "cluster domain")
	flag.Int("threads", 0, "ignored (ceiling_server's flag)")
	flag.String("body", "", "ignored (ceiling_server's flag)")
	flag.Parse()
	if flag.NArg() > 0 { // bench/compare.sh tells ray-webhook from the others by `BINARY review`
		fmt.Fprintf(os.Stderr, "%s: unexpected argument %q\n", os.Args[0], flag.Arg(0))
		os.Exit(2)
	}
	if filepath.Dir(*cert) != filepath.Dir(*key) {
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
		Host:     *bind,
		Port:     *port,
		CertDir:  filepath.Dir(*cert),
		CertName: filepath.Base(*cert),
		KeyName:  filepath.Base(*key),
	})
	server.Register("/mutate", &webhook.Admission{Handler: &rayPodReview{decoder, *domain, true}})
	server.Register("/validate", &webhook.Admission{Handler: &rayPodReview{decoder, *domain, false}})

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := server.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "controller-runtime-peer:", err)
		os.Exit(1)
	}
}
