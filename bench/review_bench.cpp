// review_bench: Google Benchmark over the review path, the work one POST /mutate
// or /validate does between the HTTP body arriving and the answer body leaving.
//
//   review_bench [--fixtures=DIR] [--payloads=DIR] [--iterations=N] [Google Benchmark flags]
//
// Inputs are AdmissionReview files named worker.json, head.json, dupmount.json and
// big.json: from bench/fixtures/ (or --fixtures=DIR, or $RAY_WEBHOOK_BENCH_FIXTURES),
// and also from --payloads=DIR when given (whichever of the four names are there;
// their benchmark names carry "payloads:"). Benchmarks:
//
//   HandleReview/<endpoint>/<input>  decode -> decide -> encode, one ReviewDecoder
//                                    reused across iterations as a server thread does
//   Decode/<input>                   ReviewDecoder::Decode alone: the parse share
//   HandleReview/mutate/worker/fresh_decoder
//                                    a new ReviewDecoder per review: what reusing
//                                    its buffers saves
//
// Each body is held as the server holds it, with spare capacity behind it that
// the decoder may read, so the decoder parses it in place as in the server.
// bytes_per_second counts request bytes; items_per_second counts reviews.
// --iterations=N runs every benchmark exactly N times instead of timing how many
// fit: for valgrind --tool=callgrind (bench/callgrind.sh), where instructions per
// review = instructions counted / N.
// Before timing, each input is reviewed once and one line per (input, endpoint)
// on stderr says what the answer was (status, allow/deny, patch operations, answer
// size). An input refused with 400 stops the program: timing it would time the
// error path.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ray_webhook/core/decode/review_decoder.h"
#include "ray_webhook/core/model/policy_config.h"
#include "ray_webhook/core/review/review_handler.h"

namespace {

using ray_webhook::Endpoint;
using ray_webhook::HandleReview;
using ray_webhook::PolicyConfig;
using ray_webhook::ReviewDecoder;
using ray_webhook::ReviewOutcome;

struct Input {
  std::string name;  // "worker", or "payloads:worker"
  std::string body;
};

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

// The four inputs of `dir` in a fixed order; with `required`, all must exist.
bool LoadSet(const std::string& dir, const std::string& prefix, bool required, std::vector<Input>* inputs) {
  for (const char* name : {"worker", "head", "dupmount", "big"}) {
    Input in{prefix + name, {}};
    if (!ReadFile(dir + "/" + name + ".json", &in.body)) {
      if (required) {
        std::fprintf(stderr, "review_bench: cannot read %s/%s.json\n", dir.c_str(), name);
        return false;
      }
      continue;
    }
    // As in the server: cpp-httplib's body string has grown past its size by
    // the time the handler runs, and the server passes that spare room to the
    // decoder, which then parses the body where it lies instead of copying it.
    in.body.reserve(in.body.size() * 2);
    inputs->push_back(std::move(in));
  }
  return true;
}

// What the server passes as body_padding (webhook_server.cpp).
std::size_t Padding(const std::string& body) { return body.capacity() - body.size(); }

const char* EndpointName(Endpoint e) { return e == Endpoint::kMutate ? "mutate" : "validate"; }

void Count(benchmark::State& state, std::size_t request_bytes) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(request_bytes));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

void BM_HandleReview(benchmark::State& state, Endpoint endpoint, const std::string* body) {
  const PolicyConfig config;
  ReviewDecoder decoder;
  std::size_t answer_bytes = 0;
  for (auto _ : state) {
    ReviewOutcome out = HandleReview(*body, endpoint, config, decoder, {}, Padding(*body));
    benchmark::DoNotOptimize(out.body.data());
    answer_bytes = out.body.size();
  }
  Count(state, body->size());
  state.counters["answer_bytes"] = static_cast<double>(answer_bytes);
}

void BM_HandleReviewFreshDecoder(benchmark::State& state, Endpoint endpoint, const std::string* body) {
  const PolicyConfig config;
  for (auto _ : state) {
    ReviewDecoder decoder;
    ReviewOutcome out = HandleReview(*body, endpoint, config, decoder, {}, Padding(*body));
    benchmark::DoNotOptimize(out.body.data());
  }
  Count(state, body->size());
}

