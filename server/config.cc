#include "server/config.h"

#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/log.h"
#include "common/status_macros.h"
#include "llm/config.h"

namespace speakermem::server {
namespace {

absl::Status BadValue(const std::string& name, const std::string& value,
                      absl::string_view expected) {
  return absl::InvalidArgumentError(
      absl::StrCat("config ", name, ": '", value, "' is not ", expected));
}

template <typename T>
Knob IntKnob(std::string section, std::string key, std::string help,
             std::function<T*(ServerConfig*)> field, int64_t min, int64_t max) {
  std::string name = absl::StrCat(section, ".", key);
  Knob k{section, key, std::move(help), nullptr, nullptr};
  k.get = [field](const ServerConfig& c) {
    return absl::StrCat(*field(const_cast<ServerConfig*>(&c)));
  };
  k.set = [field, name, min, max](ServerConfig* c, const std::string& v) {
    int64_t n = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(v), &n) || n < min || n > max) {
      return BadValue(name, v, absl::StrCat("an integer in [", min, ", ", max, "]"));
    }
    *field(c) = static_cast<T>(n);
    return absl::OkStatus();
  };
  return k;
}

Knob DoubleKnob(std::string section, std::string key, std::string help,
                std::function<double*(ServerConfig*)> field, double min, double max) {
  std::string name = absl::StrCat(section, ".", key);
  Knob k{section, key, std::move(help), nullptr, nullptr};
  k.get = [field](const ServerConfig& c) {
    return absl::StrFormat("%g", *field(const_cast<ServerConfig*>(&c)));
  };
  k.set = [field, name, min, max](ServerConfig* c, const std::string& v) {
    double d = 0;
    if (!absl::SimpleAtod(absl::StripAsciiWhitespace(v), &d) || !(d >= min && d <= max)) {
      return BadValue(name, v, absl::StrCat("a number in [", min, ", ", max, "]"));
    }
    *field(c) = d;
    return absl::OkStatus();
  };
  return k;
}

Knob StrKnob(std::string section, std::string key, std::string help,
             std::function<std::string*(ServerConfig*)> field) {
  Knob k{section, key, std::move(help), nullptr, nullptr};
  k.get = [field](const ServerConfig& c) { return *field(const_cast<ServerConfig*>(&c)); };
  k.set = [field](ServerConfig* c, const std::string& v) {
    *field(c) = v;
    return absl::OkStatus();
  };
  return k;
}

Knob BoolKnob(std::string section, std::string key, std::string help,
              std::function<bool*(ServerConfig*)> field) {
  std::string name = absl::StrCat(section, ".", key);
  Knob k{section, key, std::move(help), nullptr, nullptr};
  k.get = [field](const ServerConfig& c) {
    return std::string(*field(const_cast<ServerConfig*>(&c)) ? "true" : "false");
  };
  k.set = [field, name](ServerConfig* c, const std::string& v) {
    bool b = false;
    if (!absl::SimpleAtob(absl::StripAsciiWhitespace(v), &b)) {
      return BadValue(name, v, "a boolean (true/false)");
    }
    *field(c) = b;
    return absl::OkStatus();
  };
  return k;
}

