#include "server/convert.h"

#include "proto/layer_wire.h"
#include "storage/layers.h"

namespace speakermem::server {

grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  // A message quoting a caller's value is cut (at a UTF-8 boundary): the
  // status travels in a header, and gRPC refuses oversized ones.
  constexpr size_t kMaxMessageBytes = 1024;
  std::string message(status.message());
  if (message.size() > kMaxMessageBytes) {
    size_t cut = kMaxMessageBytes;
    while (cut > 0 && (static_cast<unsigned char>(message[cut]) & 0xC0) == 0x80) --cut;
    message = absl::StrCat(message.substr(0, cut), "... (", message.size(), " bytes)");
  }
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), message);
}

std::string CodeName(grpc::StatusCode code) {
  return absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
}

void ToProto(const storage::Message& m, const std::string& channel, v1::DialogueMessage* out) {
  out->set_channel(channel);
  out->set_message_id(m.message_id);
  out->set_seq(m.seq);
  out->set_speaker(m.speaker);
  out->set_speaker_id(m.speaker_id);
  out->set_text(m.text);
  out->set_timestamp_ms(m.timestamp_ms);
  out->set_session(m.session);
  out->set_turn(m.turn);
  out->set_reply_to(m.reply_to);
  for (const auto& [k, v] : m.metadata) (*out->mutable_metadata())[k] = v;
}

void ToProto(const storage::RosterEntry& e, v1::RosterEntry* out) {
  out->set_speaker_id(e.speaker_id);
  for (const auto& a : e.aliases) out->add_aliases(a);
  out->set_first_seen_ms(e.first_seen_ms);
  out->set_last_seen_ms(e.last_seen_ms);
  out->set_message_count(e.message_count);
}

void ToProto(const storage::ChannelInfo& c, v1::ChannelInfo* out) {
  out->set_channel(c.channel);
  out->set_message_count(c.message_count);
  out->set_last_seq(c.last_seq);
  out->set_speaker_count(c.speaker_count);
  out->set_first_message_ms(c.first_message_ms);
  out->set_last_message_ms(c.last_message_ms);
}

void ToProto(const storage::AppendResult& r, const std::string& channel, v1::IngestResponse* out) {
  out->set_channel(channel);
  out->set_stored(r.stored);
  out->set_duplicates(r.duplicates);
  out->set_first_seq(r.first_seq);
  out->set_last_seq(r.last_seq);
  for (const auto& m : r.messages) {
    auto* im = out->add_messages();
    im->set_message_id(m.message_id);
    im->set_seq(m.seq);
    im->set_duplicate(m.duplicate);
  }
}

void ToProto(const storage::Record& r, const std::string& channel, v1::DerivedRecord* out) {
  out->set_record_id(r.record_id);
  out->set_channel(channel);
  out->set_content(r.content);
  out->set_source(r.source);
  out->set_owner(r.owner);
  out->set_layer(api::LayerEnum(r.layer));
  out->set_scope(storage::IsGroupLayer(r.layer) ? v1::GROUP : v1::PERSON);
  out->set_utype(r.utype);
  out->set_event(r.event);
  out->set_valid_at_ms(r.valid_at_ms);
  for (const auto& f : r.from_ids) out->add_from_ids(f);
  for (const auto& f : r.supersedes) out->add_supersedes(f);
  out->set_superseded_by(r.superseded_by);
  out->set_writer_pos(r.writer_pos);
  out->set_state(r.active() ? v1::ACTIVE : v1::SUPERSEDED);
  out->set_session(r.session);
  out->set_created_ms(r.created_ms);
  out->set_operator_locked(r.operator_locked);
  out->set_support_changed(r.support_changed);
}

retrieval::BudgetRequest FromProto(const v1::QueryBudgets& b) {
  retrieval::BudgetRequest r;
  r.s1_recall_n = b.s1_recall_n();
  r.s1_top_k = b.s1_top_k();
  r.s2_k = b.s2_k();
  r.s2_source_k = b.s2_source_k();
  if (b.has_expand()) r.expand = b.expand();
  r.expand_anchors = b.expand_anchors();
  r.expand_window = b.expand_window();
  if (b.has_ask()) r.ask = b.ask();
  return r;
}

storage::Record FromProto(const v1::DerivedRecord& r) {
  storage::Record out;
  out.record_id = r.record_id();
  out.content = r.content();
  out.source = r.source();
  out.owner = r.owner();
  out.layer = api::LayerCode(r.layer());
  out.utype = r.utype();
  out.event = r.event();
  out.valid_at_ms = r.valid_at_ms();
  out.from_ids.assign(r.from_ids().begin(), r.from_ids().end());
  out.supersedes.assign(r.supersedes().begin(), r.supersedes().end());
  out.superseded_by = r.superseded_by();
  out.writer_pos = r.writer_pos();
  out.session = r.session();
  out.created_ms = r.created_ms();
  out.operator_locked = r.operator_locked();
  return out;
}

