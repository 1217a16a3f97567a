#!/usr/bin/env python3
"""bench/audit-scale.sh's tables: results.json in markdown, the phases side by side.

    bench/audit-scale-table.py RESULTS_JSON
"""
import json
import sys

MIB = 1024 * 1024


def num(v, fmt="{:.1f}"):
    return "–" if v is None else fmt.format(v)


def get(d, *path):
    for p in path:
        if not isinstance(d, dict) or p not in d:
            return None
        d = d[p]
    return d


def main():
    r = json.load(open(sys.argv[1]))
    cfg, scale, phases = r["config"], r["scale"], r["phases"]
    pop = scale["populate"]
    print(f"## {cfg['nodes']} Nodes, {cfg['clusters']} RayClusters, {pop['pods']} Pods "
          f"({cfg['namespaces']} namespaces); {cfg['ray_webhook']}")
    print()
    print("| creation | |")
    print("|---|---|")
    print(f"| objects created (Nodes, namespaces, RayClusters, Pods) | {scale['create_seconds']} s "
          f"({num(pop.get('objects_per_second'))} RayClusters+Pods/s; {num(pop.get('seconds_per_1000_pods'))} s per 1,000 Pods) |")
    running = scale.get("all_pods_running")
    if running is None:  # runs before the one-item page counted them
        running = scale.get("pods_not_running") == 0
    print(f"| until KWOK had them all Running and its CPU stopped falling | {scale['settled_seconds']} s "
          f"(every Pod Running then: {'yes' if running else 'no'}) |")
    print(f"| CPU s over both: kube-apiserver, etcd, KWOK | {num(scale['cpu_seconds']['kube-apiserver'], '{:.0f}')}, "
          f"{num(scale['cpu_seconds']['etcd'], '{:.0f}')}, {num(scale['cpu_seconds']['kwok'], '{:.0f}')} |")
    print(f"| RSS MiB then: kube-apiserver, etcd, KWOK | {num(scale['rss_mib']['kube-apiserver'], '{:.0f}')}, "
          f"{num(scale['rss_mib']['etcd'], '{:.0f}')}, {num(scale['rss_mib']['kwok'], '{:.0f}')} "
          f"(peak kube-apiserver {num(scale['peak_rss_mib']['kube-apiserver'], '{:.0f}')}, "
          f"etcd {num(scale['peak_rss_mib']['etcd'], '{:.0f}')}) |")
    print(f"| etcd's data directory | {num(scale.get('etcd_data_mib'), '{:.0f}')} MiB |")
    print()

    base = next((p for p in phases if p["phase"] == "a"), None)
    names = {"a": "no audit", "b": "periodic", "c": "watch"}
    print("| per phase | " + " | ".join(f"{p.get('label', p['phase'])}: {names[p['phase']]}" for p in phases) + " |")
    print("|---|" + "---|" * len(phases))

    def row(label, f):
        print(f"| {label} | " + " | ".join(f(p) for p in phases) + " |")

    def base_value(p, *path):
        # The no-audit windows just before and after p (in the order they ran), their mean.
        if p["phase"] == "a":
            return None
        i = phases.index(p)
        before = next((q for q in reversed(phases[:i]) if q["phase"] == "a"), None)
        after = next((q for q in phases[i + 1:] if q["phase"] == "a"), None)
        values = [get(q, *path) for q in (before, after) if q is not None and get(q, *path) is not None]
        return sum(values) / len(values) if values else None

    def minus_base(path, scale_by=1.0, fmt="{:.0f}"):
        def f(p):
            v = get(p, *path)
            if v is None:
                return "–"
            s = fmt.format(v / scale_by)
            b = base_value(p, *path)
            if b is not None:
                s += " (" + ("{:+.0f}" if fmt == "{:.0f}" else "{:+.1f}").format((v - b) / scale_by) + ")"
            return s
        return f

    row("ray-webhook flags", lambda p: "`" + p["args"] + "`" if p["args"] else "(as deployed)")
    row("first audit done, s after the start", lambda p: num(p["first_audit_seconds"], "{:.0f}"))
    row("ray-webhook RSS MiB, peak (VmHWM)", lambda p: num(p["server_rss_mib"]["peak"]))
    row("ray-webhook RSS MiB, steady (median VmRSS)", lambda p: num(p["server_rss_mib"]["steady"]))
    row("kube-apiserver CPU s/hour (over a)", minus_base(["cpu_seconds_per_hour", "kube-apiserver"]))
    if any((get(p, "audits_at_once") or 0) > 1 for p in phases):
        def per_audit(p):
            n, b = get(p, "audits_at_once"), base_value(p, "cpu_seconds_per_hour", "kube-apiserver")
            if not n or b is None:
                return "–"
            return f"{(p['cpu_seconds_per_hour']['kube-apiserver'] - b) / n:+.1f} ({n} at once)"

        row("kube-apiserver CPU s/hour over a, per audit (--watchers)", per_audit)
    if any(get(p, "cpu_seconds_per_hour", "kube-apiserver-gc") is not None for p in phases):
        # Its Go runtime's collections of a heap of gigabytes: seconds each, every two minutes or so even
        # when idle, so a window holding one more moves the total; the rest is steadier.
        for q in phases:
            gc = get(q, "cpu_seconds_per_hour", "kube-apiserver-gc")
            if gc is not None:
                q["cpu_seconds_per_hour"]["kube-apiserver-other"] = q["cpu_seconds_per_hour"]["kube-apiserver"] - gc
        row("of which in garbage collection (over a)", minus_base(["cpu_seconds_per_hour", "kube-apiserver-gc"]))
        row("of which the rest (over a)", minus_base(["cpu_seconds_per_hour", "kube-apiserver-other"]))
        row("kube-apiserver allocations MiB/hour (over a)", minus_base(["apiserver_allocated_mib_per_hour"]))
    if any(get(p, "apiserver_pod_consistency_checks") is not None for p in phases):
        # Each lists every Pod from the watch cache and from etcd: some 10 CPU-seconds at 100,000 Pods.
        row("kube-apiserver consistency checks of every Pod in the window",
            lambda p: num(get(p, "apiserver_pod_consistency_checks"), "{:.0f}"))
    def per_list_round(p):
        # Each round of the audit's lists holds one LIST of RayCronJobs (one page: none are made here).
        rounds = get(p, "sizes", "lists_raycronjobs")
        b = base_value(p, "cpu_seconds_per_hour", "kube-apiserver")
        if b is None or not rounds:
            return "–"
        over = get(p, "cpu_seconds_per_hour", "kube-apiserver") - b
        return f"{over * p['window_seconds'] / 3600 / rounds:.1f} ({rounds} rounds)"

    row("kube-apiserver CPU s per round of the audit's lists (over a)", per_list_round)
    row("etcd CPU s/hour (over a)", minus_base(["cpu_seconds_per_hour", "etcd"]))
    row("KWOK CPU s/hour", lambda p: num(p["cpu_seconds_per_hour"]["kwok"], "{:.0f}"))
    row("ray-webhook CPU s/hour", lambda p: num(p["cpu_seconds_per_hour"]["ray-webhook"], "{:.0f}"))
    row("LIST bytes sent, MiB/hour (over a)", minus_base(["sent_bytes_per_hour", "list"], MIB, "{:.1f}"))
    row("LIST requests/hour", lambda p: num(p["sent_bytes_per_hour"]["lists"], "{:.0f}"))
    row("watch event bytes sent, MiB/hour (over a)", minus_base(["sent_bytes_per_hour", "watch"], MIB, "{:.1f}"))

    def probe(kind, what, key):
        def f(p):
            st = get(p, "probes", kind, "stats", f"{what} {key}")
            if not st:
                return "–"
            if not st.get("count"):
                return f"none of {st['missing']}"
            s = f"{st['p50']:.1f} / {st['p99']:.1f}"
            if st.get("missing"):
                s += f" ({st['missing']} missing)"
            return s
        return f

    for kind, series in (("extra-head", ["ray_webhook_rayclusters_with_extra_heads",
                                         'ray_webhook_audit_findings{rule="extra-head"}', "report"]),
                         ("finished-job", ['ray_webhook_audit_findings{rule="finished-job-cluster"}', "report"])):
        if not any(get(p, "probes", kind) for p in phases):
            continue
        for what in ("detect", "clear"):
            for key in series:
                label = "the Report" if key == "report" else f"`{key}`"
                verb = "counted in" if what == "detect" else "gone from"
                row(f"{kind}: s until {verb} {label}, p50 / p99", probe(kind, what, key))

    def adm(source, q):
        # The histogram's buckets are coarse (kube-apiserver's start at 5, 25, 100 ms): a
        # quantile in the first bucket is shown as "<bound", others interpolated with their bucket.
        def value(p):
            h = (p or {}).get(source) or {}
            if not h:
                return None
            k = max(h, key=lambda k: h[k]["count"])  # per webhook name: the one called most
            return h[k].get(q)

        def f(p):
            v = value(p)
            if v is None:
                return "–"
            if v["bucket_lo_ms"] == 0:
                return f"<{v['bucket_hi_ms']:g}"
            s = f"{v['ms']:.2f} ({v['bucket_lo_ms']:g}–{v['bucket_hi_ms']:g})"
            b = value(base) if base is not None else None
            if b and p is not base and b["bucket_lo_ms"] > 0:
                s += f", {v['ms'] / b['ms']:.2f}x"
            return s
        return f

    if not any(p.get("podload") for p in phases):  # --admission-pods 0
        return
    row("admission p50 ms, kube-apiserver's webhook histogram (x a)", adm("admission_apiserver", "p50"))
    row("admission p99 ms, kube-apiserver's webhook histogram (x a)", adm("admission_apiserver", "p99"))
    row("admission p50 ms, ray-webhook's own histogram (x a)", adm("admission_own", "p50"))
    row("admission p99 ms, ray-webhook's own histogram (x a)", adm("admission_own", "p99"))
    def round_trip(p):
        pl = p["podload"]
        if not pl:
            return "–"
        s = f"{pl['p50_ms']:.1f} / {pl['p99_ms']:.1f}"
        if base is not None and p is not base and base["podload"] and base["podload"]["p50_ms"] and base["podload"]["p99_ms"]:
            s += f" ({pl['p50_ms'] / base['podload']['p50_ms']:.2f}x / {pl['p99_ms'] / base['podload']['p99_ms']:.2f}x)"
        if pl.get("failed"):
            s += f", {pl['failed']} failed"
        return s

    row("Pod creation round trip p50 / p99 ms, podload (x a)", round_trip)

if __name__ == "__main__":
    main()
