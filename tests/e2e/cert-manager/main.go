// Command cert-manager runs cert-manager's controller or its cainjector from
// the published module github.com/cert-manager/cert-manager (pinned in
// go.mod). The release binaries' main packages live in nested modules of
// cert-manager's repository (cmd/controller, cmd/cainjector) that the Go
// module proxy does not serve, so this wires the module's own packages the
// way those mains do (cmd/controller/app/controller.go and
// cmd/cainjector/app/controller.go at v1.21.2), with this suite's needs only:
//
//	cert-manager controller --kubeconfig FILE --cluster-resource-namespace NS --healthz-addr ADDR
//	cert-manager cainjector --kubeconfig FILE --healthz-addr ADDR
//
// The controller runs the controllers for Issuers, ClusterIssuers,
// Certificates and the CertificateRequests of the CA and self-signed issuers
// (their approver too); ACME, Vault, Venafi, the ingress and Gateway shims are
// not linked. The cainjector fills the caBundle of webhook configurations,
// APIServices and CRDs from the annotation cert-manager.io/inject-ca-from.
// Neither uses leader election: the suite runs one of each.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"syscall"
	"time"

	cmscheme "github.com/cert-manager/cert-manager/pkg/client/clientset/versioned/scheme"
	"github.com/cert-manager/cert-manager/pkg/controller"
	"github.com/cert-manager/cert-manager/pkg/controller/cainjector"
	logf "github.com/cert-manager/cert-manager/pkg/logs"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apiext "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	kscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	apireg "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	// The controllers this suite uses register themselves with controller.Register.
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	_ "github.com/cert-manager/cert-manager/pkg/controller/clusterissuers"
	_ "github.com/cert-manager/cert-manager/pkg/controller/issuers"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: cert-manager controller|cainjector --kubeconfig FILE --healthz-addr ADDR")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the component's ServiceAccount")
	clusterNS := fs.String("cluster-resource-namespace", "cert-manager", "where ClusterIssuers keep their Secrets")
	healthz := fs.String("healthz-addr", "127.0.0.1:0", "address of /healthz (200 once the component runs)")
	workers := fs.Int("concurrent-workers", 5, "workers per controller (cert-manager's default)")
	_ = fs.Parse(os.Args[2:])

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ctx = logf.NewContext(ctx, logf.Log)
	var err error
	switch os.Args[1] {
	case "controller":
		err = runController(ctx, *kubeconfig, *clusterNS, *healthz, *workers)
	case "cainjector":
		err = runCAInjector(ctx, *kubeconfig, *healthz)
	default:
		err = fmt.Errorf("unknown component %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cert-manager:", err)
		os.Exit(1)
	}
}

// serveHealthz answers 200 on ADDR/healthz once READY is closed.
func serveHealthz(ctx context.Context, g *errgroup.Group, addr string, ready <-chan struct{}) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		select {
		case <-ready:
			fmt.Fprintln(w, "ok")
		default:
			http.Error(w, "starting", http.StatusServiceUnavailable)
		}
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	g.Go(func() error {
		<-ctx.Done()
		return srv.Close()
	})
	g.Go(func() error {
		if err := srv.Serve(ln); err != http.ErrServerClosed {
			return err
		}
		return nil
	})
	return nil
}

func runController(rootCtx context.Context, kubeconfig, clusterNS, healthz string, workers int) error {
	g, ctx := errgroup.WithContext(rootCtx)
	// cert-manager's defaults (internal/apis/config/controller/v1alpha1):
	// QPS 20, burst 50, a CertificateRequest retried after 1 h, at most 32 h.
	factory, err := controller.NewContextFactory(ctx, controller.ContextOptions{
		Kubeconfig:         kubeconfig,
		KubernetesAPIQPS:   20,
		KubernetesAPIBurst: 50,
		IssuerOptions:      controller.IssuerOptions{ClusterResourceNamespace: clusterNS},
		CertificateOptions: controller.CertificateOptions{
			CertificateRequestMinimumBackoffDuration: time.Hour,
			CertificateRequestMaximumBackoffDuration: 32 * time.Hour,
		},
	})
	if err != nil {
		return err
	}
	base, err := factory.Build()
	if err != nil {
		return err
	}
	names := make([]string, 0, len(controller.Known()))
	for name := range controller.Known() {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		c, err := controller.Known()[name](factory)
		if err != nil {
			return fmt.Errorf("controller %s: %w", name, err)
		}
		g.Go(func() error { return c.Run(workers, ctx) })
	}
	fmt.Fprintf(os.Stderr, "cert-manager controller: running %v\n", names)
	base.SharedInformerFactory.Start(ctx.Done())
	base.KubeSharedInformerFactory.Start(ctx.Done())
	base.HTTP01ResourceMetadataInformersFactory.Start(ctx.Done())
	ready := make(chan struct{})
	if err := serveHealthz(ctx, g, healthz, ready); err != nil {
		return err
	}
	base.SharedInformerFactory.WaitForCacheSync(ctx.Done())
	close(ready)
	err = g.Wait()
	base.HTTP01ResourceMetadataInformersFactory.Shutdown()
	base.KubeSharedInformerFactory.Shutdown()
	base.SharedInformerFactory.Shutdown()
	if rootCtx.Err() != nil {
		return nil
	}
	return err
}

func runCAInjector(ctx context.Context, kubeconfig, healthz string) error {
	restConfig, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	restConfig.UserAgent = "cert-manager-cainjector"
	ctrl.SetLogger(logf.Log)
	scheme := kscheme.Scheme
	utilruntime.Must(cmscheme.AddToScheme(scheme))
	utilruntime.Must(apiext.AddToScheme(scheme))
	utilruntime.Must(apireg.AddToScheme(scheme))
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: healthz,
		// As cert-manager's cainjector: Secrets are read directly, never cached cluster-wide.
		Client: client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},
	})
	if err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("ping", func(*http.Request) error { return nil }); err != nil {
		return err
	}
	if err := cainjector.RegisterAllInjectors(ctx, mgr, cainjector.SetupOptions{
		EnableCertificatesDataSource: true,
		EnabledReconcilersFor: map[string]bool{
			cainjector.MutatingWebhookConfigurationName:   true,
			cainjector.ValidatingWebhookConfigurationName: true,
			cainjector.APIServiceName:                     true,
			cainjector.CustomResourceDefinitionName:       true,
		},
	}); err != nil {
		return err
	}
	return mgr.Start(ctx)
}