storage::Message FromProto(const v1::DialogueMessage& m, uint64_t seq) {
  storage::Message out;
  out.seq = m.seq() != 0 ? m.seq() : seq;
  out.message_id = m.message_id().empty() ? absl::StrCat("~", out.seq) : m.message_id();
  out.speaker = m.speaker();
  out.speaker_id = m.speaker_id().empty() ? m.speaker() : m.speaker_id();
  out.text = m.text();
  out.timestamp_ms = m.timestamp_ms();
  out.session = m.session();
  out.turn = m.turn();
  out.reply_to = m.reply_to();
  return out;
}

void ToProto(const writer::WriterRewardOutput& r, v1::ScoreWriterActionsResponse* out) {
  out->set_validity(r.validity);
  out->set_r_json(r.r_json);
  out->set_r_schema(r.r_schema);
  out->set_r_dup(r.r_dup);
  out->set_r_stop(r.r_stop);
  out->set_attempted(static_cast<uint32_t>(r.attempted));
  out->set_schema_valid(static_cast<uint32_t>(r.schema_valid));
  out->set_unique_keys(static_cast<uint32_t>(r.unique_keys));
  out->set_penalty(r.penalty);
  out->set_z_json(r.z_json);
  out->set_z_act(r.z_act);
  out->set_z_count(r.z_count);
  out->set_z_len(r.z_len);
  out->set_action_budget(static_cast<uint32_t>(r.action_budget));
  for (const auto& rej : r.rejections) {
    auto* o = out->add_rejections();
    o->set_index(static_cast<uint32_t>(rej.index));
    o->set_reason(rej.reason);
  }
  for (const auto& rec : r.post_state) ToProto(rec, "", out->add_post_state());
  out->set_has_memory(r.has_memory);
  out->set_speaker_levenshtein(r.sl.score);
  out->set_chain(r.chain);
  out->set_memory_reward(r.memory_reward);
}

void ToProto(const storage::ParkedSegment& p, v1::ParkedSegment* out) {
  out->set_first_seq(p.first_seq);
  out->set_last_seq(p.last_seq);
  out->set_reason(p.reason);
  out->set_attempts(p.attempts);
  out->set_parked_ms(p.parked_ms);
}

void ApplyQueryFlags(const v1::QueryRequest& req, std::chrono::system_clock::time_point deadline,
                     engine::QueryParams* p) {
  p->system2 = !req.no_s2();
  p->deadline = deadline;
  p->min_seq = req.min_seq();
  if (!req.fresh() && req.min_seq() == 0) return;
  p->fresh = req.fresh();
  const std::chrono::milliseconds wait(req.fresh_timeout_ms() == 0 ? 30000
                                                                   : req.fresh_timeout_ms());
  // gRPC's "no deadline" is a time point far off: the wait then decides.
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::system_clock::now());
  p->fresh_timeout = std::max(std::chrono::milliseconds(0), std::min(wait, left));
}

void ToProto(const engine::QueryResult& r, const std::string& channel, const std::string& question,
             v1::QueryResponse* out) {
  (void)question;
  const retrieval::PipelineResult& p = r.pipeline;
  out->set_answer(r.answer);
  out->set_abstained(r.abstained);
  for (const auto& id : r.cited_ids) out->add_cited_ids(id);
  for (const auto& rm : p.s1) {
    auto* e = out->add_evidence();
    ToProto(rm.message, channel, e->mutable_message());
    e->set_score(rm.score);
    e->set_why(rm.why);
    e->set_newer_than_memory(rm.newer_than_memory);
  }
  out->set_evidence_pack(p.evidence_pack);
  auto* f = out->mutable_freshness();
  f->set_newest_seq(p.freshness.newest_seq);
  f->set_derived_through_seq(p.freshness.derived_through_seq);
  f->set_lag_messages(p.freshness.lag_messages);
  f->set_lag_ms(p.freshness.lag_ms);
  f->set_waited(p.freshness.waited);
  for (const auto& row : p.s2) {
    auto* er = out->add_rows();
    er->set_row(row.row);
    for (const auto& rec : row.records) ToProto(rec, channel, er->add_records());
    for (double sc : row.scores) er->add_scores(sc);
    for (const auto& rec : row.sourced) ToProto(rec, channel, er->add_sourced());
    if (row.fallback) ToProto(*row.fallback, channel, er->mutable_fallback());
    er->set_empty(row.empty);
  }
  auto* pr = out->mutable_projection();
  for (const auto& row : p.projection.rows) pr->add_rows(row);
  pr->set_issue(p.projection.issue);
  pr->set_tense(p.projection.tense == retrieval::Tense::kFull ? v1::FULL : v1::HEAD);
  pr->set_source(p.projection.source);
  pr->set_owner(p.projection.owner);
  for (const auto& t : p.trace) {
    auto* st = out->add_trace();
    st->set_stage(t.stage);
    st->set_latency_ms(t.latency_ms);
    st->set_model_calls(t.model_calls);
    st->set_tokens_in(t.tokens_in);
    st->set_tokens_out(t.tokens_out);
    st->set_note(t.note);
  }
}

}  // namespace speakermem::server
