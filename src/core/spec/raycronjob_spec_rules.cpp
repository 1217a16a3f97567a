// The rows of RayCronJobSpecRules(): ValidateRayCronJobSpec
// (ray-operator/controllers/ray/utils/validation.go), one SpecRule each. Its
// jobTemplate is checked by the RayJob table's spec rules, and the cluster
// spec inside it by the RayCluster table. The operator runs its RayCronJob
// controller only with the RayCronJob feature gate.
#include <array>
#include <string>

#include "cron_schedule.h"
#include "raycluster_spec_support.h"
#include "spec_json.h"
#include "spec_rules.h"

namespace ray_webhook {

namespace {

using spec_json::At;
using spec_json::String;

using cluster_spec::Add;

// The RayJobs it creates are named "<name>-<minute hash>" and must fit a RayJob name (47).
void CheckName(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  constexpr std::size_t kMaxRayCronJobNameLength = 53 - 6 - 11;
  if (String(At(ctx.object, "metadata.name")).value_or("").size() <= kMaxRayCronJobNameLength) return;
  Add(out, "raycronjob-name", "metadata.name",
      "a RayCronJob name has at most " + std::to_string(kMaxRayCronJobNameLength) +
          " characters, so that the RayJobs named after it keep valid names");
}

// Since 1.7 the time zone goes in spec.timeZone; KubeRay refuses any "TZ" in the schedule.
void CheckScheduleTimeZonePrefix(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  const std::optional<std::string_view> schedule = String(At(ctx.object, "spec.schedule"));
  if (!schedule || schedule->find("TZ") == std::string_view::npos) return;
  Add(out, "raycronjob-schedule-tz", "spec.schedule",
      "the schedule cannot hold TZ= or CRON_TZ=; set the time zone in spec.timeZone");
}

void CheckSchedule(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  const std::optional<std::string_view> schedule = String(At(ctx.object, "spec.schedule"));
  if (!schedule) return;
  if (std::optional<std::string> error = StandardCronScheduleError(*schedule)) {
    Add(out, "raycronjob-schedule", "spec.schedule", "not a cron schedule: " + *error);
  }
}

// time.LoadLocation over the operator's time zone database; only names no
// database can hold are refused here.
void CheckTimeZone(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  const std::optional<std::string_view> zone = String(At(ctx.object, "spec.timeZone"));
  if (!zone) return;
  if (zone->empty()) {
    Add(out, "raycronjob-time-zone", "spec.timeZone",
        "must not be empty; leave it out to use the operator's local time zone");
  } else if (TimeZoneNameCannotExist(*zone)) {
    Add(out, "raycronjob-time-zone", "spec.timeZone",
        spec_json::SingleQuoted(*zone) + " is not a time zone name such as Europe/Berlin or UTC");
  }
}

// clang-format off
constexpr std::array kRayCronJobRules = {
    SpecRule{"raycronjob-name", kSpecRayCronJob, {1, 7, 0}, {}, "RayCronJob",
             "ray-operator/controllers/ray/utils/validation.go:971@v1.7.0", CheckName},
    SpecRule{"raycronjob-schedule-tz", kSpecRayCronJob, {1, 7, 0}, {}, "RayCronJob",
             "ray-operator/controllers/ray/utils/validation.go:976@v1.7.0", CheckScheduleTimeZonePrefix},
    SpecRule{"raycronjob-schedule", kSpecRayCronJob, {1, 6, 0}, {}, "RayCronJob",
             "ray-operator/controllers/ray/utils/validation.go:979@v1.7.0", CheckSchedule},
    SpecRule{"raycronjob-time-zone", kSpecRayCronJob, {1, 7, 0}, {}, "RayCronJob",
             "ray-operator/controllers/ray/utils/validation.go:984@v1.7.0", CheckTimeZone},
};
// clang-format on

}  // namespace

std::span<const SpecRule> RayCronJobSpecRules() { return kRayCronJobRules; }

}  // namespace ray_webhook
