// pgo_train: the training run of the profile-guided build.
//
//   pgo_train [--rounds N] FILE...
//
// Reviews each AdmissionReview FILE on /mutate and on /validate, N times each
// (default 50), the way the server does: one decoder reused from review to
// review, the body in a string with spare capacity, a head lookup that finds
// no head Pods, and the review's log line built as at info level, the default.
// Built only when RAY_WEBHOOK_PGO=generate, so running it writes the core's
// profile; scripts/build-with-profile.sh feeds it the review fixtures, which
// are the Pod shapes of every KubeRay release the project knows, valid or not. Exits 1 when a FILE cannot be read or
// none is given.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "ray_webhook/core/decode/review_decoder.h"
#include "ray_webhook/core/model/policy_config.h"
#include "ray_webhook/core/review/review_handler.h"
#include "ray_webhook/logging/review_log_line.h"

namespace {

bool ReadFile(const char* path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  using ray_webhook::Endpoint;
  int rounds = 50;
  std::vector<std::string> bodies;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--rounds" && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
      continue;
    }
    std::string body;
    if (!ReadFile(argv[i], &body)) {
      std::fprintf(stderr, "pgo_train: cannot read %s\n", argv[i]);
      return 1;
    }
    // cpp-httplib's body string has grown past its size by the time the
    // handler runs, and the server passes that spare room on to the decoder.
    body.reserve(body.size() * 2);
    bodies.push_back(std::move(body));
  }
  if (bodies.empty() || rounds < 1) {
    std::fprintf(stderr, "usage: pgo_train [--rounds N] FILE...\n");
    return 1;
  }

  const ray_webhook::PolicyConfig config;
  ray_webhook::ReviewDecoder decoder;
  const ray_webhook::HeadLookup no_heads = [](std::string_view, std::string_view) {
    return ray_webhook::HeadPodList(std::vector<ray_webhook::HeadPod>{});
  };
  long reviews = 0;
  std::size_t answer_bytes = 0;
  std::string line;
  for (int r = 0; r < rounds; ++r) {
    for (const std::string& body : bodies) {
      for (Endpoint endpoint : {Endpoint::kMutate, Endpoint::kValidate}) {
        const ray_webhook::ReviewOutcome out =
            ray_webhook::HandleReview(body, endpoint, config, decoder, no_heads, body.capacity() - body.size());
        answer_bytes += out.body.size();
        ++reviews;
        if (out.http_status != 200) continue;
        line.clear();
        ray_webhook::AppendReviewLogLine(ray_webhook::ReviewLogFieldsOf(out, endpoint, 10), &line);
        answer_bytes += line.size();
      }
    }
  }
  std::printf("pgo_train: %ld reviews of %zu files, %zu answer and log bytes\n", reviews, bodies.size(), answer_bytes);
  return 0;
}
