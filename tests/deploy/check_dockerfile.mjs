// node check_dockerfile.mjs REPO
//
// The Dockerfile and .dockerignore, checked statically (tests/image/ checks
// the image scripts/image.sh builds from them):
//   - dockerfile-utils (the Dockerfile linter behind VS Code's Docker support)
//     reports no problem;
//   - multi-stage from debian:bookworm-slim, the runtime stage FROM scratch
//     (nothing but what the build stage staged); the build stage runs
//     scripts/install-deps.sh and scripts/build.sh (the README's build) without
//     --test, or (BINARY=context) takes build/ray-webhook with only the
//     runtime libraries installed; the runtime stage takes only files from the build stage, runs as
//     a numeric non-root user and starts `ray-webhook serve --cert-dir
//     /tmp/k8s-webhook-server/serving-certs`;
//   - every library CMakeLists.txt finds for the server is installed by
//     scripts/install-deps.sh without --test, so the image build has it;
//   - .dockerignore (Docker's rules: last matching pattern wins, a pattern
//     also covers everything under a matching folder) lets through what the
//     Dockerfile copies and what CMakeLists.txt reads, and keeps out private
//     keys, build trees, .git and node_modules.
// Prints PASS/FAIL per check and "N passed, M failed"; exits 1 on any failure.
import fs from "node:fs";
import path from "node:path";
import { validate } from "dockerfile-utils";
import { DockerfileParser } from "dockerfile-ast";

const repo = process.argv[2];
if (!repo) {
  console.error("usage: node check_dockerfile.mjs REPO");
  process.exit(2);
}
const CERT_DIR = "/tmp/k8s-webhook-server/serving-certs";
const BASE_IMAGE = "debian:bookworm-slim";

let passed = 0;
let failed = 0;
function check(ok, what, detail = "") {
  if (ok) {
    passed++;
    console.log(`PASS ${what}`);
  } else {
    failed++;
    console.log(`FAIL ${what}${detail ? ` (${detail})` : ""}`);
  }
  return ok;
}
const read = (f) => fs.readFileSync(path.join(repo, f), "utf8");

// ---- lint ----
const text = read("Dockerfile");
const problems = validate(text);
for (const p of problems) {
  console.log(`# Dockerfile:${p.range.start.line + 1}: ${p.message}`);
}
check(problems.length === 0, "dockerfile-utils lint: no problems", `${problems.length} problems`);

// ---- structure ----
const df = DockerfileParser.parse(text);
const args = Object.fromEntries(df.getInitialARGs().flatMap((a) => a.getProperties().map((p) => [p.getName(), p.getValue()])));
const expand = (s) => s.replace(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g, (_, n) => args[n] ?? "");
const froms = df.getFROMs();
check(froms.length >= 2, "multi-stage build", `${froms.length} FROM`);
// Every stage starts from the base image, or from a stage before it (the
// staging stage from binary-${BINARY}: the default, source, compiles).
froms.forEach((f, i) => {
  const image = expand(f.getImage() ?? "");
  const earlier = froms.slice(0, i).map((e) => e.getBuildStage());
  if (i === froms.length - 1) {
    check(image === "scratch", "the runtime stage is FROM scratch: no base image's files", image);
    return;
  }
  check(image === BASE_IMAGE || earlier.includes(image),
    `stage ${f.getBuildStage() ?? "(runtime)"} is FROM ${BASE_IMAGE} or an earlier stage`, image);
});
const stageNames = froms.map((f) => f.getBuildStage()).filter(Boolean);
check(stageNames.includes("binary-source") && stageNames.includes("binary-context") && args.BINARY === "source",
  "BINARY chooses binary-source (the default: compile) or binary-context (a built binary)", `BINARY=${args.BINARY}`);
const stages = df.getInstructions().reduce((acc, ins) => {
  if (ins.getKeyword() === "FROM") acc.push([]);
  else if (acc.length) acc[acc.length - 1].push(ins);
  return acc;
}, []);
const buildStages = froms.slice(0, -1).map((f) => f.getBuildStage()).filter(Boolean);
const build = stages.slice(0, -1).flat();
const runtime = stages[stages.length - 1] ?? [];
const runs = (ins) => ins.filter((i) => i.getKeyword() === "RUN").map((i) => i.getRawArgs?.() ?? i.toString());

