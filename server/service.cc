#include "server/service.h"

#include <grpcpp/support/proto_buffer_reader.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/status_macros.h"
#include "engine/memory.h"
#include "proto/layer_wire.h"
#include "server/auth.h"
#include "server/channel_transfer.h"
#include "server/convert.h"
#include "server/ingest_stream.h"
#include "server/ingest_wire.pb.h"
#include "server/limits.h"
#include "server/metrics.h"
#include "server/query_stream.h"
#include "server/raw_service.h"
#include "server/request_codec.h"
#include "server/rpc_scope.h"
#include "server/store_workers.h"
#include "speakermem/v1/speakermem.grpc.pb.h"
#include "storage/validation.h"
#include "writer/rewards.h"

namespace speakermem::server {
namespace {

using grpc::CallbackServerContext;
using grpc::ServerUnaryReactor;

storage::ChannelRef ChannelOf(const Principal& who, const std::string& channel) {
  return storage::ChannelRef{who.tenant, channel};
}

constexpr char kApiKeyHeader[] = "x-api-key";

// A request's messages as the engine's batch (the channels point into `in`);
// the non-const overload moves the strings out of `in`.
template <typename Messages>
engine::Memory::Batch FromWire(Messages& in) {
  engine::Memory::Batch b;
  b.messages.reserve(in.size());
  b.message_channels.reserve(in.size());
  for (auto& m : in) {
    if constexpr (std::is_const_v<Messages>) {
      b.messages.push_back(server::FromWire(m));
    } else {
      b.messages.push_back(server::FromWire(std::move(m)));
    }
    b.message_channels.push_back(m.channel());
  }
  return b;
}

}  // namespace

// An IngestStream chunk prepared on the read side (Service::PrepareChunk):
// its batch points into the chunk (each message's channel field).
struct PreparedChunk {
  absl::Status status;
  std::unique_ptr<wire::IngestChunk> chunk;
  engine::Memory::Batch batch;
};

namespace {

enum class Access { kTenant, kAdmin };

// The response of the unary call running on this thread, encoded by Unary
// just before the call finishes (the handlers run inline).
struct PendingResponse {
  const google::protobuf::Message* response;
  grpc::ByteBuffer* out;
};
thread_local const PendingResponse* pending_response = nullptr;

class Service final : public RawServiceBase {
 public:
  Service(engine::Memory* memory, ServerMetrics* metrics, const std::atomic<bool>* ready,
          KeyStore* keys, Limiter* limiter)
      : memory_(memory),
        metrics_(metrics),
        ready_(ready),
        keys_(keys),
        own_limiter_(limiter == nullptr ? std::make_unique<Limiter>(TenantLimits{}, Clock::Real())
                                        : nullptr),
        limiter_(limiter != nullptr ? limiter : own_limiter_.get()) {
    // The engine reports every change to a tenant's stored messages.
    memory_->SetStoredListener(
        [l = limiter_](const std::string& tenant, int64_t delta) { l->Stored(tenant, delta); });
    for (const char* stage : {"project", "select", "sufficiency", "answer", "embed"}) {
      absl::StatusOr<llm::EndpointConfig> c = memory_->options().models.Resolve(stage);
      query_models_ = query_models_ || (c.ok() && c->provider != "offline");
    }
  }

  // The caller: the API key's tenant, or tenant "default" with auth off.
  absl::StatusOr<Principal> Authenticate(CallbackServerContext* ctx, Access access) {
    Principal p{storage::kDefaultTenant, true};
    if (keys_ != nullptr) {
      auto it = ctx->client_metadata().find(kApiKeyHeader);
      absl::string_view key;
      if (it != ctx->client_metadata().end())
        key = absl::string_view(it->second.data(), it->second.size());
      absl::StatusOr<Principal> found = keys_->Authenticate(key);
      if (!found.ok()) return found.status();
      p = *found;
    }
    if (access == Access::kAdmin && !p.admin) {
      return absl::PermissionDeniedError("this RPC needs an admin API key");
    }
    return p;
  }

