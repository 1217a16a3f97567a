// Command recorder is a stand-in admission webhook for one step of the
// end-to-end suite: scripts/e2e.sh points the shipped webhook configurations at
// it for a moment, so the request kube-apiserver really sends (method, path
// with ?timeout=, headers, TLS version, ALPN offered and chosen, SNI) is
// written down once and the benchmarks can send the same. It allows every
// review, answering in the AdmissionReview version it received with the
// request's uid, and exits by itself after -max requests or -timeout.
//
//	recorder -addr 10.200.0.1:9443 -cert tls.crt -key tls.key -out requests.jsonl
package main

import (
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
)

type hello struct {
	ServerName      string   `json:"sni"`
	SupportedProtos []string `json:"alpn_offered"`
	Versions        []string `json:"tls_versions_offered"`
}

type record struct {
	Method        string              `json:"method"`
	RequestURI    string              `json:"request_uri"`
	Proto         string              `json:"proto"`
	Host          string              `json:"host"`
	ContentLength int64               `json:"content_length"`
	Header        map[string][]string `json:"header"`
	TLSVersion    string              `json:"tls_version"`
	ALPN          string              `json:"alpn_negotiated"`
	Hello         *hello              `json:"client_hello,omitempty"`
	ReviewVersion string              `json:"review_api_version"`
	DryRun        *bool               `json:"dry_run,omitempty"`
	Operation     string              `json:"operation"`
	BodyBytes     int                 `json:"body_bytes"`
}

func versionName(v uint16) string {
	switch v {
	case tls.VersionTLS10:
		return "TLS1.0"
	case tls.VersionTLS11:
		return "TLS1.1"
	case tls.VersionTLS12:
		return "TLS1.2"
	case tls.VersionTLS13:
		return "TLS1.3"
	}
	return fmt.Sprintf("0x%04x", v)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:9443", "listen address")
	certFile := flag.String("cert", "tls.crt", "serving certificate (PEM)")
	keyFile := flag.String("key", "tls.key", "its key (PEM)")
	out := flag.String("out", "-", "file the records are appended to, one JSON object a line")
	max := flag.Int("max", 4, "exit after this many requests")
	timeout := flag.Duration("timeout", 60*time.Second, "exit after this long in any case")
	flag.Parse()

	pair, err := tls.LoadX509KeyPair(*certFile, *keyFile)
	if err != nil {
		log.Fatalf("recorder: %v", err)
	}
	var w io.Writer = os.Stdout
	if *out != "-" {
		f, err := os.OpenFile(*out, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			log.Fatalf("recorder: %v", err)
		}
		defer f.Close()
		w = f
	}

	var mu sync.Mutex
	hellos := map[string]*hello{} // by remote address
	count := 0
	done := make(chan struct{})

	base := &tls.Config{Certificates: []tls.Certificate{pair}, NextProtos: []string{"h2", "http/1.1"}}
	base.GetConfigForClient = func(chi *tls.ClientHelloInfo) (*tls.Config, error) {
		h := &hello{ServerName: chi.ServerName, SupportedProtos: append([]string(nil), chi.SupportedProtos...)}
		for _, v := range chi.SupportedVersions {
			h.Versions = append(h.Versions, versionName(v))
		}
		mu.Lock()
		hellos[chi.Conn.RemoteAddr().String()] = h
		mu.Unlock()
		return nil, nil
	}

	handler := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 8<<20))
		var review struct {
			APIVersion string `json:"apiVersion"`
			Request    struct {
				UID       string `json:"uid"`
				DryRun    *bool  `json:"dryRun"`
				Operation string `json:"operation"`
			} `json:"request"`
		}
		_ = json.Unmarshal(body, &review)
		rec := record{
			Method: r.Method, RequestURI: r.RequestURI, Proto: r.Proto, Host: r.Host,
			ContentLength: r.ContentLength, Header: map[string][]string{},
			ReviewVersion: review.APIVersion, DryRun: review.Request.DryRun,
			Operation: review.Request.Operation, BodyBytes: len(body),
		}
		keys := make([]string, 0, len(r.Header))
		for k := range r.Header {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			rec.Header[k] = r.Header[k]
		}
		if r.TLS != nil {
			rec.TLSVersion = versionName(r.TLS.Version)
			rec.ALPN = r.TLS.NegotiatedProtocol
		}
		mu.Lock()
		rec.Hello = hellos[r.RemoteAddr]
		line, _ := json.Marshal(rec)
		fmt.Fprintln(w, string(line))
		count++
		finished := count >= *max
		mu.Unlock()

		apiVersion := review.APIVersion
		if !strings.HasPrefix(apiVersion, "admission.k8s.io/") {
			apiVersion = "admission.k8s.io/v1"
		}
		answer, _ := json.Marshal(map[string]any{
			"apiVersion": apiVersion,
			"kind":       "AdmissionReview",
			"response":   map[string]any{"uid": review.Request.UID, "allowed": true},
		})
		rw.Header().Set("Content-Type", "application/json")
		_, _ = rw.Write(answer)
		if finished {
			select {
			case <-done:
			default:
				close(done)
			}
		}
	})

	srv := &http.Server{Addr: *addr, Handler: handler, TLSConfig: base, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.ListenAndServeTLS("", ""); err != nil && err != http.ErrServerClosed {
			log.Fatalf("recorder: %v", err)
		}
	}()
	select {
	case <-done:
		// Let the last answer leave before the listener closes.
		time.Sleep(200 * time.Millisecond)
	case <-time.After(*timeout):
		log.Printf("recorder: %d request(s) after %s, stopping", count, *timeout)
	}
	_ = srv.Close()
}
