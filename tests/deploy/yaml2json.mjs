// node yaml2json.mjs [--sorted] FILE
// Prints every document of a multi-document YAML file (kubectl kustomize's
// output) as one JSON array. --sorted: objects ordered by apiVersion, kind,
// namespace and name, keys sorted, so two renders can be compared with diff.
import fs from "node:fs";
import YAML from "yaml";

const args = process.argv.slice(2);
const sorted = args[0] === "--sorted";
const file = sorted ? args[1] : args[0];
if (!file) {
  console.error("usage: node yaml2json.mjs [--sorted] FILE");
  process.exit(2);
}
const docs = YAML.parseAllDocuments(fs.readFileSync(file, "utf8"));
const objects = [];
for (const doc of docs) {
  if (doc.errors.length) {
    console.error(`${file}: ${doc.errors[0].message}`);
    process.exit(1);
  }
  const value = doc.toJS();
  if (value !== null && value !== undefined) objects.push(value);
}

function sortKeys(v) {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === "object") {
    return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys(v[k])]));
  }
  return v;
}
if (sorted) {
  const key = (o) => [o.apiVersion, o.kind, o.metadata?.namespace ?? "", o.metadata?.name ?? ""].join("/");
  objects.sort((a, b) => key(a).localeCompare(key(b)));
  console.log(JSON.stringify(sortKeys(objects), null, 1));
} else {
  console.log(JSON.stringify(objects));
}
