// The API's Layer enum against the code names of storage/layers.h: one
// mapping for the server's conversions and the CLI's listings.
#ifndef SPEAKERMEM_PROTO_LAYER_WIRE_H_
#define SPEAKERMEM_PROTO_LAYER_WIRE_H_

#include <string>

#include "speakermem/v1/speakermem.pb.h"
#include "storage/layers.h"

namespace speakermem::api {

// The enum values CORE..INSIGHT follow storage::kLayerTable's order.
static_assert(v1::INSIGHT - v1::CORE + 1 == static_cast<int>(storage::kLayerCount));

// "core" for CORE etc.; "" for LAYER_UNSPECIFIED and EPISODIC (no record layer).
inline std::string LayerCode(v1::Layer layer) {
  const int i = static_cast<int>(layer) - static_cast<int>(v1::CORE);
  if (i < 0 || i >= static_cast<int>(storage::kLayerCount)) return "";
  return storage::kLayerTable[i].code;
}

// "per_speaker_core" for CORE etc. (the paper's names, as in trajectories);
// "" for LAYER_UNSPECIFIED and EPISODIC.
inline std::string LayerPaperName(v1::Layer layer) {
  const int i = static_cast<int>(layer) - static_cast<int>(v1::CORE);
  if (i < 0 || i >= static_cast<int>(storage::kLayerCount)) return "";
  return storage::kLayerTable[i].paper;
}

// CORE for "core" etc.; LAYER_UNSPECIFIED for anything else.
inline v1::Layer LayerEnum(const std::string& code) {
  for (size_t i = 0; i < storage::kLayerCount; ++i) {
    if (code == storage::kLayerTable[i].code) {
      return static_cast<v1::Layer>(static_cast<int>(v1::CORE) + static_cast<int>(i));
    }
  }
  return v1::LAYER_UNSPECIFIED;
}

}  // namespace speakermem::api

#endif  // SPEAKERMEM_PROTO_LAYER_WIRE_H_
