// ExportChannel and ImportChannel: the streaming reactors.
#include "server/channel_transfer.h"

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "engine/memory.h"
#include "server/convert.h"
#include "server/limits.h"
#include "server/request_codec.h"
#include "server/rpc_scope.h"
#include "speakermem/v1/speakermem.pb.h"

namespace speakermem::server {
namespace {

using grpc::CallbackServerContext;

// Header, then pages of messages, then the records; one write in flight.
class ExportReactor final : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  ExportReactor(TransferContext t, CallbackServerContext* ctx, const grpc::ByteBuffer& raw)
      : t_(std::move(t)), scope_("ExportChannel", ctx, t_.metrics) {
    v1::ExportChannelRequest req;
    absl::Status s = DecodeRequest(raw, &req);
    scope_.set_channel(req.channel());
    if (s.ok()) s = Start(ctx, req);
    if (!s.ok()) {
      Finish(scope_.Done(s));
      return;
    }
    Next();
  }

  void OnWriteDone(bool ok) override {
    if (!ok) {
      Finish(scope_.Done(absl::CancelledError("the client went away")));
      return;
    }
    Next();
  }
  void OnDone() override { delete this; }

 private:
  absl::Status Start(CallbackServerContext* ctx, const v1::ExportChannelRequest& req) {
    absl::StatusOr<Principal> who = t_.admit(ctx);
    if (!who.ok()) return who.status();
    if (absl::Status s = t_.check_channel(req.channel()); !s.ok()) return s;
    channel_ = storage::ChannelRef{who->tenant, req.channel()};
    absl::StatusOr<std::unique_ptr<storage::ChannelSnapshot>> snap =
        t_.memory->ExportChannel(channel_);
    if (!snap.ok()) return snap.status();
    snap_ = std::move(*snap);
    absl::StatusOr<std::vector<storage::Record>> records = snap_->Records();
    if (!records.ok()) return records.status();
    records_ = std::move(*records);
    auto* h = item_.mutable_header();
    h->set_channel(req.channel());
    h->set_format_version(1);
    h->set_exported_ms(Clock::Real()->NowMs());
    h->set_messages(snap_->info().message_count);
    h->set_records(records_.size());
    h->set_writer_cursor_seq(snap_->writer_state().cursor_seq);
    header_pending_ = true;
    return absl::OkStatus();
  }

  // Writes item_ (encoded into out_).
  void Write() {
    if (absl::Status s = EncodeResponse(item_, &out_); !s.ok()) {
      Finish(scope_.Done(s));
      return;
    }
    StartWrite(&out_);
  }

  void Next() {
    if (header_pending_) {
      header_pending_ = false;
      Write();
      return;
    }
    item_.Clear();
    if (!messages_done_) {
      if (page_pos_ >= page_.size()) {
        page_.clear();
        page_pos_ = 0;
        if (after_ != UINT64_MAX) {
          absl::StatusOr<storage::MessagePage> page = snap_->Messages(after_, 1000);
          if (!page.ok()) {
            Finish(scope_.Done(page.status()));
            return;
          }
          page_ = std::move(page->messages);
          after_ = page->next_after_seq == 0 ? UINT64_MAX : page->next_after_seq;
        }
      }
      if (page_pos_ < page_.size()) {
        ToProto(page_[page_pos_++], channel_.channel, item_.mutable_message());
        Write();
        return;
      }
      messages_done_ = true;
    }
    if (record_pos_ < records_.size()) {
      ToProto(records_[record_pos_++], channel_.channel, item_.mutable_record());
      Write();
      return;
    }
    Finish(scope_.Done(absl::OkStatus()));
  }