// The edge: listen addresses, auth, TLS, logging.
void EdgeKnobs(std::vector<Knob>* knobs) {
  using C = ServerConfig;
  std::vector<Knob>& k = *knobs;
  k.push_back(StrKnob("server", "listen",
                      "gRPC listen address host:port; port 0 picks a free port.",
                      [](C* c) { return &c->listen; }));
  k.push_back(StrKnob("server", "metrics_listen",
                      "Prometheus /metrics address host:port; empty disables it.",
                      [](C* c) { return &c->metrics_listen; }));
  k.push_back(StrKnob("server", "port_file",
                      "File written after start with '<grpc port> <metrics port>'; "
                      "empty: none. Lets scripts use port 0.",
                      [](C* c) { return &c->port_file; }));
  k.push_back(IntKnob<int>(
      "server", "max_message_bytes", "Largest gRPC message accepted, in bytes.",
      [](C* c) { return &c->max_message_bytes; }, 1024, 1 << 30));
  k.push_back(IntKnob<int>(
      "server", "shutdown_grace_ms",
      "On SIGTERM/SIGINT, how long in-flight RPCs may take to "
      "finish before they are cancelled.",
      [](C* c) { return &c->shutdown_grace_ms; }, 0, 3600000));
  k.push_back(BoolKnob("auth", "enabled",
                       "Require an API key (metadata x-api-key) on every RPC; the key's tenant "
                       "scopes all data. On in the shipped production config.",
                       [](C* c) { return &c->auth_enabled; }));
  k.push_back(StrKnob("auth", "keys_file",
                      "Keys file: lines 'sha256:<hex> <tenant> [admin]' (speakermemd --hash-key "
                      "KEY prints the hash); re-read within a second of a change.",
                      [](C* c) { return &c->auth_keys_file; }));
  k.push_back(StrKnob("tls", "cert_file",
                      "PEM certificate chain; with tls.key_file, gRPC and the metrics port "
                      "serve TLS only.",
                      [](C* c) { return &c->tls_cert_file; }));
  k.push_back(StrKnob("tls", "key_file", "PEM private key of tls.cert_file.",
                      [](C* c) { return &c->tls_key_file; }));
  k.push_back(StrKnob("tls", "client_ca_file",
                      "PEM CA bundle; when set, gRPC clients must present a certificate it "
                      "signed (mutual TLS).",
                      [](C* c) { return &c->tls_client_ca_file; }));
  k.push_back(StrKnob("log", "level", "Lowest log level written: debug, info, warn, error.",
                      [](C* c) { return &c->log_level; }));
}

// The store and the sizes of what is stored.
void StoreKnobs(std::vector<Knob>* knobs) {
  using C = ServerConfig;
  std::vector<Knob>& k = *knobs;
  k.push_back(StrKnob("store", "data_dir", "Directory of the RocksDB store; created when missing.",
                      [](C* c) { return &c->memory.store.path; }));
  k.push_back(BoolKnob("store", "sync",
                       "fsync the write-ahead log before acknowledging each write. "
                       "false: acknowledged writes survive a process crash but not "
                       "a power loss; true: they survive both, at a throughput cost.",
                       [](C* c) { return &c->memory.store.sync; }));
  k.push_back(IntKnob<size_t>(
      "store", "block_cache_bytes", "RocksDB block cache shared by all column families.",

      [](C* c) { return &c->memory.store.block_cache_bytes; }, 1 << 20, int64_t{1} << 40));
  k.push_back(IntKnob<int>(
      "store", "background_threads", "RocksDB flush and compaction threads.",
      [](C* c) { return &c->memory.store.background_threads; }, 1, 64));
  k.push_back(IntKnob<size_t>(
      "limits", "max_text_bytes", "Largest message text accepted, in bytes.",
      [](C* c) { return &c->memory.limits.max_text_bytes; }, 1, 1 << 24));
  k.push_back(IntKnob<size_t>(
      "limits", "max_batch_messages", "Most messages in one Ingest request or stream chunk.",

      [](C* c) { return &c->memory.limits.max_batch_messages; }, 1, 1000000));
  k.push_back(IntKnob<size_t>(
      "limits", "max_name_bytes",
      "Longest channel, message_id, speaker, speaker_id, session or reply_to.",
      [](C* c) { return &c->memory.limits.max_name_bytes; }, 1, 65536));
  k.push_back(IntKnob<size_t>(
      "limits", "max_metadata_entries", "Most metadata entries on one message.",
      [](C* c) { return &c->memory.limits.max_metadata_entries; }, 0, 4096));
  k.push_back(IntKnob<size_t>(
      "limits", "max_metadata_value_bytes", "Longest metadata value, in bytes.",
      [](C* c) { return &c->memory.limits.max_metadata_value_bytes; }, 0, 1 << 20));
}

