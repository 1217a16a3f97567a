// Flag values: parsing and showing the numbers, durations and rule modes of
// the flag table.
//
// Contract: each parser accepts exactly its documented syntax and answers
// with a one-line error naming the flag and what it got; never throws.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "ray_webhook/core/model/policy_config.h"
#include "ray_webhook/core/model/status.h"

namespace ray_webhook {

bool ParseInt(std::string_view text, int min, int max, int* out);

// "2s", "500ms", "50us", "1m" or a bare number of seconds, from min up to max.
std::optional<std::chrono::microseconds> ParseDuration(std::string_view s, std::chrono::microseconds min,
                                                       std::chrono::microseconds max);

// The shortest of "Ns", "Nms" and "Nus" that is exact.
std::string ShowDuration(std::chrono::microseconds d);

// The value as an error message quotes it.
std::string Got(std::string_view value);

Status IntFlag(std::string_view name, std::string_view v, int min, int max, int* out);

template <typename Duration>
Status DurationFlag(std::string_view name, std::string_view v, std::chrono::microseconds min,
                    std::chrono::microseconds max, std::string_view examples_and_bound, Duration* out) {
  auto d = ParseDuration(v, min, max);
  if (!d) {
    return Status::Error(std::string(name) + " must be a duration such as " + std::string(examples_and_bound) +
                         "; got " + Got(v));
  }
  *out = std::chrono::duration_cast<Duration>(*d);
  return Status::Ok();
}

Status RuleModeFlag(std::string_view name, std::string_view v, RuleMode* out);

std::string ShowRuleMode(RuleMode m);

}  // namespace ray_webhook
