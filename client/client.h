// C++ client of speakermem.v1.SpeakerMem. Every per-channel call carries the
// channel as metadata `x-speakermem-channel` (for routing proxies;
// percent-encoded: bytes outside 0x21..0x7E and '%' become %XX) and the API
// key, when set, as `x-api-key`. gRPC statuses become absl::Status here.
#ifndef SPEAKERMEM_CLIENT_CLIENT_H_
#define SPEAKERMEM_CLIENT_CLIENT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "speakermem/v1/speakermem.pb.h"

namespace speakermem::client {

struct ClientOptions {
  // host:port of speakermemd (or of a proxy in front of several).
  std::string addr = "127.0.0.1:50151";
  // Sent as x-api-key when non-empty.
  std::string api_key;
  // Deadline of each unary call. Default: 30 s.
  int timeout_ms = 30000;
  // TLS: PEM root certificates to verify the server with; empty: plaintext.
  std::string tls_root_certs;
  // Mutual TLS: the client's PEM certificate chain and key.
  std::string tls_cert_chain;
  std::string tls_private_key;
};

struct StreamOptions {
  // Messages per chunk. Default: 500.
  size_t chunk_size = 500;
  // Chunks sent ahead of their acknowledgements. Default: 8.
  size_t window = 8;
};

// Safe for concurrent use.
class Client {
 public:
  static std::unique_ptr<Client> Connect(const ClientOptions& options);
  virtual ~Client() = default;

  virtual absl::StatusOr<v1::IngestResponse> Ingest(const v1::IngestRequest& req) = 0;

  // Streams `messages` into `channel` in chunks, calling `on_ack` (may be
  // empty) for each acknowledgement in order. Returns the stream's final
  // status; a chunk rejected by the server does not end the stream, its ack
  // carries the error (and the count of such chunks is in *rejected when
  // non-null).
  virtual absl::Status IngestStream(const std::string& channel,
                                    const std::vector<v1::DialogueMessage>& messages,
                                    const StreamOptions& options,
                                    const std::function<void(const v1::IngestAck&)>& on_ack,
                                    size_t* rejected = nullptr) = 0;

  virtual absl::StatusOr<v1::GetMessagesResponse> GetMessages(
      const v1::GetMessagesRequest& req) = 0;
  virtual absl::StatusOr<v1::GetRosterResponse> GetRoster(const v1::GetRosterRequest& req) = 0;
  virtual absl::StatusOr<v1::ListChannelsResponse> ListChannels(
      const v1::ListChannelsRequest& req) = 0;
  virtual absl::StatusOr<v1::QueryResponse> Query(const v1::QueryRequest& req) = 0;
  virtual absl::StatusOr<v1::QueryResponse> Retrieve(const v1::QueryRequest& req) = 0;
  // Query with the answer streamed (v1::QueryEvent): `on_event` sees the
  // evidence, each answer delta and the final response, in order; returning
  // false cancels the call (the server stops its model call) and this
  // returns CANCELLED. Returns the final response.
  virtual absl::StatusOr<v1::QueryResponse> QueryStream(
      const v1::QueryRequest& req, const std::function<bool(const v1::QueryEvent&)>& on_event) = 0;
  // Flush with wait uses the request's timeout (plus a margin) as deadline.
  virtual absl::StatusOr<v1::FlushResponse> Flush(const v1::FlushRequest& req) = 0;
  virtual absl::StatusOr<v1::ListRecordsResponse> ListRecords(
      const v1::ListRecordsRequest& req) = 0;
  virtual absl::StatusOr<v1::GetRecordResponse> GetRecord(const v1::GetRecordRequest& req) = 0;
  virtual absl::StatusOr<v1::ListParkedResponse> ListParked(const v1::ListParkedRequest& req) = 0;
  virtual absl::StatusOr<v1::CorrectRecordResponse> CorrectRecord(
      const v1::CorrectRecordRequest& req) = 0;
  // Uses the request's timeout (plus a margin) as deadline.
  virtual absl::StatusOr<v1::RederiveResponse> Rederive(const v1::RederiveRequest& req) = 0;
  virtual absl::StatusOr<v1::ScoreWriterActionsResponse> ScoreWriterActions(
      const v1::ScoreWriterActionsRequest& req) = 0;
  virtual absl::StatusOr<v1::ListTransitionsResponse> ListTransitions(
      const v1::ListTransitionsRequest& req) = 0;
  virtual absl::StatusOr<v1::DeleteMessagesResponse> DeleteMessages(
      const v1::DeleteMessagesRequest& req) = 0;
  virtual absl::StatusOr<v1::EditMessageResponse> EditMessage(
      const v1::EditMessageRequest& req) = 0;
  virtual absl::StatusOr<v1::ForgetSpeakerResponse> ForgetSpeaker(
      const v1::ForgetSpeakerRequest& req) = 0;
  virtual absl::StatusOr<v1::DeleteChannelResponse> DeleteChannel(
      const v1::DeleteChannelRequest& req) = 0;
  // Streams the channel's export to `on_item` (header, messages, records).
  virtual absl::Status ExportChannel(
      const std::string& channel,
      const std::function<absl::Status(const v1::ChannelItem&)>& on_item) = 0;
  // Sends an export (header first) into a new channel named by the header.
  virtual absl::StatusOr<v1::ImportChannelResponse> ImportChannel(
      const std::vector<v1::ChannelItem>& items) = 0;
  virtual absl::StatusOr<v1::BackupResponse> Backup(const v1::BackupRequest& req) = 0;

  // OK when the server's health service reports SERVING within `timeout_ms`.
  virtual absl::Status WaitForServing(int timeout_ms) = 0;
};

}  // namespace speakermem::client

#endif  // SPEAKERMEM_CLIENT_CLIENT_H_