// Paging, query and per-tenant limits, and the query default.
void LimitKnobs(std::vector<Knob>* knobs) {
  using C = ServerConfig;
  std::vector<Knob>& k = *knobs;
  k.push_back(IntKnob<uint32_t>(
      "limits", "default_page_size",
      "Page size of GetMessages/ListChannels when the "
      "request gives none.",

      [](C* c) { return &c->memory.default_page_size; }, 1, 100000));
  k.push_back(IntKnob<uint32_t>(
      "limits", "max_page_size",
      "Largest page a request may ask for (larger asks are "
      "clamped).",
      [](C* c) { return &c->memory.max_page_size; }, 1, 100000));
  k.push_back(IntKnob<uint32_t>(
      "limits", "max_top_k",
      "Largest System 1 top-k a query may ask for (larger "
      "asks are INVALID_ARGUMENT).",
      [](C* c) { return &c->memory.budgets.max_top_k; }, 1, 10000));
  k.push_back(IntKnob<uint32_t>(
      "limits", "max_recall_n",
      "Largest System 1 recall pool (candidates before top-k) a query may ask for.",
      [](C* c) { return &c->memory.budgets.max_recall_n; }, 1, 100000));
  k.push_back(IntKnob<uint32_t>(
      "limits", "max_s2_k", "Largest System 2 records per row a query may ask for.",
      [](C* c) { return &c->memory.budgets.max_s2_k; }, 1, 10000));
  k.push_back(IntKnob<uint32_t>(
      "limits", "max_source_k",
      "Largest System 2 source-k (records a person voiced) a query may ask for.",
      [](C* c) { return &c->memory.budgets.max_source_k; }, 1, 10000));
  k.push_back(IntKnob<uint32_t>(
      "limits", "max_expand_anchors",
      "Largest number of System 1 anchors a query may ask to expand.",
      [](C* c) { return &c->memory.budgets.max_expand_anchors; }, 1, 1000));
  k.push_back(IntKnob<uint32_t>(
      "limits", "max_expand_window",
      "Largest expansion window (turns either side of an anchor) a query may ask for.",
      [](C* c) { return &c->memory.budgets.max_expand_window; }, 1, 1000));
  k.push_back(IntKnob<uint32_t>(
      "limits", "tenant_messages_per_second",
      "Messages a tenant may ingest per second (token bucket); 0: "
      "unlimited.",
      [](C* c) { return &c->tenant_limits.messages_per_second; }, 0, 100000000));
  k.push_back(IntKnob<uint32_t>(
      "limits", "tenant_burst_messages",
      "Messages a tenant may send at once before the rate applies; 0: "
      "one second's worth.",
      [](C* c) { return &c->tenant_limits.burst_messages; }, 0, 100000000));
  k.push_back(IntKnob<uint64_t>(
      "limits", "tenant_max_messages",
      "Messages a tenant may hold in all its channels; 0: unlimited.",
      [](C* c) { return &c->tenant_limits.max_stored_messages; }, 0, INT64_MAX));
  k.push_back(IntKnob<uint64_t>(
      "limits", "tenant_tokens_per_day",
      "Model tokens (all stages, the Writer included) a tenant may "
      "use per UTC day; beyond it queries are refused; 0: unlimited.",
      [](C* c) { return &c->tenant_limits.tokens_per_day; }, 0, INT64_MAX));
  k.push_back(IntKnob<uint32_t>(
      "limits", "max_concurrent_queries",
      "Query/Retrieve calls running at once; more are refused with "
      "RESOURCE_EXHAUSTED; 0: unlimited.",
      [](C* c) { return &c->tenant_limits.max_concurrent_queries; }, 0, 1000000));
  k.push_back(IntKnob<uint32_t>(
      "query", "default_top_k",
      "System 1 top-k when a query gives none (paper main "
      "configuration: 10).",
      [](C* c) { return &c->memory.budgets.default_top_k; }, 1, 10000));
}