  ServerUnaryReactor* Ingest(CallbackServerContext* ctx, const grpc::ByteBuffer* raw,
                             grpc::ByteBuffer* raw_resp) override {
    wire::IngestRequest req;
    const absl::Status decoded = DecodeRequest(*raw, &req);
    return Unary("Ingest", ctx, req.channel(), [&](const Principal& who) -> absl::Status {
      if (!decoded.ok()) {
        metrics_->CountIngestRejected(1);
        return decoded;
      }
      absl::StatusOr<storage::AppendResult> r =
          IngestBatch(who.tenant, req.channel(), req.messages());
      if (!r.ok()) return r.status();
      v1::IngestResponse resp;
      ToProto(*r, req.channel(), &resp);
      return EncodeResponse(resp, raw_resp);
    });
  }

  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* IngestStream(
      CallbackServerContext* ctx) override;
  SM_DECODED_UNARY(Backup, v1::BackupRequest, v1::BackupResponse)
  SM_DECODED_UNARY(GetMessages, v1::GetMessagesRequest, v1::GetMessagesResponse)
  SM_DECODED_UNARY(GetRoster, v1::GetRosterRequest, v1::GetRosterResponse)
  SM_DECODED_UNARY(ListChannels, v1::ListChannelsRequest, v1::ListChannelsResponse)
  SM_DECODED_UNARY(Query, v1::QueryRequest, v1::QueryResponse)
  SM_DECODED_UNARY(Retrieve, v1::QueryRequest, v1::QueryResponse)
  SM_DECODED_UNARY(Flush, v1::FlushRequest, v1::FlushResponse)
  SM_DECODED_UNARY(ListRecords, v1::ListRecordsRequest, v1::ListRecordsResponse)
  SM_DECODED_UNARY(GetRecord, v1::GetRecordRequest, v1::GetRecordResponse)
  SM_DECODED_UNARY(ListParked, v1::ListParkedRequest, v1::ListParkedResponse)
  SM_DECODED_UNARY(CorrectRecord, v1::CorrectRecordRequest, v1::CorrectRecordResponse)
  SM_DECODED_UNARY(Rederive, v1::RederiveRequest, v1::RederiveResponse)
  SM_DECODED_UNARY(ScoreWriterActions, v1::ScoreWriterActionsRequest,
                   v1::ScoreWriterActionsResponse)
  SM_DECODED_UNARY(ListTransitions, v1::ListTransitionsRequest, v1::ListTransitionsResponse)
  SM_DECODED_UNARY(DeleteMessages, v1::DeleteMessagesRequest, v1::DeleteMessagesResponse)
  SM_DECODED_UNARY(EditMessage, v1::EditMessageRequest, v1::EditMessageResponse)
  SM_DECODED_UNARY(ForgetSpeaker, v1::ForgetSpeakerRequest, v1::ForgetSpeakerResponse)
  SM_DECODED_UNARY(DeleteChannel, v1::DeleteChannelRequest, v1::DeleteChannelResponse)
  grpc::ServerWriteReactor<grpc::ByteBuffer>* ExportChannel(CallbackServerContext* ctx,
                                                            const grpc::ByteBuffer* req) override;
  grpc::ServerWriteReactor<grpc::ByteBuffer>* QueryStream(CallbackServerContext* ctx,
                                                          const grpc::ByteBuffer* req) override;
  grpc::ServerReadReactor<grpc::ByteBuffer>* ImportChannel(CallbackServerContext* ctx,
                                                           grpc::ByteBuffer* resp) override;

  ServerUnaryReactor* Backup(CallbackServerContext* ctx, const v1::BackupRequest* req,
                             v1::BackupResponse* resp) {
    return Unary(
        "Backup", ctx, "",
        [&](const Principal& who) -> absl::Status {
          auto r = memory_->Backup(req->name());
          if (!r.ok()) return r.status();
          resp->set_path(r->first);
          resp->set_bytes(r->second);
          return absl::OkStatus();
        },
        Access::kAdmin);
  }

  // What the export and import reactors need of the service.
  TransferContext Transfer();

  ServerUnaryReactor* GetMessages(CallbackServerContext* ctx, const v1::GetMessagesRequest* req,
                                  v1::GetMessagesResponse* resp) {
    return Unary("GetMessages", ctx, req->channel(), [&](const Principal& who) -> absl::Status {
      if (absl::Status s = CheckChannel(req->channel()); !s.ok()) return s;
      if (absl::Status s = CheckName("speaker", req->speaker(), true); !s.ok()) return s;
      engine::GetMessagesParams p;
      p.speaker = req->speaker();
      p.start_ms = req->start_ms();
      p.end_ms = req->end_ms();
      p.page_size = req->page_size();
      p.page_token = req->page_token();
      std::string next;
      absl::StatusOr<storage::MessagePage> page =
          memory_->GetMessages(ChannelOf(who, req->channel()), p, &next);
      if (!page.ok()) return page.status();
      for (const auto& m : page->messages) ToProto(m, req->channel(), resp->add_messages());
      resp->set_next_page_token(next);
      return absl::OkStatus();
    });
  }

