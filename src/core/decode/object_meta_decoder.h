// DecodeObjectMeta: an object's metadata, the part every kind decoded shares.
//
// Contract: reads the value of an object's "metadata" field (null or absent
// leaves meta as it is) with the caller's JsonReader; errors at paths
// relative to that object ("metadata.labels: expected string values"). Only
// name, generateName, namespace, labels, annotations, whether
// deletionTimestamp is set (non-null, of any type) and creationTimestamp (a
// string; any other type reads as absent) are kept. A repeated
// "metadata" key adds to what the earlier one set, as Go's encoding/json does
// for a struct, so the caller clears meta once per object.
#pragma once

#include "ray_webhook/core/json/json_reader.h"
#include "ray_webhook/core/model/pod_view.h"

namespace ray_webhook {

void DecodeObjectMeta(od::value v, JsonReader& r, ObjectMeta& meta);

}  // namespace ray_webhook