// System 1 recall.
void RetrievalKnobs(std::vector<Knob>* knobs) {
  using C = ServerConfig;
  std::vector<Knob>& k = *knobs;
  // System 1 recall constants: defaults chosen by leave-one-conversation-out
  // (docs/retrieval.md).
  k.push_back(BoolKnob("retrieval", "stem",
                       "Match Snowball (Porter2) stems of words instead of the words as written.",
                       [](C* c) { return &c->memory.recall.lexical.stem; }));
  k.push_back(DoubleKnob(
      "retrieval", "speaker_weight",
      "BM25F weight of the speaker field: a message by a person the question "
      "names gains this x the person's idf (0: off).",
      [](C* c) { return &c->memory.recall.lexical.speaker_weight; }, 0, 100));
  k.push_back(DoubleKnob(
      "retrieval", "context_weight",
      "Share of its best same-session neighbour's score a message inherits "
      "(0: off).",
      [](C* c) { return &c->memory.recall.lexical.context_weight; }, 0, 10));
  k.push_back(IntKnob<uint32_t>(
      "retrieval", "context_window", "Neighbours within this many turns pass on their score.",
      [](C* c) { return &c->memory.recall.lexical.context_window; }, 0, 50));
  k.push_back(DoubleKnob(
      "retrieval", "context_decay",
      "Factor on a neighbour's score per turn of distance beyond the first.",
      [](C* c) { return &c->memory.recall.lexical.context_decay; }, 0, 1));
  k.push_back(DoubleKnob(
      "retrieval", "prf_weight",
      "Pseudo-relevance feedback (RM3): weight of the feedback terms in the "
      "second round's query (0: one round).",
      [](C* c) { return &c->memory.recall.lexical.prf_weight; }, 0, 1));
  k.push_back(IntKnob<uint32_t>(
      "retrieval", "prf_docs", "Best messages of the first round the feedback terms come from.",
      [](C* c) { return &c->memory.recall.lexical.prf_docs; }, 1, 1000));
  k.push_back(IntKnob<uint32_t>(
      "retrieval", "prf_terms", "Feedback terms added to the query.",
      [](C* c) { return &c->memory.recall.lexical.prf_terms; }, 1, 1000));
  k.push_back(DoubleKnob(
      "retrieval", "dense_weight_offline",
      "Weight of the dense list in rank fusion (lexical list: 1) when the "
      "embedder is the offline hashed one.",
      [](C* c) { return &c->memory.recall.dense_weight_offline; }, 0, 10));
  k.push_back(DoubleKnob(
      "retrieval", "dense_weight_model",
      "Weight of the dense list in rank fusion with a model embedder.",
      [](C* c) { return &c->memory.recall.dense_weight_model; }, 0, 10));
  k.push_back(DoubleKnob(
      "retrieval", "provenance_weight",
      "System 2 rows: added to a record's similarity, this x the summed rank "
      "weights (1 for the first item, falling linearly over top-k) of its "
      "supporting messages in the query's System 1 evidence.",
      [](C* c) { return &c->memory.rows.provenance_weight; }, 0, 1000));
  k.push_back(DoubleKnob(
      "retrieval", "record_floor_offline",
      "System 2 rows: least score (similarity to the issue, half cosine, half share "
      "of the issue's words, plus the provenance term) for a record to enter its row, "
      "offline embedder.",
      [](C* c) { return &c->memory.rows.record_floor_offline; }, 0, 10));
  k.push_back(DoubleKnob(
      "retrieval", "fallback_floor_offline",
      "System 2 rows: least similarity for a person's best message to stand "
      "in for a row without records, offline embedder.",
      [](C* c) { return &c->memory.rows.fallback_floor_offline; }, 0, 1));
  k.push_back(DoubleKnob(
      "retrieval", "record_floor_model",
      "The record floor with a model embedder (the paper's cosine 0.30).",
      [](C* c) { return &c->memory.rows.record_floor_model; }, 0, 10));
  k.push_back(DoubleKnob(
      "retrieval", "fallback_floor_model",
      "The verbatim fallback floor with a model embedder (the paper's 0.25).",
      [](C* c) { return &c->memory.rows.fallback_floor_model; }, 0, 1));
}

