#include "manifest_files.h"

#include <fstream>
#include <sstream>

#include "yaml_documents.h"

namespace ray_webhook {
namespace {

// What simdjson reads past a text's end (SIMDJSON_PADDING); the CLI does not see simdjson's headers.
constexpr std::size_t kJsonPadding = 64;

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
    // Room for the parser's padding, so that it reads the dump in place instead of from a copy.
    text->reserve(text->size() + kJsonPadding);
    const std::string_view json = std::string_view(*text).substr(first);
    return each(json, text->capacity() - text->size(), name + " document 1");
  }
  std::istringstream in(std::move(*text));
  bool sink_failed = false;
  std::string json;
  Status read = ForEachYamlDocument(in, [&](nlohmann::json&& document, std::size_t number) {
    json = document.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    document = nullptr;
    json.reserve(json.size() + kJsonPadding);
    Status s = each(json, json.capacity() - json.size(), name + " document " + std::to_string(number));
    sink_failed = !s.ok();
    return s;
  });
  if (read.ok() || sink_failed) return read;
  return Status::Error(name + " " + read.message());
}

}  // namespace ray_webhook
