// LookupDeadline: how long the second-head lookup may take for one review.
//
// Contract: kube-apiserver appends ?timeout=<timeoutSeconds>s to every webhook
// call and gives up on the call when it runs out; failurePolicy then decides,
// whatever --head-lookup-failure says. So the whole lookup (connect, TLS,
// request, answer) gets the smaller of --kube-api-timeout and that timeout
// minus a margin for the rest of the review and the way back (a quarter of
// it, at most 1 s). Without a usable ?timeout= the flag alone decides.
// Pure.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

namespace ray_webhook {

// A Go duration as time.Duration.String() prints it ("10s", "1m30s",
// "1.5s", "500ms"); nullopt when it is not one or is not positive.
std::optional<std::chrono::microseconds> ParseGoDuration(std::string_view text);

std::chrono::milliseconds LookupDeadline(std::string_view timeout_param, std::chrono::milliseconds kube_api_timeout);

}  // namespace ray_webhook