// The vector index.
void IndexKnobs(std::vector<Knob>* knobs) {
  using C = ServerConfig;
  std::vector<Knob>& k = *knobs;
  k.push_back(IntKnob<size_t>(
      "index", "ivf_threshold",
      "Channels with more message vectors than this search an IVF-Flat "
      "index (approximate) instead of exact inner product.",
      [](C* c) { return &c->memory.vectors.ivf_threshold; }, 1, 1000000000));
  k.push_back(IntKnob<size_t>(
      "index", "ivf_nprobe",
      "Inverted lists probed per dense search in an IVF shard (more: "
      "better recall, slower).",
      [](C* c) { return &c->memory.vectors.ivf_nprobe; }, 1, 4096));
}

// Backups, index shards and the Writer.
void WriterKnobs(std::vector<Knob>* knobs) {
  using C = ServerConfig;
  std::vector<Knob>& k = *knobs;
  k.push_back(StrKnob("store", "backup_dir",
                      "Where the Backup RPC writes checkpoints (one directory per backup); "
                      "empty: \"<data_dir>.backups\".",
                      [](C* c) { return &c->memory.backup_dir; }));
  k.push_back(StrKnob("index", "shard_dir",
                      "Where vector shards are saved between runs (a cache of the store's "
                      "vectors); empty: \"<data_dir>.shards\".",
                      [](C* c) { return &c->memory.shard_dir; }));
  k.push_back(IntKnob<size_t>(
      "writer", "window", "Messages per Writer segment (the paper's Window25).",
      [](C* c) { return &c->memory.writer.window; }, 1, 10000));
  k.push_back(IntKnob<int>(
      "writer", "workers", "Writer worker threads.", [](C* c) { return &c->memory.writer.workers; },
      1, 256));
  k.push_back(IntKnob<size_t>(
      "writer", "queue_capacity",
      "Channels waiting for a Writer worker in memory; pending work "
      "beyond it waits in the store.",
      [](C* c) { return &c->memory.writer.queue_capacity; }, 1, 10000000));
  k.push_back(IntKnob<int>(
      "writer", "idle_flush_ms",
      "A channel quiet this long gets its short tail written; 0 disables.",
      [](C* c) { return &c->memory.writer.idle_flush_ms; }, 0, 86400000));
  k.push_back(IntKnob<int>(
      "writer", "max_attempts", "Writer model attempts per segment before it is parked.",
      [](C* c) { return &c->memory.writer.max_attempts; }, 1, 100));
  k.push_back(IntKnob<int>(
      "writer", "retry_backoff_ms", "Backoff between Writer attempts (doubles each time).",
      [](C* c) { return &c->memory.writer.retry_backoff_ms; }, 0, 600000));
  k.push_back(IntKnob<int>(
      "writer", "parked_retry_ms", "A parked segment is retried after this long.",
      [](C* c) { return &c->memory.writer.parked_retry_ms; }, 0, 86400000));
  k.push_back(IntKnob<size_t>(
      "writer", "max_heads",
      "Most current records shown to the Writer for a full window, most relevant to the "
      "segment first; a shorter segment gets its share (messages / "
      "window, at least a quarter).",
      [](C* c) { return &c->memory.writer.max_heads; }, 0, 10000));
  k.push_back(BoolKnob("writer", "capture_trajectories",
                       "Record each applied Writer segment (messages, heads shown, raw model "
                       "output, validation report, applied actions) for export as training "
                       "data with `speakermem trajectories`. Off by default: it stores the "
                       "conversation text a second time.",
                       [](C* c) { return &c->memory.writer.capture_trajectories; }));
  k.push_back(IntKnob<size_t>(
      "writer", "head_token_budget",
      "Estimated tokens of current records shown to the Writer for a full "
      "window; a shorter segment gets its share, as for "
      "`writer.max_heads`.",
      [](C* c) { return &c->memory.writer.head_token_budget; }, 0, 1000000));
  k.push_back(IntKnob<size_t>(
      "writer", "offline_min_content",
      "Offline Writer: content words a clause needs to be remembered (a "
      "clause whose subject is \"I\" needs one).",
      [](C* c) { return &c->memory.writer.offline.min_content; }, 1, 100));
  k.push_back(DoubleKnob(
      "writer", "offline_merge_similarity",
      "Offline Writer: within a segment, a record joins an earlier one of the "
      "same owner, layer and source when their content words overlap at least "
      "this much (Jaccard); 0 joins all of them.",
      [](C* c) { return &c->memory.writer.offline.merge_similarity; }, 0, 1));
  k.push_back(IntKnob<size_t>(
      "writer", "offline_max_core_per_segment",
      "Offline Writer: at most this many core records per person from one "
      "segment; the person's least informative statements join the kept "
      "record closest to them. 0: no limit. Larger caps lower System 2 row "
      "precision (eval/tool/writer_study.cc).",
      [](C* c) { return &c->memory.writer.offline.max_core_per_segment; }, 0, 1000));
  k.push_back(IntKnob<size_t>(
      "writer", "offline_min_record_words",
      "Offline Writer: a person's core record from one segment with fewer "
      "content words than this joins their most similar kept record of the "
      "segment instead of standing alone (the most informative always "
      "stands). 0: no floor.",
      [](C* c) { return &c->memory.writer.offline.min_record_words; }, 0, 100));
  k.push_back(
      BoolKnob("writer", "offline_group_arrangements",
               "Offline Writer: a clause that arranges something for the group without "
               "being the speaker's own (\"we\" or \"everyone\" with a plan or a date) is a "
               "GROUP interaction, not the speaker's core (two or more members' positions "
               "are the group's whatever this says). Off by default: on, it changes "
               "SpeakerLevenshtein by little and System 2 rows lose precision "
               "(eval/results/writer_dev.md; `speakermem eval rows --config`).",
               [](C* c) { return &c->memory.writer.offline.group_arrangements; }));
}

