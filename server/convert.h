// Conversions between the wire contract (speakermem.v1) and domain types, and
// the one place absl::Status becomes grpc::Status. Included by server .cc
// files and by the tools and tests that speak the wire contract; never by a
// widely included header.
#ifndef SPEAKERMEM_SERVER_CONVERT_H_
#define SPEAKERMEM_SERVER_CONVERT_H_

#include <grpcpp/support/status.h>

#include <chrono>

#include "absl/status/status.h"
#include "engine/memory.h"
#include "server/ingest_wire.pb.h"
#include "server/wire_message.h"
#include "speakermem/v1/speakermem.pb.h"
#include "storage/types.h"
#include "writer/rewards.h"

namespace speakermem::server {

// Canonical codes are shared by Abseil and gRPC, so the mapping is 1:1.
grpc::Status ToGrpc(const absl::Status& status);
// Name of a canonical code, e.g. "INVALID_ARGUMENT", for metric labels.
std::string CodeName(grpc::StatusCode code);

void ToProto(const storage::Message& m, const std::string& channel, v1::DialogueMessage* out);
void ToProto(const storage::RosterEntry& e, v1::RosterEntry* out);
void ToProto(const storage::ChannelInfo& c, v1::ChannelInfo* out);
void ToProto(const storage::AppendResult& r, const std::string& channel, v1::IngestResponse* out);
void ToProto(const storage::Record& r, const std::string& channel, v1::DerivedRecord* out);
void ToProto(const storage::ParkedSegment& p, v1::ParkedSegment* out);

// "core" <-> CORE etc.; "" for LAYER_UNSPECIFIED / unknown.
// The request's no_s2 and strict-freshness flags onto `p`; the wait for the
// Writer is fresh_timeout_ms (0: 30 s) and never past `deadline`.
void ApplyQueryFlags(const v1::QueryRequest& req, std::chrono::system_clock::time_point deadline,
                     engine::QueryParams* p);
void ToProto(const engine::QueryResult& r, const std::string& channel, const std::string& question,
             v1::QueryResponse* out);
// A record given by a client (e.g. a Writer pre-state to score); the layer
// enum becomes its code name. A record with superseded_by set is inactive.
storage::Record FromProto(const v1::DerivedRecord& r);
// A request's budget asks (0 / unset: the default).
retrieval::BudgetRequest FromProto(const v1::QueryBudgets& b);
// A message given by a client outside Ingest; `seq` when the client gave none.
storage::Message FromProto(const v1::DialogueMessage& m, uint64_t seq);
void ToProto(const writer::WriterRewardOutput& r, v1::ScoreWriterActionsResponse* out);

}  // namespace speakermem::server

#endif  // SPEAKERMEM_SERVER_CONVERT_H_