const buildRuns = runs(build).join("\n");
check(/scripts\/install-deps\.sh(?!\s+--test)/.test(buildRuns), "build stage installs packages with scripts/install-deps.sh (no --test)");
check(/scripts\/build\.sh(?!\s+--test)/.test(buildRuns), "build stage builds with scripts/build.sh (no --test), as the README does");
check(/\bldd\b/.test(buildRuns), "build stage picks the shared libraries with ldd");
// binary-context: the runtime libraries and the one built file, nothing compiled.
const contextStage = stages[froms.findIndex((f) => f.getBuildStage() === "binary-context")] ?? [];
check(/scripts\/install-deps\.sh\s+--runtime/.test(runs(contextStage).join("\n")) && !/build\.sh|cmake/.test(runs(contextStage).join("\n")),
  "binary-context installs only the runtime libraries (install-deps.sh --runtime) and compiles nothing");
const contextCopies = contextStage.filter((i) => i.getKeyword() === "COPY").flatMap((i) => i.getArguments().slice(0, -1).map((a) => a.getValue()));
check(contextCopies.includes("build/ray-webhook") && contextCopies.every((c) => c === "build/ray-webhook" || c === "scripts/install-deps.sh"),
  "binary-context copies only build/ray-webhook and scripts/install-deps.sh", contextCopies.join(" "));

const runtimeCopies = runtime.filter((i) => ["COPY", "ADD"].includes(i.getKeyword()));
check(runtimeCopies.length > 0 && runtimeCopies.every((i) => i.getKeyword() === "COPY"
  && i.getFlags().some((fl) => fl.getName() === "from" && buildStages.includes(fl.getValue()))),
  "runtime stage copies only from the build stage");
const runtimeRuns = runs(runtime).join("\n");
check(runtimeRuns === "", "the runtime stage runs nothing (it has no shell)", runtimeRuns);
const users = runtime.filter((i) => i.getKeyword() === "USER");
const user = users.length ? users[users.length - 1].getArguments().map((a) => a.getValue()).join(" ") : "";
check(/^[1-9][0-9]*(:[0-9]+)?$/.test(user), `runtime stage runs as a numeric non-root user (USER ${user})`);
const eps = runtime.filter((i) => i.getKeyword() === "ENTRYPOINT");
let entrypoint = null;
try {
  entrypoint = eps.length ? JSON.parse(eps[eps.length - 1].getRawArgs?.() ?? eps[eps.length - 1].toString().replace(/^ENTRYPOINT\s+/, "")) : null;
} catch {
  entrypoint = null;
}
check(JSON.stringify(entrypoint) === JSON.stringify(["ray-webhook", "serve", "--cert-dir", CERT_DIR]),
  `ENTRYPOINT is exec form ["ray-webhook", "serve", "--cert-dir", "${CERT_DIR}"]`, JSON.stringify(entrypoint));
check(!runtime.some((i) => i.getKeyword() === "CMD"), "no CMD: the Deployment's args follow the entrypoint");

// ---- the build's inputs ----
const cmake = read("CMakeLists.txt");
// What CMake reads when RAY_WEBHOOK_BUILD_TESTS=OFF: drop that if-block.
// The image builds with the tests, fuzzer and benchmarks off: drop those blocks.
const cmakeServer = cmake.replace(
  /if\s*\(\s*RAY_WEBHOOK_(BUILD_TESTS|FUZZ|BUILD_BENCH)\s*\)[\s\S]*?endif\s*\(\s*\)/g, "");