  ServerUnaryReactor* GetRoster(CallbackServerContext* ctx, const v1::GetRosterRequest* req,
                                v1::GetRosterResponse* resp) {
    return Unary("GetRoster", ctx, req->channel(), [&](const Principal& who) -> absl::Status {
      if (absl::Status s = CheckChannel(req->channel()); !s.ok()) return s;
      absl::StatusOr<std::vector<storage::RosterEntry>> roster =
          memory_->GetRoster(ChannelOf(who, req->channel()));
      if (!roster.ok()) return roster.status();
      for (const auto& e : *roster) ToProto(e, resp->add_speakers());
      return absl::OkStatus();
    });
  }

  ServerUnaryReactor* ListChannels(CallbackServerContext* ctx, const v1::ListChannelsRequest* req,
                                   v1::ListChannelsResponse* resp) {
    return Unary("ListChannels", ctx, "", [&](const Principal& who) -> absl::Status {
      std::string next;
      absl::StatusOr<std::vector<storage::ChannelInfo>> channels =
          memory_->ListChannels(who.tenant, req->page_size(), req->page_token(), &next);
      if (!channels.ok()) return channels.status();
      for (const auto& c : *channels) ToProto(c, resp->add_channels());
      resp->set_next_page_token(next);
      return absl::OkStatus();
    });
  }

  ServerUnaryReactor* Query(CallbackServerContext* ctx, const v1::QueryRequest* req,
                            v1::QueryResponse* resp) {
    return Unary("Query", ctx, req->channel(), [&](const Principal& who) -> absl::Status {
      return RunQuery(ctx, who, *req, true, resp);
    });
  }

  ServerUnaryReactor* Retrieve(CallbackServerContext* ctx, const v1::QueryRequest* req,
                               v1::QueryResponse* resp) {
    return Unary("Retrieve", ctx, req->channel(), [&](const Principal& who) -> absl::Status {
      return RunQuery(ctx, who, *req, false, resp);
    });
  }

  ServerUnaryReactor* Flush(CallbackServerContext* ctx, const v1::FlushRequest* req,
                            v1::FlushResponse* resp) {
    return Unary("Flush", ctx, req->channel(), [&](const Principal& who) -> absl::Status {
      if (absl::Status s = CheckChannel(req->channel()); !s.ok()) return s;
      uint64_t newest = 0;
      auto timeout = std::chrono::milliseconds(req->timeout_ms() == 0 ? 60000 : req->timeout_ms());
      absl::StatusOr<storage::WriterState> st = memory_->Flush(
          ChannelOf(who, req->channel()), req->wait(), timeout, &newest, req->wait_embeddings());
      if (!st.ok()) return st.status();
      resp->set_newest_seq(newest);
      resp->set_cursor_seq(st->cursor_seq);
      return absl::OkStatus();
    });
  }

  ServerUnaryReactor* ListRecords(CallbackServerContext* ctx, const v1::ListRecordsRequest* req,
                                  v1::ListRecordsResponse* resp) {
    return Unary("ListRecords", ctx, req->channel(), [&](const Principal& who) -> absl::Status {
      if (absl::Status s = CheckChannel(req->channel()); !s.ok()) return s;
      if (req->layer() == v1::EPISODIC) {
        return absl::InvalidArgumentError("layer: EPISODIC is System 1; use GetMessages");
      }
      if (absl::Status s = CheckName("owner", req->owner(), true); !s.ok()) return s;
      storage::RecordQuery q;
      q.owner = req->owner();
      q.layer = api::LayerCode(req->layer());
      q.include_superseded = req->include_superseded();
      q.limit = req->page_size();
      std::string next;
      absl::StatusOr<std::vector<storage::Record>> records =
          memory_->ListRecords(ChannelOf(who, req->channel()), q, req->page_token(), &next);
      if (!records.ok()) return records.status();
      for (const auto& r : *records) ToProto(r, req->channel(), resp->add_records());
      resp->set_next_page_token(next);
      return absl::OkStatus();
    });
  }

