#include "server/request_codec.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <google/protobuf/stubs/logging.h>
#include <grpcpp/impl/codegen/proto_utils.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/proto_buffer_reader.h>
#include <grpcpp/support/proto_buffer_writer.h>

#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/log.h"

namespace speakermem::server {
namespace {

// Whether a message of type `d` can hold an enum field, at any depth: the
// types reachable through its message fields, cycles included.
bool ReachesEnum(const google::protobuf::Descriptor* d) {
  std::vector<const google::protobuf::Descriptor*> todo = {d};
  absl::flat_hash_set<const google::protobuf::Descriptor*> seen = {d};
  while (!todo.empty()) {
    const google::protobuf::Descriptor* t = todo.back();
    todo.pop_back();
    for (int i = 0; i < t->field_count(); ++i) {
      const google::protobuf::FieldDescriptor* f = t->field(i);
      if (f->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_ENUM) return true;
      if (f->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE &&
          seen.insert(f->message_type()).second) {
        todo.push_back(f->message_type());
      }
    }
  }
  return false;
}

// ReachesEnum, computed once per type (descriptors live as long as the
// process).
bool MayHoldEnum(const google::protobuf::Descriptor* d) {
  static absl::Mutex mu(absl::kConstInit);
  static auto* known = new absl::flat_hash_map<const google::protobuf::Descriptor*, bool>();
  absl::MutexLock lock(&mu);
  auto it = known->find(d);
  if (it == known->end()) it = known->emplace(d, ReachesEnum(d)).first;
  return it->second;
}

// A field's path for an error ("messages[3].kind").
std::string FieldPath(const std::string& prefix, const google::protobuf::FieldDescriptor* f) {
  return prefix.empty() ? f->name() : absl::StrCat(prefix, ".", f->name());
}

// Every enum value set in `m` is one its enum defines. Only message fields
// whose type can hold an enum are descended into (an ingest chunk's
// messages hold none, and a chunk carries hundreds of them).
absl::Status CheckEnums(const google::protobuf::Message& m, const std::string& prefix) {
  if (!MayHoldEnum(m.GetDescriptor())) return absl::OkStatus();
  const google::protobuf::Reflection* r = m.GetReflection();
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  r->ListFields(m, &fields);
  for (const auto* f : fields) {
    if (f->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_ENUM) {
      const int n = f->is_repeated() ? r->FieldSize(m, f) : 1;
      for (int i = 0; i < n; ++i) {
        int v = f->is_repeated() ? r->GetRepeatedEnumValue(m, f, i) : r->GetEnumValue(m, f);
        if (f->enum_type()->FindValueByNumber(v) == nullptr) {
          return absl::InvalidArgumentError(
              absl::StrCat(FieldPath(prefix, f), f->is_repeated() ? absl::StrCat("[", i, "]") : "",
                           ": ", v, " is not a ", f->enum_type()->name(), " value"));
        }
      }
    } else if (f->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE &&
               MayHoldEnum(f->message_type())) {
      const std::string name = FieldPath(prefix, f);
      const int n = f->is_repeated() ? r->FieldSize(m, f) : 1;
      for (int i = 0; i < n; ++i) {
        const auto& sub = f->is_repeated() ? r->GetRepeatedMessage(m, f, i) : r->GetMessage(m, f);
        std::string at = f->is_repeated() ? absl::StrCat(name, "[", i, "]") : name;
        if (absl::Status s = CheckEnums(sub, at); !s.ok()) return s;
      }
    }
  }
  return absl::OkStatus();
}

// While a request is parsed on this thread: what libprotobuf said about it
// (it names a string field that is not UTF-8), for the refusal.
thread_local std::string* parse_complaint = nullptr;

absl::Status Parsed(bool ok, const google::protobuf::Message& out, absl::string_view what,
                    const std::string& complaint) {
  if (!ok) {
    // "String field 'speakermem.v1.DialogueMessage.text' contains invalid UTF-8 ..."
    std::string why = "malformed protobuf, or a string field that is not UTF-8";
    const size_t open = complaint.find("String field '");
    const size_t close = open == std::string::npos ? open : complaint.find('\'', open + 14);
    if (close != std::string::npos) {
      std::string field = complaint.substr(open + 14, close - open - 14);
      const std::string package = absl::StrCat(out.GetDescriptor()->file()->package(), ".");
      if (field.rfind(package, 0) == 0) field = field.substr(package.size());
      why = absl::StrCat("string field ", field, " is not valid UTF-8");
    }
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": not a valid ", out.GetDescriptor()->name(), " (", why, ")"));
  }
  return CheckEnums(out, "");
}

void ProtobufLogLine(google::protobuf::LogLevel level, const char* file, int line,
                     const std::string& message) {
  if (parse_complaint != nullptr && level < google::protobuf::LOGLEVEL_FATAL) {
    *parse_complaint = message;  // reported in the refusal, not logged
    return;
  }
  const LogLevel ours = level >= google::protobuf::LOGLEVEL_ERROR     ? LogLevel::kWarn
                        : level == google::protobuf::LOGLEVEL_WARNING ? LogLevel::kInfo
                                                                      : LogLevel::kDebug;
  // libprotobuf reports what it refused while parsing (invalid UTF-8, a
  // message over its size limit); the request is answered INVALID_ARGUMENT.
  LogLine(ours, "libprotobuf").Str("detail", message).Str("at", absl::StrCat(file, ":", line));
}

}  // namespace

absl::Status DecodeRequest(absl::string_view bytes, google::protobuf::Message* out,
                           absl::string_view what) {
  RouteProtobufLogs();
  out->Clear();
  std::string complaint;
  parse_complaint = &complaint;
  const bool ok = bytes.size() <= static_cast<size_t>(INT32_MAX) &&
                  out->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
  parse_complaint = nullptr;
  return Parsed(ok, *out, what, complaint);
}

absl::Status DecodeRequest(const grpc::ByteBuffer& buffer, google::protobuf::Message* out,
                           absl::string_view what) {
  RouteProtobufLogs();
  out->Clear();
  grpc::ByteBuffer copy(buffer);  // shares the slices; the reader consumes
  grpc::ProtoBufferReader reader(&copy);
  std::string complaint;
  parse_complaint = &complaint;
  const bool ok = out->ParseFromZeroCopyStream(&reader);
  parse_complaint = nullptr;
  return Parsed(ok, *out, what, complaint);
}

absl::Status EncodeResponse(const google::protobuf::Message& msg, grpc::ByteBuffer* out) {
  out->Clear();  // the serializer needs an empty buffer
  bool own = false;
  if (!grpc::SerializationTraits<google::protobuf::Message>::Serialize(msg, out, &own).ok()) {
    return absl::InternalError(absl::StrCat("cannot encode ", msg.GetDescriptor()->name()));
  }
  return absl::OkStatus();
}

absl::Status CheckEnumFields(const google::protobuf::Message& m) { return CheckEnums(m, ""); }

void RouteProtobufLogs() {
  static std::once_flag once;
  std::call_once(once, [] { google::protobuf::SetLogHandler(&ProtobufLogLine); });
}

}  // namespace speakermem::server
