// Similarity of two texts' token sets.
#ifndef SPEAKERMEM_TEXT_SIMILARITY_H_
#define SPEAKERMEM_TEXT_SIMILARITY_H_

#include <set>
#include <string>

namespace speakermem::text {

// |a ∩ b| / |a ∪ b|; 0 when either set is empty.
double Jaccard(const std::set<std::string>& a, const std::set<std::string>& b);

}  // namespace speakermem::text

#endif  // SPEAKERMEM_TEXT_SIMILARITY_H_
