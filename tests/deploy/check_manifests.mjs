// node check_manifests.mjs --dockerfile FILE [--base RENDERED.yaml] RENDERED.yaml...
//
// Cross-object checks on what `kubectl kustomize` renders from deploy/: the
// things a schema cannot see, which break a webhook in a real cluster.
//   - the Service reaches the container's port, and the server's --port;
//   - every webhook calls that Service, on the server's routes (/admit or
//     /mutate for the mutating entry, /validate for the validating ones);
//   - selectors: never kube-system or the webhook's own namespace, only Ray Pods
//     unless a namespace opts in; a Ray Pod reviewed in one call (/admit) or in
//     two (/mutate, then /validate), failing closed; no Pod reviewed twice; one validating
//     entry for RayClusters, RayJobs and RayServices;
//   - probes hit /readyz and /healthz over plain HTTP on the container port
//     that is the server's --probe-port (the webhook port may require client
//     certificates, which the kubelet does not present);
//   - terminationGracePeriodSeconds covers --drain-delay + --shutdown-grace;
//   - the serving certificate: mounted where the image's --cert-dir points, its
//     DNS names are the Service's, and the caBundle (cert-manager's injection or
//     the static one) is a CA that verifies it;
//   - RBAC for the head lookup, security context, replicas, PDB, spread;
//   - a settled-worker condition is the chart's files/settled-worker.cel.
// --base marks a render without a certificate source (deploy/base alone).
// Prints PASS/FAIL per check and "N passed, M failed"; exits 1 on any failure.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import YAML from "yaml";

// ---- the server's facts (README.md, `ray-webhook serve --help`) ----
// The mutating entry calls /admit (every Pod rule in one call) or /mutate
// (the patch alone, with a validating entry for the rest).
const ROUTES = { mutating: ["/admit", "/mutate"], validating: ["/validate"] };
const READY_PATH = "/readyz";
const LIVE_PATH = "/healthz";
const DEFAULT_PORT = 8443;
const DEFAULT_PROBE_PORT = 8081;
const DEFAULT_DRAIN_MS = 5000;
const DEFAULT_GRACE_MS = 30000;
const MODES = ["enforce", "warn", "off"];
const FLAG_VALUES = {
  "--head-uniqueness": ["name", "lookup", "name+lookup", "off"],
  "--head-name-mode": MODES,
  "--second-head-mode": MODES,
  "--duplicate-mount-mode": MODES,
  "--head-lookup-failure": ["allow", "deny"],
  "--log-level": ["trace", "debug", "info", "warn", "error", "critical", "off"],
  "--tls-min-version": ["1.2", "1.3"],
  "--audit-reports": ["openreports.io/v1alpha1", "wgpolicyk8s.io/v1alpha2", "off"],
  "--audit-mode": ["watch", "list"],
};
const DURATION_FLAGS = ["--drain-delay", "--shutdown-grace", "--kube-api-timeout", "--idle-timeout",
  "--request-timeout", "--cert-reload-interval", "--audit-interval"];
const KNOWN_FLAGS = new Set([...Object.keys(FLAG_VALUES), ...DURATION_FLAGS, "--bind", "--port",
  "--tls-cert", "--tls-key", "--cert-dir", "--client-ca", "--cluster-domain", "--threads",
  "--max-connections", "--kube-api-server", "--kube-token-file", "--kube-ca-file", "--busy-poll", "--probe-port",
  "--kuberay-version", "--kuberay-feature-gates", "--kuberay-operator-namespace", "--kuberay-operator-selector",
  "--spec-rule-mode", "--spec-rule"]);
// Fields of admissionregistration.k8s.io/v1 webhooks. The schema validator
// accepts unknown fields, and a misspelt one is silently dropped by the API
// server (an `objectSelectors:` would match every Pod).
const WEBHOOK_FIELDS = new Set(["name", "clientConfig", "rules", "failurePolicy", "matchPolicy",
  "namespaceSelector", "objectSelector", "sideEffects", "timeoutSeconds", "admissionReviewVersions",
  "matchConditions", "reinvocationPolicy"]);

// ---- arguments ----
const argv = process.argv.slice(2);
let dockerfile = null;
const files = [];
const baseFiles = new Set();
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === "--dockerfile") dockerfile = argv[++i];
  else if (argv[i] === "--base") { baseFiles.add(argv[++i]); files.push(argv[i]); }
  else files.push(argv[i]);
}
if (!dockerfile || files.length === 0) {
  console.error("usage: node check_manifests.mjs --dockerfile FILE [--base RENDERED.yaml] RENDERED.yaml...");
  process.exit(2);
}

