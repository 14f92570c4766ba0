#include "storage/layers.h"

#include "absl/strings/ascii.h"

namespace speakermem::storage {

const LayerInfo* FindLayer(const std::string& name) {
  const std::string n = absl::AsciiStrToLower(name);
  for (const LayerInfo& l : kLayerTable) {
    if (n == l.code || n == l.paper) return &l;
  }
  return nullptr;
}

bool IsGroupLayer(const std::string& code) {
  for (const LayerInfo& l : kLayerTable) {
    if (code == l.code) return l.group;
  }
  return false;
}

}  // namespace speakermem::storage
