#include "engine/memory.h"

#include <chrono>
#include <filesystem>
#include <map>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/status_macros.h"
#include "recordindex/channel_indexes.h"
#include "retrieval/bm25_index.h"
#include "storage/record_id.h"

namespace speakermem::engine {
namespace {

constexpr char kMessagePagePrefix[] = "m1:";
constexpr char kChannelPagePrefix[] = "c1:";

absl::StatusOr<uint64_t> ParseMessageToken(const std::string& token) {
  if (token.empty()) return 0;
  uint64_t after = 0;
  if (token.rfind(kMessagePagePrefix, 0) != 0 ||
      !absl::SimpleAtoi(token.substr(sizeof(kMessagePagePrefix) - 1), &after)) {
    return absl::InvalidArgumentError("page_token: malformed");
  }
  return after;
}

}  // namespace

Memory::Memory(const MemoryOptions& options, Clock* clock, std::unique_ptr<storage::Store> store,
               retrieval::QueryStages stages)
    : options_(options),
      clock_(clock),
      store_(std::move(store)),
      lexical_(std::make_unique<retrieval::LexicalIndex>()),
      vectors_(std::make_unique<retrieval::VectorIndex>(options.vectors)),
      stages_(std::move(stages)),
      indexes_(std::make_unique<recordindex::ChannelIndexes>(store_.get())),
      pipeline_(std::make_unique<retrieval::QueryPipeline>(store_.get(), lexical_.get(),
                                                           vectors_.get(), &stages_, options.recall,
                                                           options.rows, indexes_.get())) {}

Memory::~Memory() {
  if (writer_) writer_->Stop();
  if (embedder_) embedder_->Stop();
  absl::Status s = SaveShards();
  if (!s.ok()) LOG_WARN("vector shards not saved; rebuilt at next start").Str("error", s.message());
}

std::string Memory::ShardDir() const {
  return options_.shard_dir.empty() ? options_.store.path + ".shards" : options_.shard_dir;
}

absl::Status Memory::SaveShards() {
  if (!rebuilt_) return absl::OkStatus();  // nothing loaded: nothing to save
  auto t = std::chrono::steady_clock::now();
  SM_ASSIGN_OR_RETURN(size_t written, vectors_->Save(ShardDir(), embed_fingerprint_));
  if (written > 0) {
    LOG_INFO("vector shards saved")
        .Int("shards", static_cast<int64_t>(written))
        .Int("ms", static_cast<int64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                            std::chrono::steady_clock::now() - t)
                                            .count()));
  }
  return absl::OkStatus();
}

std::string EmbedFingerprint(const llm::ModelsConfig& models) {
  absl::StatusOr<llm::EndpointConfig> c = models.Resolve("embed");
  if (!c.ok()) return "invalid";
  if (c->provider != "openai") return absl::StrCat("offline/hashed-ngrams-v1/", c->dimension);
  return absl::StrCat("openai/", c->base_url, "/", c->model);
}

absl::StatusOr<std::unique_ptr<Memory>> Memory::Open(const MemoryOptions& options, Clock* clock,
                                                     llm::LlmMetrics* metrics,
                                                     metrics::Registry* registry) {
  if (options.writer.window == 0) return absl::InvalidArgumentError("writer.window: must be > 0");
  SM_ASSIGN_OR_RETURN(retrieval::QueryStages stages,
                      retrieval::BuildQueryStages(options.models, metrics));
  SM_ASSIGN_OR_RETURN(std::unique_ptr<writer::WriterModel> writer_model,
                      writer::BuildWriter(options.models, metrics, options.writer.offline));
  SM_ASSIGN_OR_RETURN(std::unique_ptr<storage::Store> store, storage::Store::Open(options.store));
  std::unique_ptr<Memory> memory(new Memory(options, clock, std::move(store), std::move(stages)));
  writer::WriterOptions wo = options.writer;
  if (wo.scratch_dir.empty()) wo.scratch_dir = options.store.path + ".scratch";
  std::error_code ec;
  std::filesystem::create_directories(wo.scratch_dir, ec);
  memory->writer_ = writer::WriterService::Create(memory->store_.get(), std::move(writer_model), wo,
                                                  clock, registry, memory->indexes_.get());
  retrieval::QueryPipeline* pipeline = memory->pipeline_.get();
  memory->embedder_ = std::make_unique<Embedder>(
      memory->store_.get(), memory->stages_.embed.get(), memory->vectors_.get(), registry,
      [pipeline](const storage::ChannelRef& ch, const std::vector<std::string>& ids,
                 std::vector<std::vector<float>> vecs) {
        for (size_t i = 0; i < ids.size(); ++i)
          pipeline->AddRecordVector(ch, ids[i], std::move(vecs[i]));
        // The row stage's snapshot is brought up to date here, on the
        // embedder's thread, rather than by the next query.
        pipeline->Warm(ch);
      },
      &memory->write_gate_);
  // Records are embedded as the Writer writes them, so a query never waits
  // for that; those a query embedded first are not embedded again.
  Embedder* embedder = memory->embedder_.get();
  embedder->SetRecordKnown([pipeline](const storage::ChannelRef& ch, const std::string& id) {
    return pipeline->KnowsRecordVector(ch, id);
  });
  memory->writer_->SetRecordListener(
      [embedder](const storage::ChannelRef& ch, const std::vector<storage::Record>& records) {
        std::vector<Embedder::Item> items;
        items.reserve(records.size());
        for (const auto& r : records)
          items.push_back(Embedder::Item{ch, 0, r.content, r.record_id});
        embedder->Enqueue(std::move(items));
      });
  memory->embed_fingerprint_ = EmbedFingerprint(options.models);
  return memory;
}