let passed = 0;
let failed = 0;
let scope = "";
function check(ok, what, detail = "") {
  if (ok) {
    passed++;
    console.log(`PASS ${scope}: ${what}`);
  } else {
    failed++;
    console.log(`FAIL ${scope}: ${what}${detail ? ` (${detail})` : ""}`);
  }
  return ok;
}

// ---- helpers ----
function loadObjects(file) {
  return YAML.parseAllDocuments(fs.readFileSync(file, "utf8"))
    .map((d) => {
      if (d.errors.length) throw new Error(`${file}: ${d.errors[0].message}`);
      return d.toJS();
    })
    .filter((o) => o);
}

// The entry for ray.io objects (RayCluster, RayJob, RayService) rather than Pods.
function isRayObjectEntry(w) {
  return (w.rules ?? []).some((r) => (r.apiGroups ?? []).includes("ray.io"));
}

// Kubernetes label selector semantics (metav1.LabelSelector): absent selects all.
function selects(selector, labels) {
  if (!selector) return true;
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, e.key);
    const values = e.values ?? [];
    switch (e.operator) {
      case "In": if (!has || !values.includes(labels[e.key])) return false; break;
      case "NotIn": if (has && values.includes(labels[e.key])) return false; break;
      case "Exists": if (!has) return false; break;
      case "DoesNotExist": if (has) return false; break;
      default: throw new Error(`unknown selector operator ${e.operator}`);
    }
  }
  return true;
}
const subset = (small, big) => Object.entries(small ?? {}).every(([k, v]) => big?.[k] === v);

function durationMs(s) {
  const m = /^(\d+)(ms|s|m)?$/.exec(String(s));
  if (!m) return null;
  return Number(m[1]) * ({ ms: 1, s: 1000, m: 60000 }[m[2] ?? "s"]);
}

// "--flag=value" and "--flag value" into [[flag, value]...]; a bare
// positional word is reported as [word, undefined].
function parseFlags(args) {
  const out = [];
  for (let i = 0; i < args.length; i++) {
    const a = String(args[i]);
    if (!a.startsWith("--")) { out.push([a, undefined]); continue; }
    const eq = a.indexOf("=");
    if (eq > 0) out.push([a.slice(0, eq), a.slice(eq + 1)]);
    else out.push([a, args[++i] === undefined ? undefined : String(args[i])]);
  }
  return out;
}

// The runtime stage's ENTRYPOINT and USER, read from the Dockerfile.
function dockerfileFacts(file) {
  const text = fs.readFileSync(file, "utf8").replace(/\\\n/g, " ");
  const stages = text.split(/^FROM\s/m);
  const last = stages[stages.length - 1];
  const ep = /^ENTRYPOINT\s+(\[.*\])\s*$/m.exec(last);
  const user = /^USER\s+(\S+)\s*$/m.exec(last);
  return { entrypoint: ep ? JSON.parse(ep[1]) : null, user: user ? user[1] : null };
}

function resolvePort(container, port) {
  if (typeof port === "number") return (container.ports ?? []).find((p) => p.containerPort === port);
  return (container.ports ?? []).find((p) => p.name === port);
}

function pemFromB64(b64) {
  return Buffer.from(b64, "base64").toString("utf8");
}

// ---- the checks, one rendered kustomization at a time ----
const image = dockerfileFacts(dockerfile);
// The one expression that skips settled workers, shared with the chart.
const SETTLED_WORKER = fs.readFileSync(new URL("../../charts/ray-webhook/files/settled-worker.cel", import.meta.url),
  "utf8").trim();
