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

std::vector<WriterMessage> ToWriterMessages(storage::Store* store,
                                            const storage::ChannelRef& channel,
                                            const std::vector<storage::Message>& messages) {
  std::vector<WriterMessage> out;
  for (size_t i = 0; i < messages.size(); ++i) {
    const storage::Message& m = messages[i];
    out.push_back(WriterMessage{m.message_id, m.speaker_id, m.speaker, m.text, m.timestamp_ms,
                                m.session, ""});
    if (m.reply_to.empty()) continue;
    for (size_t j = 0; j < i && out[i].reply_to_speaker_id.empty(); ++j) {
      if (messages[j].message_id == m.reply_to) out[i].reply_to_speaker_id = messages[j].speaker_id;
    }
    if (!out[i].reply_to_speaker_id.empty()) continue;
    absl::StatusOr<uint64_t> seq = store->FindMessageId(channel, m.reply_to);
    if (!seq.ok()) continue;  // a reply to a message the channel does not hold
    absl::StatusOr<std::vector<storage::Message>> found = store->GetMessagesBySeq(channel, {*seq});
    if (found.ok() && !found->empty()) out[i].reply_to_speaker_id = found->front().speaker_id;
  }
  return out;
}

}  // namespace speakermem::writer
