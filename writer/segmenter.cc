#include "writer/segmenter.h"

namespace speakermem::writer {

absl::StatusOr<std::optional<Segment>> NextSegment(storage::Store* store,
                                                   const storage::ChannelRef& channel,
                                                   const storage::WriterState& state,
                                                   size_t window) {
  storage::MessageQuery q;
  q.after_seq = state.cursor_seq;
  q.limit = static_cast<uint32_t>(window);
  absl::StatusOr<storage::MessagePage> page = store->ScanMessages(channel, q);
  if (!page.ok()) return page.status();
  std::vector<storage::Message>& ms = page->messages;
  if (ms.empty()) return std::nullopt;
  Segment seg;
  const std::string& session = ms.front().session;
  for (size_t i = 0; i < ms.size(); ++i) {
    if (ms[i].session != session) {
      // The session changed: what came before it is complete.
      seg.messages.assign(std::make_move_iterator(ms.begin()),
                          std::make_move_iterator(ms.begin() + static_cast<long>(i)));
      return seg;
    }
  }
  if (ms.size() >= window) {
    seg.messages = std::move(ms);
    return seg;
  }
  // A short tail: only when flushed up to (at least part of) it.
  size_t n = 0;
  while (n < ms.size() && ms[n].seq <= state.flush_until) ++n;
  if (n == 0) return std::nullopt;
  ms.resize(n);
  seg.messages = std::move(ms);
  return seg;
}

std::vector<std::string> ReplySpeakers(storage::Store* store, const storage::ChannelRef& channel,
                                       const std::vector<storage::Message>& messages) {
  std::vector<std::string> out(messages.size());
  for (size_t i = 0; i < messages.size(); ++i) {
    const std::string& target = messages[i].reply_to;
    if (target.empty()) continue;
    for (size_t j = 0; j < i && out[i].empty(); ++j) {
      if (messages[j].message_id == target) out[i] = messages[j].speaker_id;
    }
    if (!out[i].empty()) continue;
    absl::StatusOr<uint64_t> seq = store->FindMessageId(channel, target);
    if (!seq.ok()) continue;  // a reply to a message the channel does not hold
    absl::StatusOr<std::vector<storage::Message>> found = store->GetMessagesBySeq(channel, {*seq});
    if (found.ok() && !found->empty()) out[i] = found->front().speaker_id;
  }
  return out;
}

}  // namespace speakermem::writer