absl::Status Memory::StartWriter() {
  embedder_->Start();
  return writer_->Start();
}

void Memory::StopWriter() {
  writer_->Stop();
  embedder_->Stop();
}

bool Memory::WaitForEmbeddings(std::chrono::milliseconds timeout) {
  return embedder_->WaitIdle(timeout);
}

Memory::Lag Memory::DerivationLag() const { return Lag{writer_->Backlog(), embedder_->pending()}; }

absl::Status Memory::CheckChannel(const storage::ChannelRef& channel) {
  return store_->GetChannelInfo(channel).status();
}

absl::StatusOr<storage::WriterState> Memory::Flush(const storage::ChannelRef& channel, bool wait,
                                                   std::chrono::milliseconds timeout,
                                                   uint64_t* newest_seq, bool embeddings) {
  const auto start = std::chrono::steady_clock::now();
  SM_ASSIGN_OR_RETURN(storage::ChannelInfo info, store_->GetChannelInfo(channel));
  *newest_seq = info.last_seq;
  SM_RETURN_IF_ERROR(writer_->Flush(channel, wait, timeout));
  if (wait && embeddings) {
    auto left = timeout - std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::steady_clock::now() - start);
    if (!embedder_->WaitIdle(std::max(left, std::chrono::milliseconds(0)))) {
      return absl::DeadlineExceededError("flush: embeddings did not finish within the timeout");
    }
  }
  return store_->GetWriterState(channel);
}

absl::StatusOr<std::vector<storage::Record>> Memory::ListRecords(const storage::ChannelRef& channel,
                                                                 storage::RecordQuery query,
                                                                 const std::string& page_token,
                                                                 std::string* next_page_token) {
  SM_RETURN_IF_ERROR(CheckChannel(channel));
  constexpr char kPrefix[] = "r1:";
  if (!page_token.empty()) {
    if (page_token.rfind(kPrefix, 0) != 0)
      return absl::InvalidArgumentError("page_token: malformed");
    query.after_id = page_token.substr(sizeof(kPrefix) - 1);
  }
  uint32_t limit =
      query.limit == 0 ? options_.default_page_size : std::min(query.limit, options_.max_page_size);
  query.limit = limit + 1;
  SM_ASSIGN_OR_RETURN(std::vector<storage::Record> records, store_->ListRecords(channel, query));
  next_page_token->clear();
  if (records.size() > limit) {
    records.resize(limit);
    *next_page_token = absl::StrCat(kPrefix, records.back().record_id);
  }
  return records;
}

absl::StatusOr<RecordWithChain> Memory::GetRecord(const storage::ChannelRef& channel,
                                                  const std::string& record_id) {
  SM_RETURN_IF_ERROR(CheckChannel(channel));
  RecordWithChain out;
  SM_ASSIGN_OR_RETURN(out.record, store_->GetRecord(channel, record_id));
  // Walk back to the oldest node, then forward to the head.
  storage::Record node = out.record;
  for (int guard = 0; !node.supersedes.empty() && guard < 10000; ++guard) {
    SM_ASSIGN_OR_RETURN(node, store_->GetRecord(channel, node.supersedes.front()));
  }
  out.chain.push_back(node);
  for (int guard = 0; !node.superseded_by.empty() && guard < 10000; ++guard) {
    SM_ASSIGN_OR_RETURN(node, store_->GetRecord(channel, node.superseded_by));
    out.chain.push_back(node);
  }
  std::vector<uint64_t> seqs;
  for (const auto& id : out.record.from_ids) {
    absl::StatusOr<uint64_t> seq = store_->FindMessageId(channel, id);
    if (seq.ok()) seqs.push_back(*seq);
  }
  SM_ASSIGN_OR_RETURN(out.supporting, store_->GetMessagesBySeq(channel, seqs));
  return out;
}

