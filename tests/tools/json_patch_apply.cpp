// json-patch-apply DOC PATCH_BASE64: prints DOC with the base64-encoded RFC 6902
// patch applied, or exits 1 with the reason. nlohmann::json::patch follows RFC
// 6902 like evanphx/json-patch, which kube-apiserver uses, for the add and
// replace operations the webhook emits.
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

namespace {

std::string Base64Decode(const std::string& in) {
  static const std::string kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  unsigned buffer = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=') break;
    const auto pos = kAlphabet.find(c);
    if (pos == std::string::npos) throw std::runtime_error("patch is not standard base64");
    buffer = (buffer << 6) | static_cast<unsigned>(pos);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buffer >> bits) & 0xFF);
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: json-patch-apply DOC.json PATCH_BASE64_FILE\n";
    return 2;
  }
  try {
    std::ifstream doc_in(argv[1]);
    std::ifstream patch_in(argv[2]);
    const nlohmann::json doc = nlohmann::json::parse(doc_in);
    const std::string encoded((std::istreambuf_iterator<char>(patch_in)), std::istreambuf_iterator<char>());
    std::string trimmed;
    for (char c : encoded) {
      if (c != '\n' && c != '\r' && c != ' ') trimmed += c;
    }
    const nlohmann::json patch = nlohmann::json::parse(Base64Decode(trimmed));
    if (!patch.is_array()) throw std::runtime_error("patch is not a JSON array");
    std::cout << doc.patch(patch).dump(2) << "\n";
  } catch (const std::exception& e) {
    std::cerr << "json-patch-apply: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
