// The four System 2 layers in one table: the code name (stored, in the API
// and config), the paper's name (in Writer prompts, trajectories and model
// output), and the scope (a person's, or the group's, owned by GROUP). Every
// other mapping of layers derives from this table.
#ifndef SPEAKERMEM_STORAGE_LAYERS_H_
#define SPEAKERMEM_STORAGE_LAYERS_H_

#include <cstddef>
#include <string>

namespace speakermem::storage {

enum class Layer { kCore, kProfile, kInteraction, kInsight };

struct LayerInfo {
  Layer layer;
  const char* code;   // "core"
  const char* paper;  // "per_speaker_core"
  bool group;         // owned by GROUP
};

inline constexpr LayerInfo kLayerTable[] = {
    {Layer::kCore, "core", "per_speaker_core", false},
    {Layer::kProfile, "profile", "per_speaker_profile", false},
    {Layer::kInteraction, "interaction", "group_interaction", true},
    {Layer::kInsight, "insight", "group_insight", true},
};
inline constexpr size_t kLayerCount = sizeof(kLayerTable) / sizeof(kLayerTable[0]);

// The entry of a code or paper name, case-insensitive; null when none.
const LayerInfo* FindLayer(const std::string& name);

// True for the group layers (interaction, insight); false for anything else.
bool IsGroupLayer(const std::string& code);

}  // namespace speakermem::storage

#endif  // SPEAKERMEM_STORAGE_LAYERS_H_