  ServerUnaryReactor* GetRecord(CallbackServerContext* ctx, const v1::GetRecordRequest* req,
                                v1::GetRecordResponse* resp) {
    return Unary("GetRecord", ctx, req->channel(), [&](const Principal& who) -> absl::Status {
      if (absl::Status s = CheckChannel(req->channel()); !s.ok()) return s;
      if (absl::Status s = CheckName("record_id", req->record_id(), false); !s.ok()) return s;
      absl::StatusOr<engine::RecordWithChain> r =
          memory_->GetRecord(ChannelOf(who, req->channel()), req->record_id());
      if (!r.ok()) return r.status();
      ToProto(r->record, req->channel(), resp->mutable_record());
      for (const auto& c : r->chain) ToProto(c, req->channel(), resp->add_chain());
      for (const auto& m : r->supporting) {
        ToProto(m, req->channel(), resp->add_supporting_messages());
      }
      return absl::OkStatus();
    });
  }

  ServerUnaryReactor* ListParked(CallbackServerContext* ctx, const v1::ListParkedRequest* req,
                                 v1::ListParkedResponse* resp) {
    return Unary("ListParked", ctx, req->channel(), [&](const Principal& who) -> absl::Status {
      if (absl::Status s = CheckChannel(req->channel()); !s.ok()) return s;
      absl::StatusOr<std::vector<storage::ParkedSegment>> parked =
          memory_->ListParked(ChannelOf(who, req->channel()));
      if (!parked.ok()) return parked.status();
      for (const auto& p : *parked) ToProto(p, resp->add_segments());
      return absl::OkStatus();
    });
  }

  ServerUnaryReactor* CorrectRecord(CallbackServerContext* ctx, const v1::CorrectRecordRequest* req,
                                    v1::CorrectRecordResponse* resp) {
    return Unary(
        "CorrectRecord", ctx, req->channel(),
        [&](const Principal& who) -> absl::Status {
          if (absl::Status s = CheckChannel(req->channel()); !s.ok()) return s;
          if (absl::Status s = CheckName("record_id", req->record_id(), false); !s.ok()) return s;
          absl::StatusOr<storage::Record> r = memory_->CorrectRecord(
              ChannelOf(who, req->channel()), req->record_id(), req->content());
          if (!r.ok()) return r.status();
          ToProto(*r, req->channel(), resp->mutable_record());
          return absl::OkStatus();
        },
        Access::kAdmin);
  }

  ServerUnaryReactor* Rederive(CallbackServerContext* ctx, const v1::RederiveRequest* req,
                               v1::RederiveResponse* resp) {
    return Unary(
        "Rederive", ctx, req->channel(),
        [&](const Principal& who) -> absl::Status {
          if (absl::Status s = CheckChannel(req->channel()); !s.ok()) return s;
          auto timeout =
              std::chrono::milliseconds(req->timeout_ms() == 0 ? 600000 : req->timeout_ms());
          absl::StatusOr<storage::WriterState> st =
              memory_->Rederive(ChannelOf(who, req->channel()), timeout);
          if (!st.ok()) return st.status();
          resp->set_cursor_seq(st->cursor_seq);
          resp->set_segments(st->segments);
          return absl::OkStatus();
        },
        Access::kAdmin);
  }

