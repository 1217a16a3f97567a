// Test fixtures are data files under tests/fixtures; this is how tests read them.
#pragma once

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

namespace ray_webhook::testing {

inline const std::filesystem::path kFixtures = RAY_WEBHOOK_FIXTURES;

// The bytes of tests/fixtures/<relative>.
inline std::string ReadFixture(const std::filesystem::path& relative) {
  std::ifstream in(kFixtures / relative, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// tests/fixtures/<relative>, an AdmissionReview of a Pod, with one more Pod
// annotation of `bytes` characters: a review as large as needed, legal as ever.
inline std::string PaddedReview(const std::filesystem::path& relative, std::size_t bytes) {
  nlohmann::json review = nlohmann::json::parse(ReadFixture(relative));
  review["request"]["object"]["metadata"]["annotations"]["example.com/padding"] = std::string(bytes, 'x');
  return review.dump();
}

}  // namespace ray_webhook::testing