absl::StatusOr<storage::Record> Memory::CorrectRecord(const storage::ChannelRef& channel,
                                                      const std::string& record_id,
                                                      const std::string& content) {
  SM_RETURN_IF_ERROR(CheckChannel(channel));
  return writer_->Correct(channel, record_id, content);
}

absl::StatusOr<storage::WriterState> Memory::Rederive(const storage::ChannelRef& channel,
                                                      std::chrono::milliseconds timeout) {
  SM_RETURN_IF_ERROR(CheckChannel(channel));
  return writer_->Rederive(channel, timeout);
}

absl::StatusOr<std::vector<storage::ParkedSegment>> Memory::ListParked(
    const storage::ChannelRef& channel) {
  SM_RETURN_IF_ERROR(CheckChannel(channel));
  return store_->ListParked(channel);
}

absl::StatusOr<Memory::TransitionPage> Memory::ListTransitions(const storage::ChannelRef& channel,
                                                               uint64_t after_seq,
                                                               uint32_t page_size) {
  SM_RETURN_IF_ERROR(CheckChannel(channel));
  uint32_t limit =
      page_size == 0 ? options_.default_page_size : std::min(page_size, options_.max_page_size);
  SM_ASSIGN_OR_RETURN(auto rows, store_->ListTransitions(channel, after_seq, limit + 1));
  TransitionPage page;
  for (auto& [seq, json] : rows) {
    if (page.transitions.size() == limit) {
      page.next_after_seq = rows[limit - 1].first;
      break;
    }
    page.transitions.push_back(std::move(json));
  }
  return page;
}

std::string Memory::WriterName() const {
  absl::StatusOr<llm::EndpointConfig> c = options_.models.Resolve("writer");
  if (!c.ok() || c->provider != "openai") return "offline/rule-writer";
  return absl::StrCat("openai/", c->model);
}

