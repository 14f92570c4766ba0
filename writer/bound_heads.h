// The heads the Writer is shown for a segment: the bounded, ranked selection
// from the channel's record index (recordindex/, shared with the query path)
// within writer.max_heads and writer.head_token_budget. Internal to writer/.
#ifndef SPEAKERMEM_WRITER_BOUND_HEADS_H_
#define SPEAKERMEM_WRITER_BOUND_HEADS_H_

#include <vector>

#include "recordindex/record_index.h"
#include "writer/segmenter.h"
#include "writer/validate.h"
#include "writer/writer_model.h"
#include "writer/writer_service.h"

namespace speakermem::writer {

// The heads shown to the Writer for `seg`: candidates (heads sharing a word
// with the segment, the most recent heads of its speakers and of GROUP; every
// head of `ctx.records` without an index) ranked by tier and word overlap,
// within the segment's share of options.max_heads and options.head_token_budget.
std::vector<WriterHead> BoundHeads(const ValidationContext& ctx, const Segment& seg,
                                   const recordindex::RecordIndex* index,
                                   const WriterOptions& options);

}  // namespace speakermem::writer

#endif  // SPEAKERMEM_WRITER_BOUND_HEADS_H_
