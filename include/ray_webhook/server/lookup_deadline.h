// LookupDeadline: how long the second-head lookup may take for one review.
//
// Contract: kube-apiserver appends ?timeout=<timeoutSeconds>s to every webhook
// call and gives up on the call when it runs out; failurePolicy then decides,
// whatever --head-lookup-failure says. So the whole lookup (connect, TLS,
// request, answer) gets the smaller of --kube-api-timeout and that timeout
// minus a margin for the rest of the review and the way back (a quarter of
// it, at most 1 s). Without a usable ?timeout= (a Go duration over 0 and
// at most a day) the flag alone decides.
// Pure.
#pragma once

#include <chrono>
#include <string_view>

namespace ray_webhook {

std::chrono::milliseconds LookupDeadline(std::string_view timeout_param, std::chrono::milliseconds kube_api_timeout);

}  // namespace ray_webhook
