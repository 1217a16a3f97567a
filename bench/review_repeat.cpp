// review_repeat: one AdmissionReview file reviewed N times in-process, for
// counting instructions per review with valgrind --tool=callgrind.
//
//   review_repeat mutate|validate FILE N [--cluster-domain=DOMAIN]
//
// Reviews the file once outside ReviewRepeatedly (the decoder's buffers and
// any first-use setup grow there), then N times inside it, so that
//   valgrind --tool=callgrind --toggle-collect='ReviewRepeatedly*' review_repeat ...
// collects exactly N reviews: instructions per review = collected / N. The
// body is held as the server holds it, with spare capacity behind it, as in
// review_bench. Prints the answer's status, allow/deny and warnings once.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "ray_webhook/core/decode/review_decoder.h"
#include "ray_webhook/core/model/policy_config.h"
#include "ray_webhook/core/review/review_handler.h"

using ray_webhook::Endpoint;
using ray_webhook::PolicyConfig;
using ray_webhook::ReviewDecoder;
using ray_webhook::ReviewOutcome;

// Not inlined, and outside any namespace: callgrind's --toggle-collect names it.
__attribute__((noinline)) std::size_t ReviewRepeatedly(const std::string& body, Endpoint endpoint,
                                                       const PolicyConfig& config, ReviewDecoder& decoder, long n) {
  std::size_t bytes = 0;
  for (long i = 0; i < n; ++i) {
    ReviewOutcome out = ray_webhook::HandleReview(body, endpoint, config, decoder, {}, body.capacity() - body.size());
    bytes += out.body.size();
  }
  return bytes;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: review_repeat mutate|validate FILE N [--cluster-domain=DOMAIN]\n");
    return 2;
  }
  const Endpoint endpoint = std::strcmp(argv[1], "mutate") == 0 ? Endpoint::kMutate : Endpoint::kValidate;
  std::ifstream in(argv[2], std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "review_repeat: cannot read %s\n", argv[2]);
    return 1;
  }
  std::string body((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  body.reserve(body.size() * 2);
  const long n = std::atol(argv[3]);
  PolicyConfig config;
  for (int i = 4; i < argc; ++i) {
    if (std::strncmp(argv[i], "--cluster-domain=", 17) == 0) config.cluster_domain = argv[i] + 17;
  }
  ReviewDecoder decoder;
  const ReviewOutcome first =
      ray_webhook::HandleReview(body, endpoint, config, decoder, {}, body.capacity() - body.size());
  std::printf("status %d %s warnings=%zu answer=%zu bytes\n", first.http_status,
              first.decision.allowed ? "allow" : "deny", first.decision.warnings.size(), first.body.size());
  const std::size_t bytes = ReviewRepeatedly(body, endpoint, config, decoder, n);
  std::printf("%ld reviews, %zu answer bytes\n", n, bytes);
  return first.http_status == 200 ? 0 : 1;
}