absl::Status Memory::RebuildIndexes(const std::function<void(uint64_t)>& progress) {
  // A different embedding model makes every stored vector stale.
  SM_ASSIGN_OR_RETURN(std::string stored_fp, store_->GetSetting("embed_model"));
  if (stored_fp != embed_fingerprint_) {
    if (!stored_fp.empty()) {
      LOG_WARN("embedding model changed; re-embedding everything")
          .Str("was", stored_fp)
          .Str("now", embed_fingerprint_);
    }
    SM_RETURN_IF_ERROR(store_->DropAllVectors());
    SM_RETURN_IF_ERROR(store_->PutSetting("embed_model", embed_fingerprint_));
  }
  // Saved shards first: the store's vectors then only top them up.
  const std::string shard_dir = ShardDir();
  SM_ASSIGN_OR_RETURN(std::vector<storage::ChannelRef> loaded,
                      vectors_->Load(shard_dir, embed_fingerprint_));
  // Per loaded channel: the ids its file holds that the store has not
  // confirmed yet (left over at the end: deleted since the save).
  std::map<storage::ChannelRef, std::set<uint64_t>> unconfirmed;
  for (const auto& ch : loaded) unconfirmed[ch] = vectors_->Ids(ch);
  std::map<storage::ChannelRef, std::vector<uint64_t>> ids;
  std::map<storage::ChannelRef, std::vector<std::vector<float>>> vecs;
  std::map<storage::ChannelRef, std::set<uint64_t>> has_vector;
  uint64_t from_files = 0;
  SM_RETURN_IF_ERROR(
      store_->ForEachVector([&](const storage::ChannelRef& ch, storage::Store::VectorKind kind,
                                uint64_t id, const std::vector<float>& v) -> absl::Status {
        if (kind == storage::Store::VectorKind::kRecord) {
          pipeline_->AddRecordVector(ch, storage::RecordId(id), v);
          return absl::OkStatus();
        }
        has_vector[ch].insert(id);
        auto file = unconfirmed.find(ch);
        if (file != unconfirmed.end() && file->second.erase(id) > 0) {
          ++from_files;
          return absl::OkStatus();
        }
        ids[ch].push_back(id);
        vecs[ch].push_back(v);
        if (ids[ch].size() >= 4096) {
          SM_RETURN_IF_ERROR(vectors_->Add(ch, ids[ch], vecs[ch]));
          ids[ch].clear();
          vecs[ch].clear();
        }
        return absl::OkStatus();
      }));
  for (auto& [ch, list] : ids) SM_RETURN_IF_ERROR(vectors_->Add(ch, list, vecs[ch]));
  uint64_t stale = 0;
  for (const auto& [ch, gone] : unconfirmed) {
    stale += gone.size();
    SM_RETURN_IF_ERROR(vectors_->Remove(ch, std::vector<uint64_t>(gone.begin(), gone.end())));
  }
  if (!loaded.empty()) {
    LOG_INFO("vector shards loaded")
        .Int("shards", static_cast<int64_t>(loaded.size()))
        .Int("vectors_from_files", static_cast<int64_t>(from_files))
        .Int("stale_removed", static_cast<int64_t>(stale));
  }
  uint64_t count = 0;
  std::vector<Embedder::Item> missing;
  SM_RETURN_IF_ERROR(store_->ForEachMessage(
      [&](const storage::ChannelRef& ch, const storage::Message& m) -> absl::Status {
        lexical_->Add(ch, m);
        auto it = has_vector.find(ch);
        if (it == has_vector.end() || !it->second.count(m.seq)) {
          missing.push_back(Embedder::Item{ch, m.seq, m.text, ""});
        }
        if (++count % 10000 == 0 && progress) progress(count);
        return absl::OkStatus();
      }));
  rebuilt_ = true;
  if (!missing.empty()) {
    LOG_INFO("queueing messages without embeddings")
        .Int("messages", static_cast<int64_t>(missing.size()));
    embedder_->Enqueue(std::move(missing));
  }
  return absl::OkStatus();
}

absl::StatusOr<storage::AppendResult> Memory::Ingest(
    const storage::ChannelRef& channel, const std::vector<absl::string_view>& message_channels,
    std::vector<storage::Message> messages) {
  std::vector<Batch> one(1);
  one[0].message_channels = message_channels;
  one[0].messages = std::move(messages);
  return std::move(IngestGroup(channel, std::move(one)).front());
}

void Memory::IndexAppended(const storage::ChannelRef& channel,
                           std::vector<storage::Message>* messages,
                           const storage::AppendResult& appended) {
  if (appended.stored == 0) return;
  std::vector<storage::Message> stored;
  stored.reserve(appended.stored);
  for (size_t i = 0; i < messages->size(); ++i) {
    if (!appended.messages[i].duplicate) stored.push_back(std::move((*messages)[i]));
  }
  lexical_->AddBatch(channel, stored);
  std::vector<Embedder::Item> items;
  items.reserve(stored.size());
  for (auto& m : stored) items.push_back(Embedder::Item{channel, m.seq, std::move(m.text), ""});
  embedder_->Enqueue(std::move(items));
  writer_->Notify(channel, appended.last_seq);
  ReportStored(channel.tenant, static_cast<int64_t>(appended.stored));
}

absl::StatusOr<std::unique_ptr<storage::ChannelSnapshot>> Memory::ExportChannel(
    const storage::ChannelRef& channel) {
  SM_RETURN_IF_ERROR(storage::ValidateName("channel", channel.channel, options_.limits, false));
  return store_->SnapshotChannel(channel);
}

absl::StatusOr<std::map<std::string, uint64_t>> Memory::StoredMessagesByTenant() {
  std::map<std::string, uint64_t> stored;
  SM_RETURN_IF_ERROR(store_->ForEachChannel(
      [&](const storage::ChannelRef& ch, const storage::ChannelInfo& info) -> absl::Status {
        stored[ch.tenant] += info.message_count;
        return absl::OkStatus();
      }));
  return stored;
}

uint64_t Memory::ApproximateSizeBytes() { return store_->ApproximateSizeBytes(); }

absl::Status Memory::FlushStore() { return store_->Flush(); }

