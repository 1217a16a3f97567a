// node compare_chart.mjs [--without KIND]... KUSTOMIZE.yaml HELM.yaml
//
// The objects `kubectl kustomize` renders from deploy/ against the objects
// `helm template` renders from charts/ray-webhook, field by field. Ignored:
// the order of objects and of keys, YAML comments and layout, and what only
// Helm adds (HELM_LABELS in metadata.labels and in the Pod template's labels,
// HELM_ANNOTATIONS). Lists are compared item by item, in order: the order of
// args, containers and webhooks means something. --without KIND leaves that
// kind out of the kustomize side (an object the chart only renders on request).
// Prints PASS/FAIL per object, every differing field, "N passed, M failed".
import fs from "node:fs";
import YAML from "yaml";

// Labels and annotations that Helm's conventions or Helm itself put on objects.
const HELM_LABELS = ["helm.sh/chart", "app.kubernetes.io/managed-by", "app.kubernetes.io/instance", "app.kubernetes.io/version"];
const HELM_ANNOTATIONS = [/^meta\.helm\.sh\//, /^helm\.sh\//];

const argv = process.argv.slice(2);
const without = new Set();
const files = [];
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === "--without") without.add(argv[++i]);
  else files.push(argv[i]);
}
if (files.length !== 2) {
  console.error("usage: node compare_chart.mjs [--without KIND]... KUSTOMIZE.yaml HELM.yaml");
  process.exit(2);
}

function load(file) {
  return YAML.parseAllDocuments(fs.readFileSync(file, "utf8")).map((d) => {
    if (d.errors.length) throw new Error(`${file}: ${d.errors[0].message}`);
    return d.toJS();
  }).filter((o) => o !== null && o !== undefined);
}

function stripHelm(meta) {
  if (!meta) return;
  for (const k of HELM_LABELS) if (meta.labels) delete meta.labels[k];
  if (meta.labels && Object.keys(meta.labels).length === 0) delete meta.labels;
  for (const k of Object.keys(meta.annotations ?? {})) {
    if (HELM_ANNOTATIONS.some((re) => re.test(k))) delete meta.annotations[k];
  }
  if (meta.annotations && Object.keys(meta.annotations).length === 0) delete meta.annotations;
}

const key = (o) => `${o.kind} ${o.metadata?.namespace ? `${o.metadata.namespace}/` : ""}${o.metadata?.name}`;
function index(objects, side) {
  const out = new Map();
  for (const o of objects) {
    stripHelm(o.metadata);
    stripHelm(o.spec?.template?.metadata);
    if (o.spec?.template?.metadata && Object.keys(o.spec.template.metadata).length === 0) delete o.spec.template.metadata;
    const k = `${o.apiVersion} ${key(o)}`;
    if (out.has(k)) throw new Error(`${side} renders ${k} twice`);
    out.set(k, o);
  }
  return out;
}

const show = (v) => (v === undefined ? "(absent)" : JSON.stringify(v));
// Every path where a and b differ, with both values.
function diff(a, b, path, out) {
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) diff(a[i], b[i], `${path}[${i}]`, out);
  } else if (a && b && typeof a === "object" && typeof b === "object" && !Array.isArray(a) && !Array.isArray(b)) {
    for (const k of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
      diff(a[k], b[k], path ? `${path}.${k}` : k, out);
    }
  } else if (!(a === b || (Number.isNaN(a) && Number.isNaN(b)))) {
    out.push(`${path}: kustomize ${show(a)}, chart ${show(b)}`);
  }
  return out;
}

let passed = 0;
let failed = 0;
let kustomize;
let helm;
try {
  kustomize = index(load(files[0]).filter((o) => !without.has(o.kind)), "kustomize");
  helm = index(load(files[1]), "the chart");
} catch (e) {
  console.log(`FAIL ${e.message}`);
  console.log("0 passed, 1 failed");
  process.exit(1);
}
for (const [k, want] of kustomize) {
  const got = helm.get(k);
  if (!got) {
    failed++;
    console.log(`FAIL ${k}: rendered by kustomize, not by the chart`);
    continue;
  }
  const d = diff(want, got, "", []);
  if (d.length === 0) {
    passed++;
    console.log(`PASS ${k}: the same fields`);
  } else {
    failed++;
    console.log(`FAIL ${k}: ${d.length} field(s) differ`);
    for (const line of d) console.log(`     ${line}`);
  }
}
for (const k of helm.keys()) {
  if (!kustomize.has(k)) {
    failed++;
    console.log(`FAIL ${k}: rendered by the chart, not by kustomize`);
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