  ServerUnaryReactor* ScoreWriterActions(CallbackServerContext* ctx,
                                         const v1::ScoreWriterActionsRequest* req,
                                         v1::ScoreWriterActionsResponse* resp) {
    return Unary("ScoreWriterActions", ctx, "", [&](const Principal& who) -> absl::Status {
      const auto& limits = memory_->options().limits;
      if (req->segment_size() == 0) return absl::InvalidArgumentError("segment: must not be empty");
      if (static_cast<size_t>(req->segment_size()) > limits.max_batch_messages) {
        return absl::InvalidArgumentError(
            absl::StrCat("segment: at most ", limits.max_batch_messages, " messages"));
      }
      constexpr int kMaxRecords = 10000;
      if (req->pre_state_size() > kMaxRecords || req->reference_post_state_size() > kMaxRecords) {
        return absl::InvalidArgumentError(
            absl::StrCat("pre_state/reference_post_state: at most ", kMaxRecords, " records"));
      }
      writer::WriterRewardInput in;
      for (int i = 0; i < req->segment_size(); ++i) {
        const v1::DialogueMessage& m = req->segment(i);
        if (m.speaker().empty() || m.text().empty()) {
          return absl::InvalidArgumentError(
              absl::StrCat("segment[", i, "]: speaker and text are required"));
        }
        in.segment.push_back(FromProto(m, static_cast<uint64_t>(i) + 1));
      }
      for (const auto& r : req->pre_state()) in.pre_state.push_back(FromProto(r));
      if (req->has_reference()) {
        std::vector<storage::Record> ref;
        for (const auto& r : req->reference_post_state()) ref.push_back(FromProto(r));
        in.reference_post_state = std::move(ref);
      }
      in.output = req->output();
      in.length_limit_reached = req->length_limit_reached();
      absl::StatusOr<writer::WriterRewardOutput> out = writer::ScoreWriterActions(in);
      if (!out.ok()) return out.status();
      ToProto(*out, resp);
      return absl::OkStatus();
    });
  }

  ServerUnaryReactor* ListTransitions(CallbackServerContext* ctx,
                                      const v1::ListTransitionsRequest* req,
                                      v1::ListTransitionsResponse* resp) {
    return Unary("ListTransitions", ctx, req->channel(), [&](const Principal& who) -> absl::Status {
      if (absl::Status s = CheckChannel(req->channel()); !s.ok()) return s;
      absl::StatusOr<engine::Memory::TransitionPage> page = memory_->ListTransitions(
          ChannelOf(who, req->channel()), req->after_seq(), req->page_size());
      if (!page.ok()) return page.status();
      for (auto& t : page->transitions) resp->add_transitions(std::move(t));
      resp->set_next_after_seq(page->next_after_seq);
      resp->set_window_size(static_cast<uint32_t>(memory_->options().writer.window));
      resp->set_writer(memory_->WriterName());
      resp->set_capture_enabled(memory_->options().writer.capture_trajectories);
      return absl::OkStatus();
    });
  }

  static void CountsToProto(const engine::Memory::DeletionResult& r, v1::DeletionCounts* out) {
    out->set_messages_deleted(r.messages_deleted);
    out->set_messages_edited(r.messages_edited);
    out->set_records_deleted(r.records_deleted);
    out->set_records_updated(r.records_updated);
    out->set_transitions_deleted(r.transitions_deleted);
  }

  ServerUnaryReactor* DeleteMessages(CallbackServerContext* ctx,
                                     const v1::DeleteMessagesRequest* req,
                                     v1::DeleteMessagesResponse* resp) {
    return Unary("DeleteMessages", ctx, req->channel(), [&](const Principal& who) -> absl::Status {
      if (absl::Status s = CheckChannel(req->channel()); !s.ok()) return s;
      if (req->message_ids_size() == 0) return absl::InvalidArgumentError("message_ids: empty");
      if (req->message_ids_size() > 10000) {
        return absl::InvalidArgumentError("message_ids: at most 10,000 per request");
      }
      for (int i = 0; i < req->message_ids_size(); ++i) {
        absl::Status s =
            CheckName(absl::StrCat("message_ids[", i, "]"), req->message_ids(i), false);
        if (!s.ok()) return s;
      }
      std::vector<std::string> ids(req->message_ids().begin(), req->message_ids().end());
      auto r = memory_->DeleteMessages(ChannelOf(who, req->channel()), ids);
      if (!r.ok()) return r.status();
      CountsToProto(*r, resp->mutable_counts());
      return absl::OkStatus();
    });
  }

  ServerUnaryReactor* EditMessage(CallbackServerContext* ctx, const v1::EditMessageRequest* req,
                                  v1::EditMessageResponse* resp) {
    return Unary("EditMessage", ctx, req->channel(), [&](const Principal& who) -> absl::Status {
      if (absl::Status s = CheckChannel(req->channel()); !s.ok()) return s;
      if (req->message_id().empty()) return absl::InvalidArgumentError("message_id: empty");
      auto r = memory_->EditMessage(ChannelOf(who, req->channel()), req->message_id(), req->text());
      if (!r.ok()) return r.status();
      CountsToProto(*r, resp->mutable_counts());
      return absl::OkStatus();
    });
  }

