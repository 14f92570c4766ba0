#include "text/similarity.h"

namespace speakermem::text {

double Jaccard(const std::set<std::string>& a, const std::set<std::string>& b) {
  if (a.empty() || b.empty()) return 0;
  size_t common = 0;
  for (const auto& w : a) common += b.count(w);
  return static_cast<double>(common) / static_cast<double>(a.size() + b.size() - common);
}

}  // namespace speakermem::text