const installDeps = read("scripts/install-deps.sh");
const basePackages = (/packages=\(([\s\S]*?)\)/.exec(installDeps)?.[1] ?? "").split(/\s+/).filter(Boolean);
const debianPackage = {
  "cpp-httplib": "libcpp-httplib-dev",
  OpenSSL: "libssl-dev",
  nlohmann_json: "nlohmann-json3-dev",
  simdjson: "libsimdjson-dev",
  spdlog: "libspdlog-dev",
  "prometheus-cpp": "prometheus-cpp-dev",
  "yaml-cpp": "libyaml-cpp-dev",
  PkgConfig: "pkg-config",
};
const found = [...cmakeServer.matchAll(/find_package\(\s*([A-Za-z0-9_+-]+)/g)].map((m) => m[1])
  .concat([...cmakeServer.matchAll(/pkg_check_modules\([^)]*?IMPORTED_TARGET\s+([A-Za-z0-9_.+-]+)/g)].map((m) => m[1]));
for (const dep of found) {
  if (dep === "Threads") continue;
  const pkg = debianPackage[dep];
  check(!!pkg && basePackages.includes(pkg), `CMake dependency ${dep} is installed by scripts/install-deps.sh (${pkg ?? "unknown package"})`);
}
for (const pkg of ["build-essential", "cmake", "pkg-config"]) {
  check(basePackages.includes(pkg), `scripts/install-deps.sh installs ${pkg}`);
}

// ---- .dockerignore ----
// Docker's matching: patterns are paths with *, ? and **; a path is excluded
// when the last pattern that matches it or one of its parent folders is not
// a ! pattern.
const patterns = read(".dockerignore").split("\n").map((l) => l.trim()).filter((l) => l && !l.startsWith("#"))
  .map((l) => {
    const negate = l.startsWith("!");
    const p = (negate ? l.slice(1) : l).trim().replace(/^\/+|\/+$/g, "");
    const re = new RegExp("^" + p.split("/").map((seg) => seg === "**" ? ".*"
      : seg.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*").replace(/\?/g, "[^/]")).join("/") + "$");
    return { negate, re };
  });
function excluded(file) {
  const parts = file.split("/");
  let out = false;
  for (const { negate, re } of patterns) {
    for (let i = 1; i <= parts.length; i++) {
      if (re.test(parts.slice(0, i).join("/"))) { out = !negate; break; }
    }
  }
  return out;
}
function filesUnder(rel) {
  const abs = path.join(repo, rel);
  if (!fs.existsSync(abs)) return [rel];
  if (!fs.statSync(abs).isDirectory()) return [rel];
  return fs.readdirSync(abs).flatMap((e) => filesUnder(path.join(rel, e)));
}
const sources = df.getInstructions().filter((i) => i.getKeyword() === "COPY" && !i.getFlags().some((fl) => fl.getName() === "from"))
  .flatMap((i) => i.getArguments().slice(0, -1).map((a) => a.getValue().replace(/^\.\/?/, "").replace(/\/$/, "")));
for (const src of sources) {
  const files = filesUnder(src === "" ? "." : src);
  const out = files.filter(excluded);
  check(files.length > 0 && out.length === 0, `.dockerignore lets through COPY ${src}`, out.slice(0, 5).join(", "));
}
// Top-level folders and files CMakeLists.txt names (outside the tests block)
// must reach the build and be copied.
const topLevel = fs.readdirSync(repo).filter((e) => !e.startsWith("."));
for (const entry of topLevel) {
  const named = new RegExp(`(^|[\\s("/])${entry.replace(/[.+]/g, "\\$&")}(/|\\s|\\)|$)`, "m").test(cmakeServer);
  if (!named || entry === "CMakeLists.txt" || entry === "build") continue;
  check(!excluded(entry) && sources.some((s) => s === entry || s.startsWith(`${entry}/`)),
    `${entry}/, which CMakeLists.txt reads, reaches the build and is copied`);
}
for (const secret of ["certs/out/ca.key", "certs/out/tls.key", "deploy/overlays/static-certs/generated/certs/ca.key",
  "deploy/overlays/static-certs/generated/serving-cert-secret.yaml", ".git/config", "build/CMakeCache.txt",
  "build/pgo-profile/core.gcda", "build/image/base/rootfs.tar", "build-asan/ray-webhook", "tests/schema/node_modules/yaml/package.json", "tests/deploy/node_modules/yaml/package.json"]) {
  check(excluded(secret), `.dockerignore keeps out ${secret}`);
}

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