void BM_Decode(benchmark::State& state, const std::string* body) {
  ReviewDecoder decoder;
  for (auto _ : state) {
    ray_webhook::Result<const ray_webhook::AdmissionRequest*> r = decoder.Decode(*body, Padding(*body));
    benchmark::DoNotOptimize(r.ok());
  }
  Count(state, body->size());
}

// Reviews each input once on both endpoints and says what the answer is;
// false when one is refused.
bool Describe(const std::vector<Input>& inputs) {
  const PolicyConfig config;
  ReviewDecoder decoder;
  bool ok = true;
  for (const Input& in : inputs) {
    for (Endpoint e : {Endpoint::kMutate, Endpoint::kValidate}) {
      ReviewOutcome out = HandleReview(in.body, e, config, decoder, {}, Padding(in.body));
      std::fprintf(stderr, "input %-17s %7zu bytes %-8s -> %d %-5s patch_ops=%zu warnings=%zu answer=%zu bytes%s%s\n",
                   in.name.c_str(), in.body.size(), EndpointName(e), out.http_status,
                   out.decision.allowed ? "allow" : "deny", out.decision.patch.size(), out.decision.warnings.size(),
                   out.body.size(), out.error.empty() ? "" : " error: ", out.error.c_str());
      if (out.http_status != 200) ok = false;
    }
  }
  return ok;
}

// Takes "--flag=VALUE" or "--flag VALUE" out of argv, before Google Benchmark
// sees the arguments.
void TakeFlag(int* argc, char** argv, const char* flag, std::string* value) {
  const std::size_t n = std::strlen(flag);
  for (int i = 1; i < *argc; ++i) {
    int used = 0;
    if (std::strncmp(argv[i], flag, n) == 0 && argv[i][n] == '=') {
      *value = argv[i] + n + 1;
      used = 1;
    } else if (std::strcmp(argv[i], flag) == 0 && i + 1 < *argc) {
      *value = argv[i + 1];
      used = 2;
    }
    if (used != 0) {
      for (int j = i; j + used <= *argc; ++j) argv[j] = argv[j + used];  // keeps argv[argc] == nullptr
      *argc -= used;
      --i;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string fixtures = RAY_WEBHOOK_BENCH_FIXTURES;
  if (const char* env = std::getenv("RAY_WEBHOOK_BENCH_FIXTURES")) fixtures = env;
  std::string payloads, iterations_flag;
  TakeFlag(&argc, argv, "--fixtures", &fixtures);
  TakeFlag(&argc, argv, "--payloads", &payloads);
  TakeFlag(&argc, argv, "--iterations", &iterations_flag);
  const long long iterations = iterations_flag.empty() ? 0 : std::atoll(iterations_flag.c_str());
  if (!iterations_flag.empty() && iterations <= 0) {
    std::fprintf(stderr, "review_bench: --iterations wants a positive number\n");
    return 2;
  }

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;

  // Never resized after this block: the benchmarks keep pointers into it.
  static std::vector<Input> inputs;
  if (!LoadSet(fixtures, "", true, &inputs)) return 1;
  if (!payloads.empty()) {
    const std::size_t before = inputs.size();
    LoadSet(payloads, "payloads:", false, &inputs);
    if (inputs.size() == before) {
      std::fprintf(stderr, "review_bench: no worker/head/dupmount/big.json in %s\n", payloads.c_str());
      return 1;
    }
  }
  if (!Describe(inputs)) {
    std::fprintf(stderr, "review_bench: an input is refused with 400; fix it before timing\n");
    return 1;
  }

  std::vector<benchmark::internal::Benchmark*> registered;
  for (const Input& in : inputs) {
    for (Endpoint e : {Endpoint::kMutate, Endpoint::kValidate}) {
      registered.push_back(benchmark::RegisterBenchmark(
          ("HandleReview/" + std::string(EndpointName(e)) + "/" + in.name).c_str(), BM_HandleReview, e, &in.body));
    }
  }
  for (const Input& in : inputs) {
    registered.push_back(benchmark::RegisterBenchmark(("Decode/" + in.name).c_str(), BM_Decode, &in.body));
  }
  registered.push_back(benchmark::RegisterBenchmark("HandleReview/mutate/worker/fresh_decoder",
                                                    BM_HandleReviewFreshDecoder, Endpoint::kMutate,
                                                    &inputs.front().body));
  if (iterations > 0) {
    for (benchmark::internal::Benchmark* b : registered) b->Iterations(iterations);
  }

  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