  ServerUnaryReactor* ForgetSpeaker(CallbackServerContext* ctx, const v1::ForgetSpeakerRequest* req,
                                    v1::ForgetSpeakerResponse* resp) {
    return Unary("ForgetSpeaker", ctx, req->channel(), [&](const Principal& who) -> absl::Status {
      if (absl::Status s = CheckChannel(req->channel()); !s.ok()) return s;
      if (absl::Status s = CheckName("speaker", req->speaker(), false); !s.ok()) return s;
      auto r = memory_->ForgetSpeaker(ChannelOf(who, req->channel()), req->speaker());
      if (!r.ok()) return r.status();
      CountsToProto(*r, resp->mutable_counts());
      return absl::OkStatus();
    });
  }

  ServerUnaryReactor* DeleteChannel(CallbackServerContext* ctx, const v1::DeleteChannelRequest* req,
                                    v1::DeleteChannelResponse* resp) {
    return Unary("DeleteChannel", ctx, req->channel(), [&](const Principal& who) -> absl::Status {
      if (absl::Status s = CheckChannel(req->channel()); !s.ok()) return s;
      auto r = memory_->DeleteChannel(ChannelOf(who, req->channel()));
      if (!r.ok()) return r.status();
      resp->set_existed(*r);
      return absl::OkStatus();
    });
  }

  // Shared by Query, Retrieve and QueryStream (`sink`): defaults, caps, mode.
  absl::Status RunQuery(CallbackServerContext* ctx, const Principal& who,
                        const v1::QueryRequest& req, bool answer, v1::QueryResponse* resp,
                        QueryEventSink* sink = nullptr) {
    if (absl::Status s = CheckChannel(req.channel()); !s.ok()) return s;
    engine::QueryParams p;
    p.channel = ChannelOf(who, req.channel());
    p.question = req.question();
    p.asker = req.asker();
    p.start_ms = req.start_ms();
    p.end_ms = req.end_ms();
    p.options.assign(req.options().begin(), req.options().end());
    if (absl::Status s = retrieval::CheckAnswerOptions(p.options); !s.ok()) return s;
    absl::StatusOr<retrieval::Budgets> budgets =
        retrieval::ResolveBudgets(FromProto(req.budgets()), memory_->options().budgets);
    if (!budgets.ok()) return budgets.status();
    p.budgets = *budgets;
    if (req.tense() == v1::HEAD) p.tense = retrieval::Tense::kHead;
    if (req.tense() == v1::FULL) p.tense = retrieval::Tense::kFull;
    switch (req.mode()) {
      case v1::BM25_ONLY:
        p.mode = retrieval::RecallMode::kBm25;
        p.stages = false;
        break;
      case v1::DENSE_ONLY:
        p.mode = retrieval::RecallMode::kDense;
        p.stages = false;
        break;
      default:
        p.mode = retrieval::RecallMode::kHybrid;
    }
    ApplyQueryFlags(req, ctx->deadline(), &p);
    if (sink != nullptr) {
      p.on_evidence = [&](const retrieval::PipelineResult& so_far) {
        engine::QueryResult partial;
        partial.pipeline = so_far;
        v1::QueryResponse evidence;
        ToProto(partial, req.channel(), req.question(), &evidence);
        return sink->Evidence(evidence);
      };
      p.on_delta = [sink](absl::string_view text) { return sink->Delta(text); };
    }
    std::unique_ptr<Limiter::QuerySlot> slot;
    if (absl::Status s = limiter_->AcquireQuery(&slot); !s.ok()) return s;
    if (query_models_ && (p.stages || answer)) {
      if (absl::Status s = limiter_->CheckTokens(p.channel.tenant); !s.ok()) return s;
    }
    absl::StatusOr<engine::QueryResult> r = memory_->Query(p, answer);
    if (!r.ok()) return r.status();
    uint64_t tokens = 0;
    for (const auto& t : r->pipeline.trace) {
      tokens += t.tokens_in + t.tokens_out;
      metrics_->ObserveQueryStage(t.stage, t.latency_ms / 1000.0);
    }
    metrics_->ObserveDerivationLag(r->pipeline.freshness.lag_messages,
                                   r->pipeline.freshness.lag_ms / 1000.0);
    limiter_->AddTokens(p.channel.tenant, tokens);
    ToProto(*r, req.channel(), req.question(), resp);
    return absl::OkStatus();
  }

