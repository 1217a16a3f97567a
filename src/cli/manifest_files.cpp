#include "manifest_files.h"

#include <fstream>
#include <sstream>

#include "yaml_documents.h"

namespace ray_webhook {
namespace {

Result<std::string> ReadBounded(std::istream& in, const std::string& name) {
  std::string text;
  char buffer[64 * 1024];
  while (in) {
    in.read(buffer, sizeof buffer);
    const std::size_t got = static_cast<std::size_t>(in.gcount());
    if (text.size() + got > kMaxManifestBytes) {
      return Status::Error(name + ": larger than " + std::to_string(kMaxManifestBytes / (1024 * 1024)) +
                           " MiB; audit it in parts (kubectl get ... -n NAMESPACE) or against the API");
    }
    text.append(buffer, got);
  }
  if (in.bad()) return Status::Error("cannot read " + name);
  return text;
}

}  // namespace

Status ForEachManifestDocument(const std::string& path, std::istream& stdin_stream, const ManifestSink& each) {
  const std::string name = path == "-" ? "stdin" : path;
  Result<std::string> text = Status::Error("unread");
  if (path == "-") {
    text = ReadBounded(stdin_stream, name);
  } else {
    std::ifstream file(path, std::ios::binary);
    if (!file) return Status::Error("cannot read " + path);
    text = ReadBounded(file, name);
  }
  if (!text.ok()) return text.status();
  std::size_t first = text->starts_with("\xEF\xBB\xBF") ? 3 : 0;
  first = text->find_first_not_of(" \t\r\n", first);
  if (first == std::string::npos) return Status::Ok();  // empty: nothing to audit
  if ((*text)[first] == '{') {
    nlohmann::json document;
    try {
      document = nlohmann::json::parse(text->begin() + static_cast<std::ptrdiff_t>(first), text->end());
    } catch (const nlohmann::json::exception& e) {
      return Status::Error(name + " document 1: not JSON: " + e.what());
    }
    *text = std::string();
    return each(document, name + " document 1");
  }
  std::istringstream in(std::move(*text));
  bool sink_failed = false;
  Status read = ForEachYamlDocument(in, [&](nlohmann::json&& document, std::size_t number) {
    Status s = each(document, name + " document " + std::to_string(number));
    sink_failed = !s.ok();
    return s;
  });
  if (read.ok() || sink_failed) return read;
  return Status::Error(name + " " + read.message());
}

}  // namespace ray_webhook