// The default model endpoint (every stage's, unless overridden).
void ModelKnobs(std::vector<Knob>* knobs) {
  using C = ServerConfig;
  std::vector<Knob>& k = *knobs;
  for (const auto& [key, help] : llm::EndpointFields()) {
    Knob knob{"model", key, help, nullptr, nullptr};
    std::string field = key;
    knob.get = [field](const C& c) { return llm::GetEndpointField(c.models.defaults, field); };
    knob.set = [field](C* c, const std::string& v) {
      return llm::SetEndpointField(&c->models.defaults, field, v);
    };
    k.push_back(std::move(knob));
  }
}

std::vector<Knob> BuildKnobs() {
  std::vector<Knob> k;
  EdgeKnobs(&k);
  StoreKnobs(&k);
  LimitKnobs(&k);
  RetrievalKnobs(&k);
  IndexKnobs(&k);
  WriterKnobs(&k);
  ModelKnobs(&k);
  return k;
}

// "model.<stage>.<key>": a per-stage override. Returns false when `dotted`
// has another shape.
bool SplitStageKey(const std::string& dotted, std::string* stage, std::string* key) {
  if (dotted.rfind("model.", 0) != 0) return false;
  std::string rest = dotted.substr(6);
  size_t dot = rest.find('.');
  if (dot == std::string::npos) return false;
  *stage = rest.substr(0, dot);
  *key = rest.substr(dot + 1);
  return true;
}

std::string Unquote(std::string v) {
  v = std::string(absl::StripAsciiWhitespace(v));
  if (v.size() >= 2 &&
      ((v.front() == '"' && v.back() == '"') || (v.front() == '\'' && v.back() == '\''))) {
    return v.substr(1, v.size() - 2);
  }
  return v;
}