for (const file of files) {
  scope = path.basename(file, ".yaml");
  let objects;
  try {
    objects = loadObjects(file);
  } catch (e) {
    check(false, "rendered YAML parses", e.message);
    continue;
  }
  const all = (kind) => objects.filter((o) => o.kind === kind);
  const one = (kind) => {
    const found = all(kind);
    check(found.length === 1, `exactly one ${kind}`, `found ${found.length}`);
    return found[0];
  };

  const ns = one("Namespace");
  const sa = one("ServiceAccount");
  const deploy = one("Deployment");
  const svc = one("Service");
  const pdb = one("PodDisruptionBudget");
  const role = one("ClusterRole");
  const binding = one("ClusterRoleBinding");
  const mwc = one("MutatingWebhookConfiguration");
  const vwc = one("ValidatingWebhookConfiguration");
  if (!ns || !sa || !deploy || !svc || !pdb || !role || !binding || !mwc || !vwc) continue;
  const nsName = ns.metadata.name;

  // Namespaces.
  const clusterScoped = new Set(["Namespace", "ClusterRole", "ClusterRoleBinding",
    "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]);
  const strays = objects.filter((o) => !clusterScoped.has(o.kind) && o.metadata?.namespace !== nsName);
  check(strays.length === 0, `every namespaced object is in namespace ${nsName}`,
    strays.map((o) => `${o.kind} ${o.metadata?.name} in ${o.metadata?.namespace ?? "(none)"}`).join(", "));

  // Deployment, its Pod template and container.
  const tmpl = deploy.spec.template;
  const podLabels = tmpl.metadata?.labels ?? {};
  const pod = tmpl.spec;
  check(subset(deploy.spec.selector?.matchLabels, podLabels) && selects(deploy.spec.selector, podLabels),
    "Deployment selector matches its Pod template");
  check((deploy.spec.replicas ?? 1) >= 2, "Deployment runs at least 2 replicas", `replicas ${deploy.spec.replicas}`);
  const container = pod.containers?.[0];
  if (!check(!!container, "Deployment has a container")) continue;
  check(pod.containers.length === 1, "one container per Pod", `${pod.containers.length}`);

  const flags = parseFlags(container.args ?? []);
  for (const [flag, value] of flags) {
    if (!KNOWN_FLAGS.has(flag)) { check(false, `argument ${flag} is a flag of ray-webhook serve`); continue; }
    if (value === undefined) { check(false, `${flag} has a value`); continue; }
    if (FLAG_VALUES[flag]) check(FLAG_VALUES[flag].includes(value), `${flag}=${value} is one of ${FLAG_VALUES[flag].join("|")}`);
    if (DURATION_FLAGS.includes(flag)) check(durationMs(value) !== null, `${flag}=${value} is a duration`);
  }
  const flag = (name) => { const f = flags.filter(([k]) => k === name); return f.length ? f[f.length - 1][1] : undefined; };
  const seen = new Set();
  const repeated = flags.map(([k]) => k).filter((k) => seen.has(k) || !seen.add(k));
  check(repeated.length === 0, "no flag given twice", repeated.join(", "));
  check(flag("--tls-cert") === undefined && flag("--tls-key") === undefined && flag("--cert-dir") === undefined,
    "the certificate comes from the image's --cert-dir, not from extra flags");

  // The image's entrypoint runs `ray-webhook serve --cert-dir DIR`; the
  // Deployment must not replace it, and must mount the serving Secret at DIR.
  const ep = image.entrypoint ?? [];
  const certDir = ep[ep.indexOf("--cert-dir") + 1];
  check(ep[0] === "ray-webhook" && ep[1] === "serve" && ep.includes("--cert-dir") && !!certDir,
    `Dockerfile ENTRYPOINT is ray-webhook serve --cert-dir DIR`, JSON.stringify(image.entrypoint));
  check(container.command === undefined, "the container keeps the image's ENTRYPOINT (no command override)");
  const mount = (container.volumeMounts ?? []).find((m) => m.mountPath.replace(/\/$/, "") === String(certDir).replace(/\/$/, ""));
  const certVolume = mount && (pod.volumes ?? []).find((v) => v.name === mount.name);
  const servingSecret = certVolume?.secret?.secretName;
  check(!!servingSecret, `a Secret volume is mounted at the image's --cert-dir ${certDir}`);
  check(mount?.readOnly === true, "the certificate mount is read-only");

  // Ports: container, --port, Service.
  const httpsPort = (container.ports ?? [])[0];
  check(!!httpsPort?.name, "the container port is named", JSON.stringify(container.ports));
  const serverPort = Number(flag("--port") ?? DEFAULT_PORT);
  check(httpsPort?.containerPort === serverPort, `containerPort is the server's --port ${serverPort}`,
    `containerPort ${httpsPort?.containerPort}`);
  check(subset(svc.spec.selector, podLabels) && Object.keys(svc.spec.selector ?? {}).length > 0,
    `Service ${svc.metadata.name} selects the Deployment's Pods`);
  for (const p of svc.spec.ports ?? []) {
    const target = resolvePort(container, p.targetPort ?? p.port);
    check(target?.containerPort === serverPort,
      `Service port ${p.port} targets the container port (${p.targetPort} -> ${serverPort})`,
      `resolves to ${target?.containerPort}`);
  }
  check((svc.spec.ports ?? []).some((p) => p.port === 443), "Service listens on 443");

  // Probes.
  for (const [kind, want] of [["readinessProbe", READY_PATH], ["livenessProbe", LIVE_PATH]]) {
    const probe = container[kind]?.httpGet;
    check(probe?.path === want, `${kind} GETs ${want}`, `path ${probe?.path}`);
    const probePort = Number(flag("--probe-port") ?? DEFAULT_PROBE_PORT);
    check(probePort !== 0, "the server serves its probe port (--probe-port is not 0)");
    check(probe?.scheme === "HTTP", `${kind} uses plain HTTP`, `scheme ${probe?.scheme}`);
    check(resolvePort(container, probe?.port)?.containerPort === probePort,
      `${kind} port ${probe?.port} is the container port of --probe-port ${probePort}`);
  }

  // Graceful shutdown.
  const drain = durationMs(flag("--drain-delay") ?? `${DEFAULT_DRAIN_MS}ms`);
  const grace = durationMs(flag("--shutdown-grace") ?? `${DEFAULT_GRACE_MS}ms`);
  const tgps = pod.terminationGracePeriodSeconds ?? 30;
  check(drain !== null && grace !== null && tgps * 1000 >= drain + grace,
    `terminationGracePeriodSeconds ${tgps}s covers --drain-delay ${drain}ms + --shutdown-grace ${grace}ms`);

  // Cluster domain: the env var the server reads the way the operator does.
  const domainEnv = (container.env ?? []).find((e) => e.name === "CLUSTER_DOMAIN");
  const domain = flag("--cluster-domain") ?? domainEnv?.value ?? "cluster.local";
  check(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(domain),
    `cluster domain "${domain}" is a DNS name`);

  // Security.
  const psc = pod.securityContext ?? {};
  const csc = container.securityContext ?? {};
  const uid = csc.runAsUser ?? psc.runAsUser;
  check((csc.runAsNonRoot ?? psc.runAsNonRoot) === true, "runAsNonRoot");
  check(Number.isInteger(uid) && uid > 0, `runs as a numeric non-root user (${uid})`);
  check(csc.readOnlyRootFilesystem === true, "readOnlyRootFilesystem");
  check(csc.allowPrivilegeEscalation === false, "allowPrivilegeEscalation false");
  check(csc.privileged !== true, "not privileged");
  check((csc.capabilities?.drop ?? []).includes("ALL") && !(csc.capabilities?.add ?? []).length,
    "all capabilities dropped, none added");
  check((csc.seccompProfile ?? psc.seccompProfile)?.type === "RuntimeDefault", "seccomp RuntimeDefault");
  const imageUid = Number(String(image.user ?? "").split(":")[0]);
  check(Number.isInteger(imageUid) && imageUid > 0 && imageUid === uid,
    `the Dockerfile's USER ${image.user} is the same numeric user`);
  const res = container.resources ?? {};
  check(["cpu", "memory"].every((r) => res.requests?.[r] && res.limits?.[r]), "cpu and memory requests and limits set");

  // Availability.
  const spread = (pod.topologySpreadConstraints ?? []).find((t) => t.topologyKey === "kubernetes.io/hostname");
  check(!!spread && selects(spread.labelSelector, podLabels) && Object.keys(spread.labelSelector ?? {}).length > 0,
    "topology spread across nodes (kubernetes.io/hostname) selects the Deployment's Pods");
  check(pdb.spec.minAvailable === 1 && pdb.spec.maxUnavailable === undefined, "PodDisruptionBudget minAvailable 1");
  check(selects(pdb.spec.selector, podLabels) && Object.keys(pdb.spec.selector ?? {}).length > 0,
    "PodDisruptionBudget selects the Deployment's Pods");

  // RBAC for the second-head lookup.
  check(pod.serviceAccountName === sa.metadata.name, `Pods run as ServiceAccount ${sa.metadata.name}`);
  check(pod.automountServiceAccountToken !== false && sa.automountServiceAccountToken !== false,
    "the service account token is mounted (the head lookup uses it)");
  check(binding.roleRef?.kind === "ClusterRole" && binding.roleRef?.name === role.metadata.name,
    "ClusterRoleBinding refers to the ClusterRole");
  check((binding.subjects ?? []).some((s) => s.kind === "ServiceAccount" && s.name === sa.metadata.name && s.namespace === nsName),
    "ClusterRoleBinding binds the webhook's ServiceAccount");
  const podRule = (role.rules ?? []).find((r) => (r.apiGroups ?? []).includes("") && (r.resources ?? []).includes("pods"));
  check(!!podRule && ["get", "list"].every((v) => podRule.verbs.includes(v)), "ClusterRole grants get and list on pods");
  // The one write: the audit's own policy reports (--audit-reports), nothing else of their groups.
  const REPORTS = { "openreports.io": "reports", "wgpolicyk8s.io": "policyreports" };
  const reportRule = (r) => (r.apiGroups ?? []).length === 1 && REPORTS[r.apiGroups[0]] !== undefined
    && JSON.stringify(r.resources) === JSON.stringify([REPORTS[r.apiGroups[0]]]);
  const broad = (role.rules ?? []).filter((r) => [...(r.verbs ?? []), ...(r.resources ?? []), ...(r.apiGroups ?? [])].includes("*")
    || (r.verbs ?? []).some((v) => !["get", "list", "watch"].includes(v) && !(reportRule(r) && ["create", "patch", "delete"].includes(v)))
    || (r.resources ?? []).includes("secrets"));
  check(broad.length === 0, "ClusterRole is read-only but for the audit's policy reports, no wildcards, no secrets",
    JSON.stringify(broad));
  // The periodic audit (--audit-interval, deploy/overlays/audit) lists KubeRay's objects cluster-wide; without
  // it the webhook reads no ray.io object, so the grant comes only with the flag.
  const auditing = ![undefined, "0", "off"].includes(flag("--audit-interval"));
  const rayRules = (role.rules ?? []).filter((r) => (r.apiGroups ?? []).includes("ray.io"));
  const rayListed = ["rayclusters", "rayjobs", "rayservices", "raycronjobs"].every((res) =>
    rayRules.some((r) => r.resources.includes(res) && r.verbs.includes("list")));
  // --audit-mode watch (the default) watches them and the Ray Pods as well.
  const watching = flag("--audit-mode") !== "list";
  const rayWatched = ["rayclusters", "rayjobs", "rayservices", "raycronjobs"].every((res) =>
    rayRules.some((r) => r.resources.includes(res) && r.verbs.includes("watch")));
  const podsWatched = (role.rules ?? []).some((r) => (r.apiGroups ?? []).includes("") && (r.resources ?? []).includes("pods")
    && r.verbs.includes("watch"));
  const reportRules = (role.rules ?? []).filter(reportRule);
  if (auditing) {
    check(rayListed, "with --audit-interval, the ClusterRole lists rayclusters, rayjobs, rayservices and raycronjobs (ray.io)",
      JSON.stringify(rayRules));
    if (watching) {
      check(rayWatched && podsWatched, "with --audit-mode watch, the ClusterRole watches those and pods",
        JSON.stringify(role.rules));
    }
    // --audit-reports: openreports.io/v1alpha1 unless set; off writes none.
    const reportsFlag = flag("--audit-reports") ?? "openreports.io/v1alpha1";
    const group = reportsFlag.split("/")[0];
    check(reportsFlag === "off" || reportRules.some((r) => r.apiGroups[0] === group
      && ["get", "list", "create", "patch", "delete"].every((v) => r.verbs.includes(v))),
      `with --audit-interval, the ClusterRole writes the audit's policy reports (${reportsFlag})`,
      JSON.stringify(reportRules));
    check(durationMs(flag("--audit-interval")) >= 60000, "--audit-interval is a minute or more in a deployment",
      flag("--audit-interval"));
  }
  // --kuberay-version auto reads and watches the operator's Deployment: cluster-wide unless its namespace is named
  // (the chart's operatorNamespace puts the grant in a Role there instead).
  const deploymentRules = (role.rules ?? []).filter((r) => (r.apiGroups ?? []).includes("apps"));
  const following = (flag("--kuberay-version") ?? "").startsWith("auto") && flag("--kuberay-operator-namespace") === undefined;
  if (following) {
    check(deploymentRules.some((r) => r.resources.includes("deployments")
      && ["get", "list", "watch"].every((v) => r.verbs.includes(v))),
      "with --kuberay-version auto, the ClusterRole reads and watches deployments (apps)", JSON.stringify(deploymentRules));
  } else {
    check(deploymentRules.length === 0, "without --kuberay-version auto across namespaces, the ClusterRole grants nothing on apps",
      JSON.stringify(deploymentRules));
  }
  if (!auditing) {
    check(rayRules.length === 0, "without --audit-interval, the ClusterRole grants nothing on ray.io", JSON.stringify(rayRules));
    check(!podsWatched, "without --audit-interval, the ClusterRole does not watch pods", JSON.stringify(role.rules));
    check(reportRules.length === 0, "without --audit-interval, the ClusterRole grants nothing on policy reports",
      JSON.stringify(reportRules));
  }
  if (scope === "overlays_audit") check(auditing, "overlays/audit turns the periodic audit on");

  // Webhooks.
  const svcDnsNames = [`${svc.metadata.name}.${nsName}.svc`, `${svc.metadata.name}.${nsName}.svc.cluster.local`];
  const webhooks = [
    ...(mwc.webhooks ?? []).map((w) => ({ kind: "mutating", w, config: mwc })),
    ...(vwc.webhooks ?? []).map((w) => ({ kind: "validating", w, config: vwc })),
  ];
  check(new Set(webhooks.map(({ w }) => w.name)).size === webhooks.length, "webhook names are unique");
  const rayHead = { "ray.io/node-type": "head", "ray.io/cluster": "raycluster-sample" };
  const rayWorker = { "ray.io/node-type": "worker", "ray.io/cluster": "raycluster-sample" };
  const plainPod = { app: "nginx" };
  const nsLabels = (name, extra = {}) => ({ "kubernetes.io/metadata.name": name, ...extra });
  const optInLabels = (() => {
    // Any label the opt-in entries ask for, so the namespace checks also cover
    // a namespace that opted in.
    const labels = {};
    for (const { w } of webhooks) Object.assign(labels, w.namespaceSelector?.matchLabels ?? {});
    return labels;
  })();
  for (const { kind, w } of webhooks) {
    const id = `${kind} webhook ${w.name}`;
    const unknown = Object.keys(w).filter((k) => !WEBHOOK_FIELDS.has(k));
    check(unknown.length === 0, `${id}: only admissionregistration/v1 fields`, unknown.join(", "));
    check(w.name.split(".").length >= 3, `${id}: name is fully qualified`);
    const settled = (w.matchConditions ?? []).find((m) => m.name === "not-a-settled-worker");
    if (settled) {
      check(settled.expression.trim() === SETTLED_WORKER, `${id}: not-a-settled-worker is the chart's files/settled-worker.cel`);
    }
    const s = w.clientConfig?.service;
    check(w.clientConfig?.url === undefined && !!s, `${id}: calls a Service, not a URL`);
    check(s?.name === svc.metadata.name && s?.namespace === svc.metadata.namespace,
      `${id}: calls Service ${svc.metadata.namespace}/${svc.metadata.name}`, `${s?.namespace}/${s?.name}`);
    check((svc.spec.ports ?? []).some((p) => p.port === (s?.port ?? 443)), `${id}: port ${s?.port ?? 443} is a Service port`);
    check(ROUTES[kind].includes(s?.path), `${id}: path is the server's ${ROUTES[kind].join(" or ")}`, `path ${s?.path}`);
    check(JSON.stringify(w.admissionReviewVersions) === JSON.stringify(["v1", "v1beta1"]),
      `${id}: admissionReviewVersions [v1, v1beta1]`);
    check(w.sideEffects === "None", `${id}: sideEffects None`);
    check(Number.isInteger(w.timeoutSeconds) && w.timeoutSeconds >= 1 && w.timeoutSeconds <= 5,
      `${id}: timeoutSeconds set and at most 5`, `${w.timeoutSeconds}`);
    check(["Fail", "Ignore"].includes(w.failurePolicy), `${id}: failurePolicy stated explicitly`, `${w.failurePolicy}`);
    const rules = w.rules ?? [];
    for (const never of ["kube-system", nsName]) {
      check(!selects(w.namespaceSelector, nsLabels(never)) && !selects(w.namespaceSelector, nsLabels(never, optInLabels)),
        `${id}: namespaceSelector never matches ${never}`);
    }
    if (isRayObjectEntry(w)) {
      // RayClusters, RayJobs, RayServices and RayCronJobs themselves: no Pod, so no objectSelector;
      // never their status subresource, which the operator writes on every reconcile.
      check(kind === "validating" && rules.length === 1 && JSON.stringify(rules[0].apiVersions) === '["v1","v1alpha1"]'
        && JSON.stringify([...rules[0].resources].sort()) === '["rayclusters","raycronjobs","rayjobs","rayservices"]'
        && JSON.stringify(rules[0].operations) === '["CREATE","UPDATE"]',
        `${id}: rules are ray.io rayclusters, rayjobs, rayservices and raycronjobs (v1, v1alpha1) on CREATE and UPDATE, validating only`,
        JSON.stringify(rules));
      check(w.objectSelector === undefined, `${id}: no objectSelector (the custom resources carry no Ray Pod labels)`);
      continue;
    }
    check(rules.length > 0 && rules.every((r) => JSON.stringify(r.apiGroups) === '[""]' && JSON.stringify(r.apiVersions) === '["v1"]'
      && JSON.stringify(r.resources) === '["pods"]' && JSON.stringify(r.operations) === '["CREATE"]'),
      `${id}: rules are Pods on CREATE only`, JSON.stringify(rules));
    if (kind === "mutating") check(w.reinvocationPolicy === "IfNeeded", `${id}: reinvocationPolicy IfNeeded`);
    const rayOnly = selects(w.objectSelector, rayHead) && selects(w.objectSelector, rayWorker)
      && !selects(w.objectSelector, plainPod) && !selects(w.objectSelector, { "ray.io/node-type": "redis-cleanup" });
    const optIn = !selects(w.namespaceSelector, nsLabels("default"));
    check(rayOnly || optIn, `${id}: sees only Ray Pods (head, worker), unless a namespace opts in by label`);
    if (optIn) {
      check(selects(w.namespaceSelector, nsLabels("team-a", optInLabels)), `${id}: a namespace opts in with labels ${JSON.stringify(optInLabels)}`);
      check(!selects(w.objectSelector, rayHead) && !selects(w.objectSelector, rayWorker) && selects(w.objectSelector, plainPod),
        `${id}: opt-in entry covers the non-Ray Pods only (Ray Pods have their own entry)`);
    }
  }
  // Who sees which Pod.
  const callers = (podLabelsX, nsLabelsX) => webhooks.filter(({ w }) => !isRayObjectEntry(w) &&
    selects(w.namespaceSelector, nsLabelsX) && selects(w.objectSelector, podLabelsX));
  const rayObjectEntries = webhooks.filter(({ w }) => isRayObjectEntry(w));
  check(rayObjectEntries.length === 1 && rayObjectEntries[0].kind === "validating",
    "one validating webhook reviews RayClusters, RayJobs and RayServices", rayObjectEntries.map(({ w }) => w.name).join(", "));
  for (const [what, labels] of [["Ray head", rayHead], ["Ray worker", rayWorker]]) {
    for (const nsl of [nsLabels("default"), nsLabels("team-a", optInLabels)]) {
      const c = callers(labels, nsl);
      const paths = c.map((x) => `${x.kind} ${x.w.clientConfig?.service?.path}`).join(", ");
      const judge = c.find((x) => ["mutating /admit", "validating /validate"].includes(`${x.kind} ${x.w.clientConfig?.service?.path}`));
      check((paths === "mutating /admit" || paths === "mutating /mutate, validating /validate") && judge?.w.failurePolicy === "Fail",
        `a ${what} Pod in namespace ${nsl["kubernetes.io/metadata.name"]} is reviewed in one call (/admit) or two (/mutate, /validate), judged failing closed`,
        `${c.map((x) => x.w.name).join(", ")}: ${paths}`);
    }
  }
  check(callers(plainPod, nsLabels("default")).length === 0, "a non-Ray Pod in an ordinary namespace reaches no webhook");
  check(callers(plainPod, nsLabels("team-a", optInLabels)).filter((x) => x.kind === "validating").length <= 1
    && callers(plainPod, nsLabels("team-a", optInLabels)).every((x) => x.kind === "validating"),
    "a non-Ray Pod in an opted-in namespace is validated at most once and never mutated");

  // The serving certificate and the caBundle.
  const certificates = all("Certificate");
  const secrets = all("Secret");
  const caBundles = webhooks.map(({ w }) => w.clientConfig?.caBundle);
  if (baseFiles.has(file)) {
    check(certificates.length === 0 && secrets.length === 0 && caBundles.every((b) => !b),
      "base alone carries no certificate (an overlay adds it)");
  } else if (certificates.length > 0) {
    // cert-manager: serving Certificate <- CA Issuer <- CA Certificate <- self-signed Issuer.
    const issuers = all("Issuer");
    const serving = certificates.find((c) => c.spec.secretName === servingSecret);
    if (check(!!serving, `a Certificate writes the mounted Secret ${servingSecret}`)) {
      const names = serving.spec.dnsNames ?? [];
      check(svcDnsNames.every((n) => names.includes(n)), `Certificate dnsNames include ${svcDnsNames.join(", ")}`, names.join(", "));
      const allowed = [svc.metadata.name, `${svc.metadata.name}.${nsName}`, ...svcDnsNames,
        `${svc.metadata.name}.${nsName}.svc.${domain}`];
      check(names.every((n) => allowed.includes(n)), "every dnsName is a name of the Service", names.join(", "));
      check(serving.spec.privateKey?.algorithm === "ECDSA" && serving.spec.privateKey?.size === 256,
        "serving key is ECDSA P-256");
      check(!serving.spec.usages || serving.spec.usages.includes("server auth"), "serving certificate usage includes server auth");
      const caIssuer = issuers.find((i) => i.metadata.name === serving.spec.issuerRef?.name);
      check(serving.spec.issuerRef?.kind === "Issuer" && !!caIssuer?.spec?.ca?.secretName,
        "the serving Certificate is issued by a CA Issuer in the namespace");
      const caCert = certificates.find((c) => c.spec.secretName === caIssuer?.spec?.ca?.secretName);
      check(caCert?.spec?.isCA === true, "the CA Issuer's Secret comes from a Certificate with isCA: true");
      const root = issuers.find((i) => i.metadata.name === caCert?.spec?.issuerRef?.name);
      check(root?.spec?.selfSigned !== undefined, "the CA Certificate is issued by a self-signed Issuer");
      for (const config of [mwc, vwc]) {
        check(config.metadata.annotations?.["cert-manager.io/inject-ca-from"] === `${nsName}/${serving.metadata.name}`,
          `${config.kind} has cert-manager.io/inject-ca-from: ${nsName}/${serving.metadata.name}`);
      }
      check(caBundles.every((b) => !b), "no static caBundle next to cert-manager's injection");
    }
  } else {
    // static-certs: a Secret made by generate.sh, and the same CA in every caBundle.
    const secret = secrets.find((s) => s.metadata.name === servingSecret);
    if (check(!!secret, `a Secret ${servingSecret} is rendered`)
      && check(secret.type === "kubernetes.io/tls" && !!secret.data?.["tls.crt"] && !!secret.data?.["tls.key"],
        "the Secret is kubernetes.io/tls with tls.crt and tls.key")
      && check(caBundles.every((b) => b && b === caBundles[0]), "every webhook has the same caBundle")) {
      try {
        const ca = new crypto.X509Certificate(pemFromB64(caBundles[0]));
        const leaf = new crypto.X509Certificate(pemFromB64(secret.data["tls.crt"]));
        const key = crypto.createPrivateKey(pemFromB64(secret.data["tls.key"]));
        check(ca.ca === true && leaf.ca === false, "caBundle is a CA certificate, not the serving leaf");
        check(leaf.checkIssued(ca) && leaf.verify(ca.publicKey), "caBundle signed the serving certificate");
        for (const n of svcDnsNames) check(leaf.checkHost(n) === n, `serving certificate is valid for ${n}`);
        const now = Date.now();
        check(Date.parse(leaf.validFrom) <= now && now < Date.parse(leaf.validTo), "serving certificate is within its validity");
        check(crypto.createPublicKey(key).export({ type: "spki", format: "der" })
          .equals(leaf.publicKey.export({ type: "spki", format: "der" })), "tls.key is the serving certificate's key");
        check(leaf.publicKey.asymmetricKeyType === "ec" && leaf.publicKey.asymmetricKeyDetails?.namedCurve === "prime256v1",
          "serving key is ECDSA P-256");
      } catch (e) {
        check(false, "caBundle and Secret hold PEM certificates and a key", e.message);
      }
    }
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