  const TransferContext t_;
  RpcScope scope_;
  storage::ChannelRef channel_;
  std::unique_ptr<storage::ChannelSnapshot> snap_;  // what is exported
  v1::ChannelItem item_;
  grpc::ByteBuffer out_;
  bool header_pending_ = false;
  bool messages_done_ = false;
  uint64_t after_ = 0;
  std::vector<storage::Message> page_;
  size_t page_pos_ = 0;
  std::vector<storage::Record> records_;
  size_t record_pos_ = 0;
};

// Reads the whole export (bounded), then imports it in one engine call.
class ImportReactor final : public grpc::ServerReadReactor<grpc::ByteBuffer> {
 public:
  ImportReactor(TransferContext t, CallbackServerContext* ctx, grpc::ByteBuffer* raw_resp)
      : t_(std::move(t)), raw_resp_(raw_resp), scope_("ImportChannel", ctx, t_.metrics) {
    absl::StatusOr<Principal> who = t_.admit(ctx);
    if (!who.ok()) {
      Finish(scope_.Done(who.status()));
      return;
    }
    tenant_ = who->tenant;
    StartRead(&in_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {  // the client finished sending
      absl::Status s = Import();
      if (s.ok()) s = EncodeResponse(resp_, raw_resp_);
      Finish(scope_.Done(s));
      return;
    }
    // Items are numbered from 0 in the order sent.
    absl::Status s = DecodeRequest(in_, &item_, absl::StrCat("item ", items_));
    if (s.ok()) s = Take();
    if (!s.ok()) {
      Finish(scope_.Done(s));
      return;
    }
    StartRead(&in_);
  }
  void OnDone() override { delete this; }

 private:
  static constexpr size_t kMaxItems = 5000000;

  absl::Status Take() {
    if (++items_ > kMaxItems) {
      return absl::ResourceExhaustedError("an import holds at most 5,000,000 items; split it");
    }
    switch (item_.item_case()) {
      case v1::ChannelItem::kHeader:
        if (has_header_) return absl::InvalidArgumentError("a second header");
        has_header_ = true;
        header_ = item_.header();
        if (header_.format_version() != 1) {
          return absl::InvalidArgumentError("unknown export format_version");
        }
        if (absl::Status s = t_.check_channel(header_.channel()); !s.ok()) return s;
        scope_.set_channel(header_.channel());
        return absl::OkStatus();
      case v1::ChannelItem::kMessage: {
        if (!has_header_) return absl::InvalidArgumentError("the header must come first");
        storage::Message m = FromProto(item_.message(), 0);
        m.seq = item_.message().seq();
        m.metadata.insert(item_.message().metadata().begin(), item_.message().metadata().end());
        messages_.push_back(std::move(m));
        return absl::OkStatus();
      }
      case v1::ChannelItem::kRecord:
        if (!has_header_) return absl::InvalidArgumentError("the header must come first");
        records_.push_back(FromProto(item_.record()));
        return absl::OkStatus();
      default:
        return absl::InvalidArgumentError("an empty item");
    }
  }

  absl::Status Import() {
    if (!has_header_) return absl::InvalidArgumentError("no header");
    if (absl::Status s = t_.limiter->AdmitIngest(tenant_, messages_.size()); !s.ok()) {
      return s;
    }
    auto r = t_.memory->ImportChannel(storage::ChannelRef{tenant_, header_.channel()},
                                      std::move(messages_), std::move(records_),
                                      header_.writer_cursor_seq());
    if (!r.ok()) return r.status();
    resp_.set_messages(r->first);
    resp_.set_records(r->second);
    return absl::OkStatus();
  }

  const TransferContext t_;
  grpc::ByteBuffer* const raw_resp_;
  v1::ImportChannelResponse resp_;
  RpcScope scope_;
  std::string tenant_;
  grpc::ByteBuffer in_;
  v1::ChannelItem item_;
  size_t items_ = 0;
  bool has_header_ = false;
  v1::ChannelExportHeader header_;
  std::vector<storage::Message> messages_;
  std::vector<storage::Record> records_;
};

}  // namespace

grpc::ServerWriteReactor<grpc::ByteBuffer>* NewExportReactor(TransferContext t,
                                                             grpc::CallbackServerContext* ctx,
                                                             const grpc::ByteBuffer& request) {
  return new ExportReactor(std::move(t), ctx, request);
}

grpc::ServerReadReactor<grpc::ByteBuffer>* NewImportReactor(TransferContext t,
                                                            grpc::CallbackServerContext* ctx,
                                                            grpc::ByteBuffer* response) {
  return new ImportReactor(std::move(t), ctx, response);
}

}  // namespace speakermem::server
