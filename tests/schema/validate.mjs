// node validate.mjs FILE...
// Validates every Kubernetes object in the given files against the upstream
// OpenAPI schemas shipped by the kubernetes-models packages. A file holds JSON
// (an object, an array of objects, or a List) or YAML, one or many documents
// separated by `---` (kubectl kustomize's output); "-" reads standard input.
// Prints one line per object that fails, then a count line, and exits 1 when
// any object fails or has no known schema, or when no object was found.
import fs from "node:fs";
import YAML from "yaml";

// apiVersion "group/version" -> module path; core "v1" has no group.
async function modelFor(apiVersion, kind) {
  const candidates = apiVersion.includes("/")
    ? [`kubernetes-models/${apiVersion}`, `@kubernetes-models/cert-manager/${apiVersion}`]
    : [`kubernetes-models/${apiVersion}`];
  for (const path of candidates) {
    try {
      const mod = await import(path);
      if (mod[kind]) return mod[kind];
    } catch {
      // not this package
    }
  }
  return null;
}

function objectsIn(doc) {
  if (Array.isArray(doc)) return doc.flatMap(objectsIn);
  if (doc && doc.kind === "List" && Array.isArray(doc.items)) return doc.items.flatMap(objectsIn);
  return doc ? [doc] : [];
}

// JSON first (the fixtures), then YAML: every document, empty ones skipped.
function documentsIn(file, text) {
  try {
    return [JSON.parse(text)];
  } catch {
    // not JSON
  }
  const docs = YAML.parseAllDocuments(text);
  const bad = docs.find((d) => d.errors.length > 0);
  if (bad) throw new Error(`${file}: neither JSON nor valid YAML: ${bad.errors[0].message}`);
  return docs.map((d) => d.toJS()).filter((v) => v !== null && v !== undefined);
}

let passed = 0;
let failed = 0;
for (const file of process.argv.slice(2)) {
  let docs;
  try {
    docs = documentsIn(file, fs.readFileSync(file === "-" ? 0 : file, "utf8"));
  } catch (e) {
    console.log(`FAIL ${e.message}`);
    failed++;
    continue;
  }
  for (const obj of objectsIn(docs)) {
    const name = `${file}: ${obj.kind} ${obj.metadata?.name ?? obj.metadata?.generateName ?? ""}`;
    const Model = await modelFor(obj.apiVersion ?? "", obj.kind ?? "");
    if (!Model) {
      console.log(`FAIL ${name}: no schema for ${obj.apiVersion} ${obj.kind}`);
      failed++;
      continue;
    }
    try {
      new Model(obj).validate();
      passed++;
    } catch (e) {
      console.log(`FAIL ${name}: ${e.message}`);
      failed++;
    }
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
