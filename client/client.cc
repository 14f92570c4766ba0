#include "client/client.h"

#include <grpcpp/grpcpp.h>

#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "speakermem/v1/speakermem.grpc.pb.h"

namespace speakermem::client {
namespace {

constexpr char kChannelHeader[] = "x-speakermem-channel";
constexpr char kApiKeyHeader[] = "x-api-key";

// gRPC header values must be printable ASCII; channel names are UTF-8. The
// routing header carries the channel percent-encoded (bytes outside
// 0x21..0x7E and '%' become %XX), which is stable, so a proxy hashing it
// places a channel consistently.
std::string EncodeHeaderValue(const std::string& s) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (c < 0x21 || c > 0x7E || c == '%') {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xF]);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

bool IsPrintableAscii(const std::string& s) {
  for (unsigned char c : s) {
    if (c < 0x20 || c > 0x7E) return false;
  }
  return true;
}

absl::Status FromGrpc(const grpc::Status& s) {
  if (s.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
}

class GrpcClient final : public Client {
 public:
  explicit GrpcClient(const ClientOptions& options)
      : options_(options),
        channel_(MakeChannel(options)),
        stub_(v1::SpeakerMem::NewStub(channel_)) {}

  absl::StatusOr<v1::IngestResponse> Ingest(const v1::IngestRequest& req) override {
    return Call(req.channel(), req, &v1::SpeakerMem::Stub::Ingest, v1::IngestResponse());
  }
  absl::StatusOr<v1::GetMessagesResponse> GetMessages(const v1::GetMessagesRequest& req) override {
    return Call(req.channel(), req, &v1::SpeakerMem::Stub::GetMessages, v1::GetMessagesResponse());
  }
  absl::StatusOr<v1::GetRosterResponse> GetRoster(const v1::GetRosterRequest& req) override {
    return Call(req.channel(), req, &v1::SpeakerMem::Stub::GetRoster, v1::GetRosterResponse());
  }
  absl::StatusOr<v1::ListChannelsResponse> ListChannels(
      const v1::ListChannelsRequest& req) override {
    return Call("", req, &v1::SpeakerMem::Stub::ListChannels, v1::ListChannelsResponse());
  }
  absl::StatusOr<v1::QueryResponse> Query(const v1::QueryRequest& req) override {
    return Call(req.channel(), req, &v1::SpeakerMem::Stub::Query, v1::QueryResponse());
  }
  absl::StatusOr<v1::QueryResponse> Retrieve(const v1::QueryRequest& req) override {
    return Call(req.channel(), req, &v1::SpeakerMem::Stub::Retrieve, v1::QueryResponse());
  }

  absl::StatusOr<v1::FlushResponse> Flush(const v1::FlushRequest& req) override {
    int wait_ms =
        req.wait() ? static_cast<int>(req.timeout_ms() == 0 ? 60000 : req.timeout_ms()) : 0;
    return Call(req.channel(), req, &v1::SpeakerMem::Stub::Flush, v1::FlushResponse(),
                wait_ms + options_.timeout_ms);
  }
  absl::StatusOr<v1::ListRecordsResponse> ListRecords(const v1::ListRecordsRequest& req) override {
    return Call(req.channel(), req, &v1::SpeakerMem::Stub::ListRecords, v1::ListRecordsResponse());
  }
  absl::StatusOr<v1::GetRecordResponse> GetRecord(const v1::GetRecordRequest& req) override {
    return Call(req.channel(), req, &v1::SpeakerMem::Stub::GetRecord, v1::GetRecordResponse());
  }
  absl::StatusOr<v1::ListParkedResponse> ListParked(const v1::ListParkedRequest& req) override {
    return Call(req.channel(), req, &v1::SpeakerMem::Stub::ListParked, v1::ListParkedResponse());
  }

  absl::StatusOr<v1::CorrectRecordResponse> CorrectRecord(
      const v1::CorrectRecordRequest& req) override {
    return Call(req.channel(), req, &v1::SpeakerMem::Stub::CorrectRecord,
                v1::CorrectRecordResponse());
  }
  absl::StatusOr<v1::ScoreWriterActionsResponse> ScoreWriterActions(
      const v1::ScoreWriterActionsRequest& req) override {
    return Call("", req, &v1::SpeakerMem::Stub::ScoreWriterActions,
                v1::ScoreWriterActionsResponse());
  }
  absl::StatusOr<v1::ListTransitionsResponse> ListTransitions(
      const v1::ListTransitionsRequest& req) override {
    return Call(req.channel(), req, &v1::SpeakerMem::Stub::ListTransitions,
                v1::ListTransitionsResponse());
  }
  absl::StatusOr<v1::DeleteMessagesResponse> DeleteMessages(
      const v1::DeleteMessagesRequest& req) override {
    return Call(req.channel(), req, &v1::SpeakerMem::Stub::DeleteMessages,
                v1::DeleteMessagesResponse(), 180000);
  }
  absl::StatusOr<v1::EditMessageResponse> EditMessage(const v1::EditMessageRequest& req) override {
    return Call(req.channel(), req, &v1::SpeakerMem::Stub::EditMessage, v1::EditMessageResponse(),
                180000);
  }
  absl::StatusOr<v1::ForgetSpeakerResponse> ForgetSpeaker(
      const v1::ForgetSpeakerRequest& req) override {
    return Call(req.channel(), req, &v1::SpeakerMem::Stub::ForgetSpeaker,
                v1::ForgetSpeakerResponse(), 180000);
  }
  absl::StatusOr<v1::DeleteChannelResponse> DeleteChannel(
      const v1::DeleteChannelRequest& req) override {
    return Call(req.channel(), req, &v1::SpeakerMem::Stub::DeleteChannel,
                v1::DeleteChannelResponse(), 180000);
  }
  absl::StatusOr<v1::QueryResponse> QueryStream(
      const v1::QueryRequest& req,
      const std::function<bool(const v1::QueryEvent&)>& on_event) override {
    grpc::ClientContext ctx;
    if (absl::Status p = Prepare(&ctx, req.channel(), options_.timeout_ms); !p.ok()) return p;
    std::unique_ptr<grpc::ClientReader<v1::QueryEvent>> reader(stub_->QueryStream(&ctx, req));
    v1::QueryEvent event;
    std::optional<v1::QueryResponse> final_response;
    while (reader->Read(&event)) {
      if (event.has_final()) final_response = event.final();
      if (on_event && !on_event(event)) {
        ctx.TryCancel();
        reader->Finish();
        return absl::CancelledError("QueryStream: cancelled by the caller");
      }
    }
    grpc::Status s = reader->Finish();
    if (!s.ok()) return FromGrpc(s);
    if (!final_response)
      return absl::InternalError("QueryStream: the stream ended without a final");
    return *std::move(final_response);
  }

  absl::Status ExportChannel(
      const std::string& channel,
      const std::function<absl::Status(const v1::ChannelItem&)>& on_item) override {
    grpc::ClientContext ctx;
    if (absl::Status p = Prepare(&ctx, channel, 0); !p.ok()) return p;
    v1::ExportChannelRequest req;
    req.set_channel(channel);
    std::unique_ptr<grpc::ClientReader<v1::ChannelItem>> reader(stub_->ExportChannel(&ctx, req));
    v1::ChannelItem item;
    while (reader->Read(&item)) {
      absl::Status s = on_item(item);
      if (!s.ok()) {
        ctx.TryCancel();
        reader->Finish();
        return s;
      }
    }
    grpc::Status s = reader->Finish();
    return s.ok() ? absl::OkStatus() : FromGrpc(s);
  }

  absl::StatusOr<v1::ImportChannelResponse> ImportChannel(
      const std::vector<v1::ChannelItem>& items) override {
    grpc::ClientContext ctx;
    std::string channel =
        !items.empty() && items.front().has_header() ? items.front().header().channel() : "";
    if (absl::Status p = Prepare(&ctx, channel, 0); !p.ok()) return p;
    v1::ImportChannelResponse resp;
    std::unique_ptr<grpc::ClientWriter<v1::ChannelItem>> writer(stub_->ImportChannel(&ctx, &resp));
    for (const auto& item : items) {
      if (!writer->Write(item)) break;  // the server ended the call: see Finish
    }
    writer->WritesDone();
    grpc::Status s = writer->Finish();
    if (!s.ok()) return FromGrpc(s);
    return resp;
  }

  absl::StatusOr<v1::BackupResponse> Backup(const v1::BackupRequest& req) override {
    return Call("", req, &v1::SpeakerMem::Stub::Backup, v1::BackupResponse(), 600000);
  }

  absl::StatusOr<v1::RederiveResponse> Rederive(const v1::RederiveRequest& req) override {
    int wait_ms = static_cast<int>(req.timeout_ms() == 0 ? 600000 : req.timeout_ms());
    return Call(req.channel(), req, &v1::SpeakerMem::Stub::Rederive, v1::RederiveResponse(),
                wait_ms + options_.timeout_ms);
  }

  absl::Status IngestStream(const std::string& channel,
                            const std::vector<v1::DialogueMessage>& messages,
                            const StreamOptions& options,
                            const std::function<void(const v1::IngestAck&)>& on_ack,
                            size_t* rejected) override;

  absl::Status WaitForServing(int timeout_ms) override;

 private:
  static std::shared_ptr<grpc::Channel> MakeChannel(const ClientOptions& o) {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(64 << 20);
    args.SetMaxSendMessageSize(64 << 20);
    if (o.tls_root_certs.empty()) {
      return grpc::CreateCustomChannel(o.addr, grpc::InsecureChannelCredentials(), args);
    }
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = o.tls_root_certs;
    ssl.pem_cert_chain = o.tls_cert_chain;
    ssl.pem_private_key = o.tls_private_key;
    return grpc::CreateCustomChannel(o.addr, grpc::SslCredentials(ssl), args);
  }

  absl::Status Prepare(grpc::ClientContext* ctx, const std::string& channel,
                       int deadline_ms) const {
    if (!channel.empty()) ctx->AddMetadata(kChannelHeader, EncodeHeaderValue(channel));
    if (!options_.api_key.empty()) {
      if (!IsPrintableAscii(options_.api_key)) {
        return absl::InvalidArgumentError("api key: must be printable ASCII");
      }
      ctx->AddMetadata(kApiKeyHeader, options_.api_key);
    }
    if (deadline_ms > 0) {
      ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(deadline_ms));
    }
    return absl::OkStatus();
  }

  template <typename Req, typename Resp, typename Method>
  absl::StatusOr<Resp> Call(const std::string& channel, const Req& req, Method method, Resp resp,
                            int deadline_ms = 0) {
    grpc::ClientContext ctx;
    if (absl::Status p =
            Prepare(&ctx, channel, deadline_ms > 0 ? deadline_ms : options_.timeout_ms);
        !p.ok()) {
      return p;
    }
    grpc::Status s = (stub_.get()->*method)(&ctx, req, &resp);
    if (!s.ok()) return FromGrpc(s);
    return resp;
  }

  const ClientOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::SpeakerMem::Stub> stub_;
};

absl::Status GrpcClient::IngestStream(const std::string& channel,
                                      const std::vector<v1::DialogueMessage>& messages,
                                      const StreamOptions& options,
                                      const std::function<void(const v1::IngestAck&)>& on_ack,
                                      size_t* rejected) {
  grpc::ClientContext ctx;
  if (absl::Status p = Prepare(&ctx, channel, 0); !p.ok()) return p;
  auto stream = stub_->IngestStream(&ctx);
  const size_t chunk_size = std::max<size_t>(1, options.chunk_size);
  const size_t window = std::max<size_t>(1, options.window);
  const size_t chunks = (messages.size() + chunk_size - 1) / chunk_size;

  std::mutex mu;
  std::condition_variable cv;
  size_t acked = 0;
  bool reader_done = false;
  size_t errors = 0;
  std::thread reader([&] {
    v1::IngestAck ack;
    while (stream->Read(&ack)) {
      if (ack.has_error()) ++errors;
      if (on_ack) on_ack(ack);
      std::lock_guard<std::mutex> lock(mu);
      ++acked;
      cv.notify_all();
    }
    std::lock_guard<std::mutex> lock(mu);
    reader_done = true;
    cv.notify_all();
  });

  bool write_failed = false;
  for (size_t c = 0; c < chunks && !write_failed; ++c) {
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return reader_done || c - acked < window; });
      if (reader_done) break;
    }
    v1::IngestChunk chunk;
    chunk.set_channel(channel);
    chunk.set_chunk_id(c);
    size_t end = std::min(messages.size(), (c + 1) * chunk_size);
    for (size_t i = c * chunk_size; i < end; ++i) *chunk.add_messages() = messages[i];
    if (!stream->Write(chunk)) write_failed = true;
  }
  stream->WritesDone();
  reader.join();
  grpc::Status s = stream->Finish();
  if (rejected != nullptr) *rejected = errors;
  if (!s.ok()) return FromGrpc(s);
  if (acked != chunks) {
    return absl::UnavailableError(
        absl::StrCat("stream ended after ", acked, " of ", chunks, " acknowledgements"));
  }
  return absl::OkStatus();
}

absl::Status GrpcClient::WaitForServing(int timeout_ms) {
  auto deadline = std::chrono::system_clock::now() + std::chrono::milliseconds(timeout_ms);
  auto health = grpc::health::v1::Health::NewStub(channel_);
  std::string last = "no answer";
  while (std::chrono::system_clock::now() < deadline) {
    grpc::ClientContext ctx;
    ctx.set_deadline(
        std::min(deadline, std::chrono::system_clock::now() + std::chrono::milliseconds(1000)));
    grpc::health::v1::HealthCheckRequest req;
    grpc::health::v1::HealthCheckResponse resp;
    grpc::Status s = health->Check(&ctx, req, &resp);
    if (s.ok() && resp.status() == grpc::health::v1::HealthCheckResponse::SERVING) {
      return absl::OkStatus();
    }
    last = s.ok() ? grpc::health::v1::HealthCheckResponse::ServingStatus_Name(resp.status())
                  : s.error_message();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return absl::DeadlineExceededError(
      absl::StrCat("server at ", options_.addr, " not serving: ", last));
}

}  // namespace

std::unique_ptr<Client> Client::Connect(const ClientOptions& options) {
  return std::make_unique<GrpcClient>(options);
}

}  // namespace speakermem::client
