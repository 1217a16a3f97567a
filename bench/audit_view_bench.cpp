// audit_view_bench: Google Benchmark over the watched audit's view of a
// cluster (ClusterView), what each watch event and each judgement costs.
//
//   audit_view_bench [--fixtures=DIR] [Google Benchmark flags]
//
// The objects are made from the worker and head Pods of bench/fixtures'
// reviews (worker.json, head.json: request.object), one head and nine workers
// per RayCluster, in namespaces of 100 clusters; each Pod is renamed, and
// every RayCluster is a small object of its own. Benchmarks:
//
//   Upsert/worker          one worker Pod's MODIFIED event: decode, judge,
//                          keep (the view holds 10,000 Pods)
//   Judge/<pods>           a judgement of the whole view: the report of every
//                          finding and the rules across objects, at 1,000,
//                          10,000 and 100,000 Pods
// Judge's counters: kept_bytes_per_pod, the view's heap (mallinfo2, measured
// while filling it) divided by the Pods it holds.
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ray_webhook/audit/cluster_view.h"

namespace {

using nlohmann::json;
using ray_webhook::AuditedKind;
using ray_webhook::ClusterView;

std::string g_fixtures = RAY_WEBHOOK_BENCH_FIXTURES;

json PodOf(const std::string& review_file) {
  std::ifstream in(g_fixtures + "/" + review_file);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  json review = json::parse(text, nullptr, false);
  if (review.is_discarded() || !review.contains("request")) {
    std::fprintf(stderr, "audit_view_bench: %s/%s is not an AdmissionReview\n", g_fixtures.c_str(),
                 review_file.c_str());
    std::exit(2);
  }
  return review["request"]["object"];
}

struct Cluster {
  std::vector<std::string> pods;  // JSON text, the head first
  std::string ray_cluster;
};

// Cluster c's objects: its RayCluster, its head and nine workers, labelled as KubeRay labels them.
Cluster MakeCluster(const json& head, const json& worker, std::size_t c) {
  const std::string ns = "team-" + std::to_string(c / 100);
  const std::string name = "rc-" + std::to_string(c);
  Cluster out;
  for (std::size_t k = 0; k < 10; ++k) {
    json pod = k == 0 ? head : worker;
    pod["kind"] = "Pod";
    pod["apiVersion"] = "v1";
    pod["metadata"]["namespace"] = ns;
    pod["metadata"]["name"] = k == 0 ? name + "-head" : name + "-workers-worker-" + std::to_string(k);
    pod["metadata"]["labels"]["ray.io/cluster"] = name;
    pod["metadata"]["labels"]["ray.io/group"] = k == 0 ? "headgroup" : "workers";
    pod["status"] = {{"phase", "Running"}};
    out.pods.push_back(pod.dump());
  }
  out.ray_cluster =
      json{{"kind", "RayCluster"},
           {"apiVersion", "ray.io/v1"},
           {"metadata", {{"namespace", ns}, {"name", name}, {"creationTimestamp", "2026-12-01T00:00:00Z"}}},
           {"spec", {{"headGroupSpec", {{"rayStartParams", json::object()}}}}}}
          .dump();
  return out;
}

struct Filled {
  std::unique_ptr<ClusterView> view;
  double kept_bytes_per_pod = 0;
};

Filled Fill(std::size_t pods) {
  const json head = PodOf("head.json"), worker = PodOf("worker.json");
  const std::size_t before = mallinfo2().uordblks;
  Filled f;
  f.view = std::make_unique<ClusterView>(ray_webhook::PolicyConfig{}, ray_webhook::CostLeakLimits{});
  for (std::size_t c = 0; c < pods / 10; ++c) {
    const Cluster cluster = MakeCluster(head, worker, c);
    (void)f.view->Upsert(AuditedKind::kRayCluster, cluster.ray_cluster, "API rayclusters");
    for (const std::string& pod : cluster.pods) {
      if (!f.view->Upsert(AuditedKind::kPod, pod, "API pods").ok()) std::exit(2);
    }
  }
  f.kept_bytes_per_pod = static_cast<double>(mallinfo2().uordblks - before) / static_cast<double>(pods);
  return f;
}

void BM_UpsertWorker(benchmark::State& state) {
  Filled f = Fill(10000);
  const Cluster cluster = MakeCluster(PodOf("head.json"), PodOf("worker.json"), 7);
  for (auto _ : state) {
    const ray_webhook::Status s = f.view->Upsert(AuditedKind::kPod, cluster.pods[3], "API pods");
    benchmark::DoNotOptimize(s);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_UpsertWorker)->Name("Upsert/worker")->Unit(benchmark::kMicrosecond);

void BM_Judge(benchmark::State& state) {
  const std::size_t pods = static_cast<std::size_t>(state.range(0));
  Filled f = Fill(pods);
  for (auto _ : state) {
    ClusterView::Judgement j = f.view->Judge(1764900000);
    benchmark::DoNotOptimize(j);
  }
  state.counters["kept_bytes_per_pod"] = f.kept_bytes_per_pod;
  state.counters["objects"] = static_cast<double>(f.view->objects());
}
BENCHMARK(BM_Judge)->Name("Judge")->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond)->Iterations(5);

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--fixtures=", 0) == 0) {
      g_fixtures = arg.substr(11);
    } else {
      rest.push_back(argv[i]);
    }
  }
  int n = static_cast<int>(rest.size());
  benchmark::Initialize(&n, rest.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
