#include "writer/rewards.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "writer/writer_model.h"

namespace speakermem::writer {
namespace {

// Rejection reasons that are not schema errors: the action is well formed
// but repeats something or exceeds the budget.
bool IsSchemaError(const std::string& reason) {
  return reason != "duplicate_in_batch" && reason != "duplicate_of_state" &&
         reason != "unchanged_update" && reason != "over_budget";
}

// The paper's action key: ADD (action, owner, source, layer, content),
// UPDATE (action, entry, content), NOOP its type; content normalised.
std::string ActionKey(const WriterAction& a) {
  switch (a.type) {
    case WriterAction::Type::kAdd:
      return absl::StrCat("ADD\x1f", a.owner, "\x1f", a.source, "\x1f", NormalizeLayer(a.layer),
                          "\x1f", NormalizeContent(a.content));
    case WriterAction::Type::kUpdate:
      return absl::StrCat("UPDATE\x1f", a.entry_id, "\x1f", NormalizeContent(a.content));
    case WriterAction::Type::kNoop:
      return "NOOP";
    default:
      return absl::StrCat("?\x1f", a.type_name, "\x1f", NormalizeContent(a.content));
  }
}

std::vector<ChainEdge> Edges(const std::vector<storage::Record>& records) {
  std::map<std::string, const storage::Record*> by_id;
  for (const auto& r : records) by_id[r.record_id] = &r;
  std::vector<ChainEdge> out;
  for (const auto& r : records) {
    for (const auto& old : r.supersedes) {
      auto it = by_id.find(old);
      if (it != by_id.end())
        out.push_back(ChainEdge{r.owner, r.layer, it->second->content, r.content});
    }
  }
  return out;
}

std::vector<StateEntry> Active(const std::vector<storage::Record>& records) {
  std::set<std::string> superseded;
  for (const auto& r : records) {
    for (const auto& old : r.supersedes) superseded.insert(old);
  }
  std::vector<StateEntry> out;
  for (const auto& r : records) {
    if (r.active() && !superseded.count(r.record_id)) {
      out.push_back(StateEntry{r.owner, r.source, r.layer, r.content});
    }
  }
  return out;
}

}  // namespace

namespace {

// What the actions are validated against: the roster (the segment's
// speakers and the pre-state's people) and the pre-state's records.
ValidationContext RewardContext(const WriterRewardInput& in) {
  ValidationContext ctx;
  std::set<std::string> people;
  auto add_person = [&](const std::string& id, const std::string& name) {
    if (id.empty() || id == kGroupOwner || !people.insert(id).second) return;
    std::vector<std::string> aliases = {id};
    if (!name.empty() && name != id) aliases.push_back(name);
    ctx.roster.push_back(WriterRosterMember{id, aliases});
  };
  for (const auto& m : in.segment)
    add_person(m.speaker_id.empty() ? m.speaker : m.speaker_id, m.speaker);
  for (const auto& r : in.pre_state) {
    add_person(r.owner, "");
    add_person(r.source, "");
  }
  for (const auto& r : in.pre_state) ctx.records[r.record_id] = r;
  return ctx;
}

// The number the next new record gets: past every "r<number>" of the
// pre-state (ids sent by a client need not be of fixed width).
uint64_t NextRecordNumber(const std::vector<storage::Record>& pre_state) {
  uint64_t next = 1;
  for (const auto& r : pre_state) {
    uint64_t n = 0;
    if (r.record_id.size() > 1 && r.record_id[0] == 'r') {
      n = std::strtoull(r.record_id.c_str() + 1, nullptr, 10);
    }
    next = std::max(next, n + 1);
  }
  return next;
}

// Stop: whether the output ends right after its last novel action (one that
// adds, or changes, something the state does not hold yet).
bool EndsAfterLastNovel(const std::vector<WriterAction>& list, const std::vector<std::string>& keys,
                        const WriterRewardInput& in, const ValidationContext& ctx) {
  std::set<std::tuple<std::string, std::string, std::string>> pre_keys;
  for (const auto& r : in.pre_state) {
    if (r.active()) pre_keys.emplace(r.owner, r.layer, NormalizeContent(r.content));
  }
  std::set<std::string> seen;
  int last_novel = -1;
  for (size_t i = 0; i < list.size(); ++i) {
    const WriterAction& a = list[i];
    bool novel = false;
    if (a.type == WriterAction::Type::kNoop) {
      novel = list.size() == 1;
    } else if (a.type == WriterAction::Type::kAdd) {
      std::string layer = NormalizeLayer(a.layer);
      std::string owner = IsGroupLayer(layer) ? std::string(kGroupOwner) : a.owner;
      for (const auto& m : ctx.roster) {
        for (const auto& alias : m.aliases) {
          if (alias == a.owner) owner = m.speaker_id;
        }
      }
      novel = !seen.count(keys[i]) && !pre_keys.count({owner, layer, NormalizeContent(a.content)});
    } else if (a.type == WriterAction::Type::kUpdate) {
      auto it = ctx.records.find(a.entry_id);
      novel = it != ctx.records.end() && it->second.active() &&
              NormalizeContent(it->second.content) != NormalizeContent(a.content);
    }
    seen.insert(keys[i]);
    if (novel) last_novel = static_cast<int>(i);
  }
  return last_novel >= 0 && static_cast<size_t>(last_novel) + 1 == list.size();
}

// The state after what the live Writer would apply (with its action budget).
void ApplyAsWriter(const std::vector<WriterAction>& list, const WriterRewardInput& in,
                   ValidationContext* ctx, WriterRewardOutput* out) {
  ctx->max_actions = out->action_budget;
  ValidationReport live = ValidateActions(list, *ctx);
  out->rejections = live.rejected;
  storage::WriterState state;
  state.next_record = NextRecordNumber(in.pre_state);
  state.cursor_seq = in.segment.front().seq > 0 ? in.segment.front().seq - 1 : 0;
  storage::SegmentApply apply =
      BuildApply(live, *ctx, in.segment, state, in.segment.back().timestamp_ms);
  out->post_state = in.pre_state;
  std::map<std::string, std::string> superseded(apply.superseded.begin(), apply.superseded.end());
  for (auto& r : out->post_state) {
    auto it = superseded.find(r.record_id);
    if (it != superseded.end()) r.superseded_by = it->second;
  }
  for (const auto& r : apply.new_records) out->post_state.push_back(r);
}

}  // namespace

absl::StatusOr<WriterRewardOutput> ScoreWriterActions(const WriterRewardInput& in) {
  if (in.segment.empty()) return absl::InvalidArgumentError("segment: must not be empty");
  WriterRewardOutput out;
  ValidationContext ctx = RewardContext(in);
  out.action_budget = std::max<size_t>(8, 2 * in.segment.size());

  absl::StatusOr<std::vector<WriterAction>> actions = ParseWriterActions(in.output);
  out.json_valid = actions.ok();
  out.z_json = !out.json_valid;
  out.z_len = in.length_limit_reached;
  std::vector<WriterAction> list = actions.ok() ? *actions : std::vector<WriterAction>{};
  out.attempted = list.size();
  out.z_count = out.attempted > out.action_budget;

  // Schema validity of every action (the budget is scored on its own).
  ctx.max_actions = SIZE_MAX;
  ValidationReport report = ValidateActions(list, ctx);
  size_t schema_errors = 0;
  for (const auto& r : report.rejected) schema_errors += IsSchemaError(r.reason);
  out.schema_valid = out.attempted - schema_errors;
  out.z_act = schema_errors > 0;

  std::vector<std::string> keys;
  for (const auto& a : list) keys.push_back(ActionKey(a));
  out.unique_keys = std::set<std::string>(keys.begin(), keys.end()).size();

  if (out.attempted > 0 && out.json_valid) {
    const double n = static_cast<double>(out.attempted);
    out.r_json = 1;
    out.r_schema = std::clamp(static_cast<double>(out.schema_valid) / n, 0.0, 1.0);
    out.r_dup = std::clamp(static_cast<double>(out.unique_keys) / n, 0.0, 1.0);
    out.r_stop = EndsAfterLastNovel(list, keys, in, ctx) ? 1 : 0;
    out.validity = 0.25 * out.r_json + 0.35 * out.r_schema + 0.25 * out.r_dup + 0.15 * out.r_stop;
  }
  out.penalty = 0.25 * out.z_json + 0.15 * out.z_act + 0.10 * out.z_count + 0.10 * out.z_len;

  ApplyAsWriter(list, in, &ctx, &out);
  if (in.reference_post_state) {
    out.has_memory = true;
    out.sl = SpeakerLevenshtein(Active(out.post_state), Active(*in.reference_post_state));
    out.chain = ChainScore(Edges(out.post_state), Edges(*in.reference_post_state));
    out.memory_reward = MemoryReward(out.sl.score, out.chain);
  }
  return out;
}

}  // namespace speakermem::writer
