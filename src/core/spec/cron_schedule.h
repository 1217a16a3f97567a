// The cron schedules a RayCronJob's spec.schedule may hold: those robfig/cron
// v3's ParseStandard accepts, as KubeRay parses them (validation.go,
// ValidateRayCronJobSpec; robfig/cron/v3 parser.go).
//
// Contract: pure, never throws. StandardCronScheduleError returns nullopt for
// a schedule the operator can read and otherwise why it cannot, in words for
// the user. Accepted: five fields (minute, hour, day of month, month, day of
// week) of "*", "?", numbers, names (jan..dec, sun..sat), ranges "a-b",
// steps "/n" and lists "a,b"; the descriptors @yearly, @annually, @monthly,
// @weekly, @daily, @midnight, @hourly and "@every <Go duration>"; and a
// leading "TZ=<zone> " or "CRON_TZ=<zone> ". A zone name is refused only when
// no time zone database could hold it (TimeZoneNameCannotExist), since the
// operator's own database is not known here.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ray_webhook {

std::optional<std::string> StandardCronScheduleError(std::string_view schedule);

// Go's time.LoadLocation refuses the name whatever its database holds: it
// contains "..", starts with '/' or '\\', or has a character no IANA zone
// name has (letters, digits, '/', '_', '-', '+', '.' only). "", "UTC" and
// "Local" are names Go always knows.
bool TimeZoneNameCannotExist(std::string_view name);

}  // namespace ray_webhook