  // Ingest's request: admit, convert, validate, append, count.
  absl::StatusOr<storage::AppendResult> IngestBatch(
      const std::string& tenant, const std::string& channel,
      const google::protobuf::RepeatedPtrField<wire::Message>& in) {
    if (absl::Status s = limiter_->AdmitIngest(tenant, in.size()); !s.ok()) {
      metrics_->CountIngestRejected(1);
      return s;
    }
    engine::Memory::Batch b = FromWire(in);
    absl::StatusOr<storage::AppendResult> r = memory_->Ingest(
        storage::ChannelRef{tenant, channel}, b.message_channels, std::move(b.messages));
    CountIngested(r);
    return r;
  }

  // An IngestStream chunk as it is read: admitted, converted and validated
  // (the group's append then only appends).
  std::shared_ptr<PreparedChunk> PrepareChunk(const std::string& tenant, const std::string& channel,
                                              std::unique_ptr<wire::IngestChunk> chunk) {
    auto p = std::make_shared<PreparedChunk>();
    p->status = limiter_->AdmitIngest(tenant, chunk->messages_size());
    if (!p->status.ok()) {
      metrics_->CountIngestRejected(1);
      return p;
    }
    p->chunk = std::move(chunk);
    p->batch = FromWire(*p->chunk->mutable_messages());
    p->status = memory_->CheckBatch(storage::ChannelRef{tenant, channel}, &p->batch);
    return p;
  }

  // IngestStream's group of prepared chunks, stored together
  // (engine::Memory::IngestGroup); each is counted on its own.
  std::vector<absl::StatusOr<storage::AppendResult>> IngestChunks(
      const std::string& tenant, const std::string& channel,
      const std::vector<PreparedChunk*>& chunks, const std::function<void()>& appended) {
    std::vector<absl::StatusOr<storage::AppendResult>> results(
        chunks.size(), absl::InternalError("chunk not stored"));
    std::vector<engine::Memory::Batch> batches;
    std::vector<size_t> slots;  // batch -> its chunk
    for (size_t i = 0; i < chunks.size(); ++i) {
      if (!chunks[i]->status.ok()) {
        results[i] = chunks[i]->status;
        continue;
      }
      batches.push_back(std::move(chunks[i]->batch));
      slots.push_back(i);
    }
    std::vector<absl::StatusOr<storage::AppendResult>> stored =
        memory_->IngestGroup(storage::ChannelRef{tenant, channel}, std::move(batches), appended);
    for (size_t k = 0; k < stored.size() && k < slots.size(); ++k) {
      CountIngested(stored[k]);
      results[slots[k]] = std::move(stored[k]);
    }
    return results;
  }

  void CountIngested(const absl::StatusOr<storage::AppendResult>& r) {
    if (r.ok()) {
      metrics_->CountIngest(r->stored, r->duplicates);
    } else {
      metrics_->CountIngestRejected(1);
    }
  }

  absl::Status CheckReady() const {
    return ready_->load() ? absl::OkStatus()
                          : absl::UnavailableError("server is starting: indexes are rebuilding");
  }

  ServerMetrics* metrics() { return metrics_; }

 private:
  // Decodes `raw` as Req (INVALID_ARGUMENT when it does not decode), runs
  // `typed` on it; its response is encoded by Unary before the call ends.
  template <class Req, class Resp, class Typed>
  ServerUnaryReactor* Decoded(const char* method, CallbackServerContext* ctx,
                              const grpc::ByteBuffer& raw, grpc::ByteBuffer* raw_resp,
                              Typed typed) {
    Req req;
    if (absl::Status s = DecodeRequest(raw, &req); !s.ok()) {
      return Unary(method, ctx, "", [&](const Principal&) { return s; });
    }
    Resp resp;
    const PendingResponse pending{&resp, raw_resp};
    pending_response = &pending;
    ServerUnaryReactor* reactor = typed(ctx, &req, &resp);
    pending_response = nullptr;
    return reactor;
  }

