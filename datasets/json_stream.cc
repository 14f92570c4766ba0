#include "datasets/json_stream.h"

#include <fstream>
#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace speakermem::datasets::export_internal {
namespace {

using nlohmann::json;

// The SAX handler. Every event goes, in this order of precedence, to the
// value being built (an element, or a small member of an enclosing
// object), to a subtree being skipped (an array off the paths), or to the
// navigation along the paths.
class ArrayStreamer final : public nlohmann::json_sax<json> {
 public:
  ArrayStreamer(const std::vector<JsonPath>& paths, const ElementFn& element,
                const ContainerEndFn& container_end, StreamedArrays* found)
      : paths_(paths), element_(element), container_end_(container_end), found_(found) {}

  absl::Status status() const { return status_; }

  bool null() override { return Scalar(json()); }
  bool boolean(bool v) override { return Scalar(json(v)); }
  bool number_integer(number_integer_t v) override { return Scalar(json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return Scalar(json(v)); }
  bool number_float(number_float_t v, const string_t&) override { return Scalar(json(v)); }
  bool string(string_t& v) override { return Scalar(json(std::move(v))); }
  bool binary(binary_t& v) override { return Scalar(json::binary(std::move(v))); }

  bool key(string_t& k) override {
    if (skip_ > 0) return true;
    if (!building_.empty()) {
      keys_.back() = std::move(k);
    } else {
      frames_.back().key = std::move(k);
    }
    return true;
  }

  bool start_object(std::size_t) override { return Open(json::object()); }
  bool start_array(std::size_t) override { return Open(json::array()); }
  bool end_object() override { return Close(); }
  bool end_array() override { return Close(); }

  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& ex) override {
    if (status_.ok()) {
      status_ =
          absl::InvalidArgumentError(absl::StrCat("not JSON at byte ", position, ": ", ex.what()));
    }
    return false;
  }

 private:
  enum class Kind { kNavigate, kTarget };
  struct Frame {
    Kind kind;
    bool object;
    JsonPath at;       // keys from the root
    std::string key;   // an object's pending key
    size_t index = 0;  // an array's next element
    json context = json::object();
    bool holds_target = false;
  };

  bool IsTarget(const JsonPath& at) const {
    for (size_t i = 0; i < paths_.size(); ++i) {
      if (paths_[i] == at) {
        found_->path = i;
        return true;
      }
    }
    return false;
  }
  bool OnPath(const JsonPath& at) const {
    for (const auto& p : paths_) {
      if (p.size() > at.size() && std::equal(at.begin(), at.end(), p.begin())) return true;
    }
    return false;
  }

  // Where the next value at the navigation level goes.
  JsonPath Next() const {
    if (frames_.empty()) return {};
    JsonPath at = frames_.back().at;
    at.push_back(frames_.back().object ? frames_.back().key : "*");
    return at;
  }

  // A value completed at the navigation level.
  bool Place(json v) {
    if (frames_.empty()) return true;  // the root is a scalar: no arrays
    Frame& f = frames_.back();
    if (f.kind == Kind::kTarget) {
      const size_t index = f.index++;
      ++found_->elements;
      // The enclosing object's context is the frame below the array.
      static const json kNone = json::object();
      const json& ctx = frames_.size() >= 2 ? frames_[frames_.size() - 2].context : kNone;
      status_ = element_(ctx, std::move(v), index);
      return status_.ok();
    }
    if (f.object) f.context[f.key] = std::move(v);
    if (!f.object) ++f.index;
    return true;
  }

  bool Scalar(json v) {
    if (skip_ > 0) return true;
    if (!building_.empty()) return Add(std::move(v));
    return Place(std::move(v));
  }

  // Adds a value to the one being built.
  bool Add(json v) {
    json& parent = *building_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(v));
    } else {
      parent[keys_.back()] = std::move(v);
    }
    return true;
  }

  bool Open(json empty) {
    const bool object = empty.is_object();
    if (skip_ > 0) {
      ++skip_;
      return true;
    }
    if (!building_.empty() && building_context_ && !object) {
      skip_ = 1;  // a context member's arrays are not kept (left_chats.list)
      return true;
    }
    if (!building_.empty()) {
      json& parent = *building_.back();
      json* child;
      if (parent.is_array()) {
        parent.push_back(std::move(empty));
        child = &parent.back();
      } else {
        child = &(parent[keys_.back()] = std::move(empty));
      }
      building_.push_back(child);
      keys_.emplace_back();
      return true;
    }
    const JsonPath at = Next();
    const bool in_target = !frames_.empty() && frames_.back().kind == Kind::kTarget;
    if (!in_target && !object && IsTarget(at)) {
      ++found_->arrays;
      if (!frames_.empty()) frames_.back().holds_target = true;
      frames_.push_back(Frame{Kind::kTarget, false, at});
      return true;
    }
    if (!in_target && (frames_.empty() || OnPath(at))) {
      frames_.push_back(Frame{Kind::kNavigate, object, at});
      return true;
    }
    if (!object && !in_target) {  // an array off the paths: not kept
      skip_ = 1;
      return true;
    }
    // An element, or an object member of the context: built whole (the
    // latter without its arrays).
    building_context_ = !in_target;
    root_ = std::move(empty);
    building_.push_back(&root_);
    keys_.emplace_back();
    return true;
  }

  bool Close() {
    if (skip_ > 0) {
      --skip_;
      if (skip_ == 0 && building_.empty() && !frames_.empty() && !frames_.back().object) {
        ++frames_.back().index;
      }
      return true;
    }
    if (!building_.empty()) {
      building_.pop_back();
      keys_.pop_back();
      if (building_.empty()) return Place(std::move(root_));
      return true;
    }
    Frame f = std::move(frames_.back());
    frames_.pop_back();
    if (f.object && f.holds_target && container_end_) {
      status_ = container_end_(f.context);
      if (!status_.ok()) return false;
    }
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
    return true;
  }

  const std::vector<JsonPath>& paths_;
  const ElementFn& element_;
  const ContainerEndFn& container_end_;
  StreamedArrays* const found_;
  absl::Status status_;
  std::vector<Frame> frames_;      // the navigation: objects and arrays on the paths
  size_t skip_ = 0;                // depth inside a skipped subtree
  json root_;                      // the value being built
  bool building_context_ = false;  // root_ is a context member, not an element
  std::vector<json*> building_;    // its open containers, innermost last
  std::vector<std::string> keys_;  // their pending keys
};

}  // namespace

absl::Status StreamArrays(const std::string& file, const std::vector<JsonPath>& paths,
                          const ElementFn& element, const ContainerEndFn& container_end,
                          StreamedArrays* found) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(file, ": cannot open"));
  *found = StreamedArrays();
  found->in = &in;
  ArrayStreamer sax(paths, element, container_end, found);
  const bool ok = json::sax_parse(in, &sax);
  found->in = nullptr;
  absl::Status s = sax.status();
  if (!s.ok()) {
    if (absl::IsInvalidArgument(s) && absl::StartsWith(s.message(), "not JSON")) {
      return absl::InvalidArgumentError(absl::StrCat(file, ": ", s.message()));
    }
    return s;
  }
  if (!ok) return absl::InvalidArgumentError(absl::StrCat(file, ": not JSON"));
  return absl::OkStatus();
}

}  // namespace speakermem::datasets::export_internal
