package main

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// sample is one series of a Prometheus text exposition.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

var labelRE = regexp.MustCompile(`(\w+)="((?:[^"\\]|\\.)*)"`)

func parseMetrics(r io.Reader) []sample {
	var out []sample
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		s := sample{labels: map[string]string{}}
		rest := line
		if i := strings.IndexByte(line, '{'); i >= 0 {
			j := strings.LastIndexByte(line, '}')
			if j < i {
				continue
			}
			s.name = line[:i]
			for _, m := range labelRE.FindAllStringSubmatch(line[i+1:j], -1) {
				s.labels[m[1]] = m[2]
			}
			rest = strings.TrimSpace(line[j+1:])
		} else {
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			s.name, rest = f[0], f[1]
		}
		v, err := strconv.ParseFloat(strings.Fields(rest)[0], 64)
		if err != nil {
			continue
		}
		s.value = v
		out = append(out, s)
	}
	return out
}

func readMetricsFile(path string) ([]sample, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseMetrics(f), nil
}

// selector is NAME or NAME{k="v",...}: the sum of the series that match.
type selector struct {
	name   string
	labels map[string]string
}

func parseSelector(s string) selector {
	sel := selector{name: s, labels: map[string]string{}}
	if i := strings.IndexByte(s, '{'); i >= 0 {
		sel.name = s[:i]
		for _, m := range labelRE.FindAllStringSubmatch(s[i:], -1) {
			sel.labels[m[1]] = m[2]
		}
	}
	return sel
}

func (sel selector) sum(samples []sample) (float64, bool) {
	total, found := 0.0, false
next:
	for _, s := range samples {
		if s.name != sel.name {
			continue
		}
		for k, v := range sel.labels {
			if s.labels[k] != v {
				continue next
			}
		}
		total += s.value
		found = true
	}
	return total, found
}

// serverClient reaches a ray-webhook's /metrics over TLS: its CA, and the
// Service's name as the server name when -server-name is given.
func serverClient(caFile, serverName string) (*http.Client, error) {
	pool := x509.NewCertPool()
	pem, err := os.ReadFile(caFile)
	if err != nil || !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("CA %s: %v", caFile, err)
	}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: serverName}}}, nil
}

func scrape(c *http.Client, url string) ([]sample, error) {
	resp, err := c.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	return parseMetrics(resp.Body), nil
}

// auditResources are the resources the audit reads.
var auditResources = []string{"pods", "rayclusters", "rayjobs", "rayservices", "raycronjobs", "deployments"}

func sizes(args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("sizes BEFORE AFTER")
	}
	before, err := readMetricsFile(args[0])
	if err != nil {
		return err
	}
	after, err := readMetricsFile(args[1])
	if err != nil {
		return err
	}
	out := map[string]float64{}
	diff := func(sel selector) float64 {
		a, _ := sel.sum(after)
		b, _ := sel.sum(before)
		return a - b
	}
	var list, watch, lists float64
	for _, r := range auditResources {
		l := diff(selector{"apiserver_response_sizes_sum", map[string]string{"verb": "LIST", "resource": r}})
		n := diff(selector{"apiserver_response_sizes_count", map[string]string{"verb": "LIST", "resource": r}})
		w := diff(selector{"apiserver_watch_events_sizes_sum", map[string]string{"resource": r}})
		out["list_bytes_"+r], out["lists_"+r], out["watch_bytes_"+r] = l, n, w
		list, watch, lists = list+l, watch+w, lists+n
	}
	out["list_bytes"], out["watch_bytes"], out["lists"] = list, watch, lists
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
	return nil
}

func hist(args []string) error {
	fs := flag.NewFlagSet("hist", flag.ExitOnError)
	metric := fs.String("metric", "", "the histogram's name")
	label := fs.String("label", "", "one result per value of this label (default: all together)")
	_ = fs.Parse(args)
	if *metric == "" || fs.NArg() != 2 {
		return fmt.Errorf("hist -metric NAME [-label L] BEFORE AFTER")
	}
	before, err := readMetricsFile(fs.Arg(0))
	if err != nil {
		return err
	}
	after, err := readMetricsFile(fs.Arg(1))
	if err != nil {
		return err
	}
	buckets := func(samples []sample) map[string]map[float64]float64 {
		out := map[string]map[float64]float64{}
		for _, s := range samples {
			if s.name != *metric+"_bucket" || s.labels["rejected"] == "true" {
				continue
			}
			le, err := strconv.ParseFloat(s.labels["le"], 64)
			if err != nil {
				continue
			}
			key := ""
			if *label != "" {
				key = s.labels[*label]
			}
			if out[key] == nil {
				out[key] = map[float64]float64{}
			}
			out[key][le] += s.value
		}
		return out
	}
	b, a := buckets(before), buckets(after)
	result := map[string]any{}
	for key, m := range a {
		var les []float64
		for le := range m {
			les = append(les, le)
		}
		sort.Float64s(les)
		counts := make([]float64, len(les))
		for i, le := range les {
			counts[i] = m[le] - b[key][le]
		}
		total := counts[len(counts)-1]
		if total <= 0 {
			continue
		}
		q := func(q float64) map[string]float64 {
			for i, c := range counts {
				if c >= q*total {
					lo, below := 0.0, 0.0
					if i > 0 {
						lo, below = les[i-1], counts[i-1]
					}
					hi := les[i]
					v := hi
					if !math.IsInf(hi, 1) && c > below {
						v = lo + (hi-lo)*(q*total-below)/(c-below)
					} else if math.IsInf(hi, 1) {
						v, hi = lo, lo
					}
					return map[string]float64{"ms": v * 1000, "bucket_lo_ms": lo * 1000, "bucket_hi_ms": hi * 1000}
				}
			}
			return nil
		}
		result[key] = map[string]any{"count": total, "p50": q(0.5), "p99": q(0.99)}
	}
	out, _ := json.Marshal(result)
	fmt.Println(string(out))
	return nil
}

func gauge(args []string) error {
	fs := flag.NewFlagSet("gauge", flag.ExitOnError)
	url := fs.String("metrics", "", "the server's /metrics URL")
	ca := fs.String("ca", "", "its CA")
	name := fs.String("server-name", "", "TLS server name")
	_ = fs.Parse(args)
	c, err := serverClient(*ca, *name)
	if err != nil {
		return err
	}
	samples, err := scrape(c, *url)
	if err != nil {
		return err
	}
	out := map[string]any{}
	for _, s := range fs.Args() {
		if v, ok := parseSelector(s).sum(samples); ok {
			out[s] = v
		} else {
			out[s] = nil
		}
	}
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
	return nil
}
