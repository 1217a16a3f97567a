// flag-reference: docs/flags.md from the flag table (src/cli/flag_table.cpp).
//   flag-reference               prints it; `> docs/flags.md` regenerates the file
//   flag-reference --check FILE  exits 0 when FILE holds exactly that, else 1
#include "cli/flag_reference.h"

#include <fstream>
#include <iostream>
#include <sstream>
#include <string_view>

int main(int argc, char** argv) {
  const std::string expected = ray_webhook::FlagReferenceMarkdown();
  if (argc == 1) {
    std::cout << expected;
    return std::cout.good() ? 0 : 1;
  }
  if (argc != 3 || std::string_view(argv[1]) != "--check") {
    std::cerr << "usage: flag-reference [--check FILE]\n";
    return 2;
  }
  std::ifstream in(argv[2], std::ios::binary);
  if (!in) {
    std::cerr << "flag-reference: cannot read " << argv[2] << "\n";
    return 1;
  }
  std::ostringstream got;
  got << in.rdbuf();
  if (got.str() == expected) {
    std::cout << argv[2] << " is what the flag table generates\n";
    return 0;
  }
  // The first line that differs, so the failure says where.
  std::istringstream a(got.str()), b(expected);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool more_a = static_cast<bool>(std::getline(a, la));
    const bool more_b = static_cast<bool>(std::getline(b, lb));
    if (!more_a && !more_b) break;
    if (la != lb || more_a != more_b) {
      std::cerr << argv[2] << ":" << line
                << ": differs from the flag table's reference\n  file:      " << (more_a ? la : "(end of file)")
                << "\n  generated: " << (more_b ? lb : "(end)") << "\n";
      break;
    }
  }
  std::cerr << "regenerate it: build/tests/flag-reference > docs/flags.md\n";
  return 1;
}