absl::Status Validate(const ServerConfig& c) {
  LogLevel level;
  if (!ParseLogLevel(c.log_level, &level)) {
    return BadValue("log.level", c.log_level, "one of debug, info, warn, error");
  }
  if (c.listen.empty()) return absl::InvalidArgumentError("config server.listen: empty");
  if (c.memory.store.path.empty()) {
    return absl::InvalidArgumentError("config store.data_dir: empty");
  }
  if (c.memory.default_page_size > c.memory.max_page_size) {
    return absl::InvalidArgumentError(
        "config limits.default_page_size: exceeds limits.max_page_size");
  }
  if (c.memory.budgets.default_top_k > c.memory.budgets.max_top_k) {
    return absl::InvalidArgumentError("config query.default_top_k: exceeds limits.max_top_k");
  }
  return absl::OkStatus();
}

}  // namespace

const std::vector<Knob>& Knobs() {
  static const std::vector<Knob>* knobs = new std::vector<Knob>(BuildKnobs());
  return *knobs;
}

absl::Status SetKnob(ServerConfig* config, const std::string& dotted_key,
                     const std::string& value) {
  for (const Knob& k : Knobs()) {
    if (absl::StrCat(k.section, ".", k.key) == dotted_key) return k.set(config, value);
  }
  std::string stage, key;
  if (SplitStageKey(dotted_key, &stage, &key)) {
    absl::Status s = config->models.SetOverride(stage, key, value);
    if (!s.ok())
      return absl::InvalidArgumentError(absl::StrCat("config ", dotted_key, ": ", s.message()));
    return s;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown config key '", dotted_key, "' (see speakermemd --help-config)"));
}

absl::Status ApplyConfigFile(ServerConfig* config, const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("config file ", path, " not found"));
  std::string line, section;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    absl::string_view l = absl::StripAsciiWhitespace(line);
    if (l.empty() || l[0] == '#' || l[0] == ';') continue;
    if (l.front() == '[') {
      if (l.back() != ']') {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ":", lineno, ": malformed section header"));
      }
      section = std::string(absl::StripAsciiWhitespace(l.substr(1, l.size() - 2)));
      continue;
    }
    size_t eq = l.find('=');
    if (eq == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat(path, ":", lineno, ": expected key = value"));
    }
    std::string key(absl::StripAsciiWhitespace(l.substr(0, eq)));
    std::string value(l.substr(eq + 1));
    // Strip a trailing comment outside quotes.
    absl::string_view v = absl::StripAsciiWhitespace(value);
    if (!v.empty() && v.front() != '"' && v.front() != '\'') {
      size_t hash = value.find(" #");
      if (hash != std::string::npos) value = value.substr(0, hash);
    }
    std::string dotted = section.empty() ? key : absl::StrCat(section, ".", key);
    absl::Status s = SetKnob(config, dotted, Unquote(value));
    if (!s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ":", lineno, ": ", s.message()));
    }
  }
  return absl::OkStatus();
}

absl::Status ApplyEnvironment(ServerConfig* config, const std::vector<std::string>& env) {
  for (const std::string& entry : env) {
    size_t eq = entry.find('=');
    if (eq == std::string::npos) continue;
    std::string name = entry.substr(0, eq);
    for (const Knob& k : Knobs()) {
      std::string var = absl::AsciiStrToUpper(absl::StrCat("SPEAKERMEM_", k.section, "_", k.key));
      if (var == name) {
        absl::Status s = k.set(config, entry.substr(eq + 1));
        if (!s.ok()) {
          return absl::InvalidArgumentError(absl::StrCat("environment ", name, ": ", s.message()));
        }
      }
    }
    // SPEAKERMEM_MODEL_<STAGE>_<KEY>
    for (const char* stage : llm::kStages) {
      for (const auto& [key, help] : llm::EndpointFields()) {
        std::string var = absl::AsciiStrToUpper(absl::StrCat("SPEAKERMEM_MODEL_", stage, "_", key));
        if (var != name) continue;
        absl::Status s = config->models.SetOverride(stage, key, entry.substr(eq + 1));
        if (!s.ok()) {
          return absl::InvalidArgumentError(absl::StrCat("environment ", name, ": ", s.message()));
        }
      }
    }
  }
  return absl::OkStatus();
}

