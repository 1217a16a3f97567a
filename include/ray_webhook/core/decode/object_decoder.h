// ObjectDecoder: one bare Kubernetes object, a Pod or a ray.io RayCluster,
// RayJob or RayService, decoded as ReviewDecoder decodes request.object.
//
// Contract: takes the object's JSON text alone (as kubectl or the API lists
// it, no AdmissionReview around it) and fills the caller's Pod or RayObject
// with the same object decoders a review goes through, so that a field reads
// exactly as at admission. Errors are one line, at paths relative to the
// object ("spec.containers[0].name: expected a string"). The views in the
// value filled point into the decoder's buffers or into json itself: valid
// while both live and until the next Decode call. A Pod is refilled in place
// (see ReviewDecoder); a RayObject is decoded fresh. One decoder serves one
// thread. Never throws. The JSON library stays behind this interface.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "ray_webhook/core/model/pod_view.h"
#include "ray_webhook/core/model/ray_cluster_spec.h"
#include "ray_webhook/core/model/status.h"

namespace ray_webhook {

class ObjectDecoder {
 public:
  ObjectDecoder();
  ~ObjectDecoder();
  ObjectDecoder(const ObjectDecoder&) = delete;
  ObjectDecoder& operator=(const ObjectDecoder&) = delete;

  // readable_padding: as for ReviewDecoder::Decode, bytes after json that may
  // be read, so that the parser reads json in place.
  Status DecodePod(std::string_view json, Pod& out, std::size_t readable_padding = 0);
  Status DecodeRayObject(std::string_view json, RayObjectKind kind, RayObject& out, std::size_t readable_padding = 0);

  // The worker spec signature of the Pod the last call decoded, which must be
  // a DecodePod that succeeded (else an error): the Pod's spec as minified
  // JSON with its keys sorted and without what differs per Pod of one worker
  // group (the scheduler's node, multi-host webhooks' hostname, subdomain and
  // TPU env values, the generated service-account token volume name,
  // ephemeral containers, scheduling gates; the list and why:
  // src/core/decode/worker_spec_signature.h), so that two worker Pods built
  // from one template have equal signatures. Read from the same parse as the
  // Pod, which stays valid; out is replaced.
  Status WorkerSpecSignature(std::string& out);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ray_webhook