  template <typename Fn>
  ServerUnaryReactor* Unary(const char* method, CallbackServerContext* ctx,
                            const std::string& channel, Fn&& fn, Access access = Access::kTenant) {
    RpcScope scope(method, ctx, metrics_);
    scope.set_channel(channel);
    absl::StatusOr<Principal> who = Authenticate(ctx, access);
    absl::Status s = who.status();
    if (s.ok()) s = CheckReady();
    if (s.ok()) s = fn(*who);
    if (s.ok() && pending_response != nullptr) {
      s = EncodeResponse(*pending_response->response, pending_response->out);
    }
    ServerUnaryReactor* reactor = ctx->DefaultReactor();
    reactor->Finish(scope.Done(s));
    return reactor;
  }

  absl::Status CheckChannel(const std::string& channel) const {
    return storage::ValidateName("channel", channel, memory_->options().limits, false);
  }
  // Ids and names a request filters or acts on are bounded like the ones
  // stored: a longer one cannot name anything, and is refused as such.
  absl::Status CheckName(const std::string& field, const std::string& value,
                         bool allow_empty) const {
    return storage::ValidateName(field, value, memory_->options().limits, allow_empty);
  }

  engine::Memory* const memory_;
  ServerMetrics* const metrics_;
  const std::atomic<bool>* const ready_;
  KeyStore* const keys_;                        // null: auth off
  const std::unique_ptr<Limiter> own_limiter_;  // when none was given
  Limiter* const limiter_;
  bool query_models_ = false;  // some query stage calls a model (spends tokens)
  // Store IngestStream chunks: at least two, so one group's append overlaps
  // the previous group's indexing.
  StoreWorkers store_workers_{std::max(2u, std::thread::hardware_concurrency())};
};

TransferContext Service::Transfer() {
  TransferContext t;
  t.admit = [this](CallbackServerContext* ctx) -> absl::StatusOr<Principal> {
    absl::StatusOr<Principal> who = Authenticate(ctx, Access::kTenant);
    if (!who.ok()) return who.status();
    if (absl::Status s = CheckReady(); !s.ok()) return s;
    return who;
  };
  t.check_channel = [this](const std::string& channel) { return CheckChannel(channel); };
  t.memory = memory_;
  t.limiter = limiter_;
  t.metrics = metrics_;
  return t;
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* Service::QueryStream(CallbackServerContext* ctx,
                                                                 const grpc::ByteBuffer* req) {
  return NewQueryStreamReactor(
      ctx, *req, metrics_,
      [this](CallbackServerContext* c, const v1::QueryRequest& q,
             QueryEventSink* sink) -> absl::Status {
        absl::StatusOr<Principal> who = Authenticate(c, Access::kTenant);
        if (!who.ok()) return who.status();
        if (absl::Status s = CheckReady(); !s.ok()) return s;
        v1::QueryResponse resp;
        SM_RETURN_IF_ERROR(RunQuery(c, *who, q, /*answer=*/true, &resp, sink));
        sink->Final(resp);
        return absl::OkStatus();
      });
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* Service::ExportChannel(CallbackServerContext* ctx,
                                                                   const grpc::ByteBuffer* req) {
  return NewExportReactor(Transfer(), ctx, *req);
}

grpc::ServerReadReactor<grpc::ByteBuffer>* Service::ImportChannel(CallbackServerContext* ctx,
                                                                  grpc::ByteBuffer* resp) {
  return NewImportReactor(Transfer(), ctx, resp);
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* Service::IngestStream(
    CallbackServerContext* ctx) {
  absl::StatusOr<Principal> who = Authenticate(ctx, Access::kTenant);
  absl::Status admitted = who.ok() ? CheckReady() : who.status();
  std::string tenant = who.ok() ? who->tenant : "";
  return NewIngestStreamReactor(
      ctx, metrics_, &store_workers_, std::move(admitted),
      memory_->options().limits.max_batch_messages,
      [this, tenant](const std::string& channel, std::unique_ptr<wire::IngestChunk> chunk) {
        return PrepareChunk(tenant, channel, std::move(chunk));
      },
      [this, tenant](const std::string& channel, const std::vector<PreparedChunk*>& chunks,
                     const std::function<void()>& appended) {
        return IngestChunks(tenant, channel, chunks, appended);
      });
}

}  // namespace

std::unique_ptr<grpc::Service> NewSpeakerMemService(engine::Memory* memory, ServerMetrics* metrics,
                                                    const std::atomic<bool>* ready, KeyStore* keys,
                                                    Limiter* limiter) {
  RouteProtobufLogs();
  return std::make_unique<Service>(memory, metrics, ready, keys, limiter);
}

}  // namespace speakermem::server