absl::Status LoadConfig(int argc, char** argv, const std::vector<std::string>& env,
                        ServerConfig* config, std::string* help) {
  help->clear();
  std::vector<std::pair<std::string, std::string>> sets;
  std::string config_file;
  static const std::pair<const char*, const char*> kShortcuts[] = {
      {"listen", "server.listen"},    {"metrics-listen", "server.metrics_listen"},
      {"data-dir", "store.data_dir"}, {"port-file", "server.port_file"},
      {"log-level", "log.level"},     {"sync", "store.sync"}};
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      *help = "usage";
      return absl::OkStatus();
    }
    if (arg == "--help-config") {
      *help = "config";
      return absl::OkStatus();
    }
    if (arg.rfind("--", 0) != 0) {
      return absl::InvalidArgumentError(absl::StrCat("unexpected argument '", arg, "'"));
    }
    std::string name = arg.substr(2), value;
    size_t eq = name.find('=');
    bool has_value = eq != std::string::npos;
    if (has_value) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (name == "sync" && !has_value) {
      sets.emplace_back("store.sync", "true");
      continue;
    }
    if (!has_value) {
      if (i + 1 >= argc) {
        return absl::InvalidArgumentError(absl::StrCat("flag --", name, " needs a value"));
      }
      value = argv[++i];
    }
    if (name == "config") {
      config_file = value;
    } else if (name == "set") {
      size_t e = value.find('=');
      if (e == std::string::npos) {
        return absl::InvalidArgumentError("--set expects section.key=value");
      }
      sets.emplace_back(value.substr(0, e), value.substr(e + 1));
    } else {
      std::string dotted = name;
      for (const auto& [flag, key] : kShortcuts) {
        if (name == flag) dotted = key;
      }
      sets.emplace_back(dotted, value);
    }
  }
  if (!config_file.empty()) SM_RETURN_IF_ERROR(ApplyConfigFile(config, config_file));
  SM_RETURN_IF_ERROR(ApplyEnvironment(config, env));
  for (const auto& [key, value] : sets) SM_RETURN_IF_ERROR(SetKnob(config, key, value));
  return Validate(*config);
}

std::string ConfigHelp() {
  ServerConfig defaults;
  std::ostringstream out;
  out << "| key | environment variable | default | effect |\n"
      << "|---|---|---|---|\n";
  for (const Knob& k : Knobs()) {
    out << "| `" << k.section << "." << k.key << "` | `"
        << absl::AsciiStrToUpper(absl::StrCat("SPEAKERMEM_", k.section, "_", k.key)) << "` | `"
        << k.get(defaults) << "` | " << k.help << " |\n";
  }
  std::string stages;
  for (const char* st : llm::kStages) stages += (stages.empty() ? "" : ", ") + std::string(st);
  out << "| `model.<stage>.<key>` | `SPEAKERMEM_MODEL_<STAGE>_<KEY>` | (inherits `model.<key>`) | "
      << "Per-stage override of any `model.*` key; stages: " << stages << ". |\n";
  return out.str();
}

std::string UsageText() {
  return "usage: speakermemd [--config FILE] [--set section.key=value]...\n"
         "                   [--listen ADDR] [--metrics-listen ADDR] [--data-dir DIR]\n"
         "                   [--port-file FILE] [--sync] [--log-level LEVEL]\n"
         "                   [--section.key=value]... [--help] [--help-config]\n"
         "\n"
         "Runs the SpeakerMem gRPC service. Configuration: embedded defaults, then\n"
         "the --config file ([section] and key = value lines), then environment\n"
         "variables SPEAKERMEM_<SECTION>_<KEY>, then flags. --help-config lists\n"
         "every key with its default.\n";
}

}  // namespace speakermem::server
