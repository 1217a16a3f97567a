#include "mock_kube_watch.h"

#include <memory>
#include <string>

namespace mock_kube_api {

void ApplyChange(const std::string& type, const Json& object, Json* objects, std::string* list_version) {
  if (!objects->is_object()) return;
  const Json meta = object.value("metadata", Json::object());
  auto same = [&](const Json& item) {
    const Json m = item.value("metadata", Json::object());
    return item.value("kind", "") == object.value("kind", "") &&
           m.value("namespace", "") == meta.value("namespace", "") && m.value("name", "") == meta.value("name", "");
  };
  Json& items = (*objects)["items"];
  if (!items.is_array()) items = Json::array();
  for (auto it = items.begin(); it != items.end(); ++it) {
    if (same(*it)) {
      items.erase(it);
      break;
    }
  }
  if (type != "DELETED") items.push_back(object);
  if (meta.contains("resourceVersion") && meta["resourceVersion"].is_string()) {
    *list_version = meta["resourceVersion"].get<std::string>();
  }
}

Json WatchScript::NextWatch(const std::string& resource) {
  std::lock_guard<std::mutex> lock(mutex_);
  const Json kNone = Json::array();
  if (script_.is_object() && script_.contains("by_resource") && script_["by_resource"].is_object() &&
      script_["by_resource"].contains(resource)) {
    const Json& watches = script_["by_resource"][resource];
    std::size_t& next = next_by_resource_[resource];
    if (!watches.is_array() || next >= watches.size()) return Json::array({{{"hang", true}}});
    return watches[next++];
  }
  const Json& watches = script_.is_object() && script_.contains("watches") ? script_["watches"] : kNone;
  if (!watches.is_array() || next_ >= watches.size()) return Json::array({{{"hang", true}}});
  return watches[next_++];
}

void WatchScript::Answer(httplib::Response& res, const std::string& resource, const Hooks& hooks) {
  auto steps = std::make_shared<Json>(NextWatch(resource));
  if (!steps->is_array()) *steps = Json::array();
  if (!steps->empty() && steps->front().is_object() && steps->front().contains("status")) {
    hooks.set_status(res, steps->front()["status"].get<int>());
    return;
  }
  auto at = std::make_shared<std::size_t>(0);
  res.status = 200;
  res.set_chunked_content_provider("application/json", [steps, at, hooks](std::size_t, httplib::DataSink& sink) {
    if (*at >= steps->size()) {
      sink.done();
      return true;
    }
    const Json step = (*steps)[(*at)++];
    if (!step.is_object()) return true;
    auto write = [&](const std::string& line) {
      // Two chunks, split mid-line: a client must join lines across chunks.
      const std::size_t half = line.size() / 2;
      return sink.write(line.data(), half) && sink.write(line.data() + half, line.size() - half);
    };
    if (step.contains("type") && step.contains("object")) {
      const std::string type = step["type"].get<std::string>();
      if (type == "ADDED" || type == "MODIFIED" || type == "DELETED") hooks.apply(type, step["object"]);
      return write(Json{{"type", type}, {"object", step["object"]}}.dump() + "\n");
    }
    if (step.contains("apply")) {
      hooks.apply(step["apply"]["type"].get<std::string>(), step["apply"]["object"]);
      return true;
    }
    if (step.contains("raw")) return write(step["raw"].get<std::string>() + "\n");
    if (step.contains("long_line")) return write(std::string(step["long_line"].get<std::size_t>(), 'x') + "\n");
    if (step.contains("sleep_ms")) return hooks.hang(step["sleep_ms"].get<long long>());
    if (step.contains("hang")) {
      while (hooks.hang(100)) {
      }
      return false;
    }
    return true;
  });
}

}  // namespace mock_kube_api
