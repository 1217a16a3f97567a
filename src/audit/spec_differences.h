// SpecDifferences: where the specs of two worker Pods of one group differ,
// named for a person.
//
// Contract: a pure function of two Pod specs (nlohmann::json, parsed from
// their worker spec signatures, ObjectDecoder::WorkerSpecSignature, so what
// differs per Pod is already out and the depth is bounded). Names at most
// `max` fields where `to` differs from `from`, as kubectl names them
// ("spec.containers[0].volumeMounts[3] (added)"), then "..." when there are
// more; a list item inserted or removed is one entry. Only the audit's report
// of a drift calls it, for two Pods per finding: the comparison of every Pod
// is the signatures' text.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ray_webhook {

std::vector<std::string> SpecDifferences(const nlohmann::json& from, const nlohmann::json& to, std::size_t max);

}  // namespace ray_webhook
