// Test fixtures are data files under tests/fixtures; this is how tests read them.
#pragma once

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace ray_webhook::testing {

inline const std::filesystem::path kFixtures = RAY_WEBHOOK_FIXTURES;

// The bytes of tests/fixtures/<relative>.
inline std::string ReadFixture(const std::filesystem::path& relative) {
  std::ifstream in(kFixtures / relative, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace ray_webhook::testing