absl::StatusOr<storage::MessagePage> Memory::GetMessages(const storage::ChannelRef& channel,
                                                         const GetMessagesParams& params,
                                                         std::string* next_page_token) {
  if (params.start_ms < 0 || params.end_ms < 0) {
    return absl::InvalidArgumentError("start_ms/end_ms: must not be negative");
  }
  if (params.end_ms != 0 && params.start_ms >= params.end_ms) {
    return absl::InvalidArgumentError("end_ms: must be greater than start_ms");
  }
  storage::MessageQuery q;
  SM_ASSIGN_OR_RETURN(q.after_seq, ParseMessageToken(params.page_token));
  q.start_ms = params.start_ms;
  q.end_ms = params.end_ms;
  q.limit = params.page_size == 0 ? options_.default_page_size
                                  : std::min(params.page_size, options_.max_page_size);
  if (!params.speaker.empty()) {
    absl::StatusOr<std::string> id = store_->ResolveSpeaker(channel, params.speaker);
    if (absl::IsNotFound(id.status())) {
      // Unknown channel is NOT_FOUND; an unknown speaker is an empty result.
      SM_RETURN_IF_ERROR(store_->GetChannelInfo(channel).status());
      next_page_token->clear();
      return storage::MessagePage{};
    }
    SM_RETURN_IF_ERROR(id.status());
    q.speaker_id = *id;
  }
  SM_ASSIGN_OR_RETURN(storage::MessagePage page, store_->ScanMessages(channel, q));
  *next_page_token =
      page.next_after_seq == 0 ? "" : absl::StrCat(kMessagePagePrefix, page.next_after_seq);
  return page;
}

absl::StatusOr<std::vector<storage::RosterEntry>> Memory::GetRoster(
    const storage::ChannelRef& channel) {
  return store_->GetRoster(channel);
}

absl::StatusOr<std::vector<storage::ChannelInfo>> Memory::ListChannels(
    const std::string& tenant, uint32_t page_size, const std::string& page_token,
    std::string* next_page_token) {
  std::string after;
  if (!page_token.empty()) {
    if (page_token.rfind(kChannelPagePrefix, 0) != 0) {
      return absl::InvalidArgumentError("page_token: malformed");
    }
    after = page_token.substr(sizeof(kChannelPagePrefix) - 1);
  }
  uint32_t limit =
      page_size == 0 ? options_.default_page_size : std::min(page_size, options_.max_page_size);
  // Ask for one more to learn whether another page exists.
  SM_ASSIGN_OR_RETURN(std::vector<storage::ChannelInfo> channels,
                      store_->ListChannels(tenant, after, limit + 1));
  next_page_token->clear();
  if (channels.size() > limit) {
    channels.resize(limit);
    *next_page_token = absl::StrCat(kChannelPagePrefix, channels.back().channel);
  }
  return channels;
}

absl::StatusOr<QueryResult> Memory::Query(const QueryParams& params, bool answer) {
  if (params.end_ms != 0 && params.start_ms >= params.end_ms) {
    return absl::InvalidArgumentError("end_ms: must be greater than start_ms");
  }
  const auto wait_until = std::chrono::steady_clock::now() + params.fresh_timeout;
  if (params.fresh) {
    SM_RETURN_IF_ERROR(CheckChannel(params.channel));
    SM_RETURN_IF_ERROR(writer_->Flush(params.channel, /*wait=*/true, params.fresh_timeout));
  }
  if (params.min_seq > 0) {
    SM_ASSIGN_OR_RETURN(storage::ChannelInfo info, store_->GetChannelInfo(params.channel));
    if (params.min_seq > info.last_seq) {
      return absl::OutOfRangeError(absl::StrCat("min_seq: ", params.min_seq,
                                                " is beyond the channel's newest message (seq ",
                                                info.last_seq, ")"));
    }
    if (!embedder_->WaitIndexed(params.channel, params.min_seq, wait_until)) {
      return absl::DeadlineExceededError(
          absl::StrCat("min_seq: messages up to seq ", params.min_seq,
                       " were not all embedded in time (the embedding model is behind)"));
    }
  }
  retrieval::PipelineRequest req = params;  // the pipeline's part of the query
  req.answer = answer;
  QueryResult result;
  SM_ASSIGN_OR_RETURN(result.pipeline, pipeline_->Run(req));
  result.pipeline.freshness.waited = params.fresh;
  if (result.pipeline.answer) {
    result.answer = result.pipeline.answer->answer;
    result.abstained = result.pipeline.answer->abstained;
    result.cited_ids = result.pipeline.answer->cited_ids;
  }
  return result;
}

}  // namespace speakermem::engine
