#include "server/reflection_v1.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>

#include <set>

#include "grpc/reflection/v1/reflection.grpc.pb.h"

namespace speakermem::server {
namespace {

namespace pb = google::protobuf;
namespace rv1 = grpc::reflection::v1;

// One response per request, in order; ends when the client half-closes.
class ReflectionReactor final
    : public grpc::ServerBidiReactor<rv1::ServerReflectionRequest, rv1::ServerReflectionResponse> {
 public:
  explicit ReflectionReactor(const std::vector<std::string>* services) : services_(services) {
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status::OK);
      return;
    }
    response_.Clear();
    Answer(request_, &response_);
    StartWrite(&response_);
  }
  void OnWriteDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status(grpc::StatusCode::CANCELLED, "the client went away"));
      return;
    }
    StartRead(&request_);
  }
  void OnDone() override { delete this; }

 private:
  void Answer(const rv1::ServerReflectionRequest& req, rv1::ServerReflectionResponse* out) {
    out->set_valid_host(req.host());
    *out->mutable_original_request() = req;
    const pb::DescriptorPool* pool = pb::DescriptorPool::generated_pool();
    auto not_found = [&](const std::string& what) {
      out->mutable_error_response()->set_error_code(static_cast<int>(grpc::StatusCode::NOT_FOUND));
      out->mutable_error_response()->set_error_message(what);
    };
    switch (req.message_request_case()) {
      case rv1::ServerReflectionRequest::kListServices:
        for (const auto& name : *services_) {
          out->mutable_list_services_response()->add_service()->set_name(name);
        }
        return;
      case rv1::ServerReflectionRequest::kFileByFilename: {
        const pb::FileDescriptor* f = pool->FindFileByName(req.file_by_filename());
        if (f == nullptr) return not_found("unknown file " + req.file_by_filename());
        return AddFiles(f, out);
      }
      case rv1::ServerReflectionRequest::kFileContainingSymbol: {
        const pb::FileDescriptor* f = pool->FindFileContainingSymbol(req.file_containing_symbol());
        if (f == nullptr) return not_found("unknown symbol " + req.file_containing_symbol());
        return AddFiles(f, out);
      }
      case rv1::ServerReflectionRequest::kFileContainingExtension: {
        const auto& e = req.file_containing_extension();
        const pb::Descriptor* type = pool->FindMessageTypeByName(e.containing_type());
        const pb::FieldDescriptor* ext =
            type == nullptr ? nullptr : pool->FindExtensionByNumber(type, e.extension_number());
        if (ext == nullptr) return not_found("unknown extension of " + e.containing_type());
        return AddFiles(ext->file(), out);
      }
      case rv1::ServerReflectionRequest::kAllExtensionNumbersOfType: {
        const pb::Descriptor* type =
            pool->FindMessageTypeByName(req.all_extension_numbers_of_type());
        if (type == nullptr)
          return not_found("unknown type " + req.all_extension_numbers_of_type());
        std::vector<const pb::FieldDescriptor*> exts;
        pool->FindAllExtensions(type, &exts);
        auto* r = out->mutable_all_extension_numbers_response();
        r->set_base_type_name(type->full_name());
        for (const auto* x : exts) r->add_extension_number(x->number());
        return;
      }
      default:
        out->mutable_error_response()->set_error_code(
            static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT));
        out->mutable_error_response()->set_error_message("the request names nothing to reflect");
    }
  }

  // `f` and every file it imports, transitively, `f` first.
  static void AddFiles(const pb::FileDescriptor* f, rv1::ServerReflectionResponse* out) {
    std::set<const pb::FileDescriptor*> seen = {f};
    std::vector<const pb::FileDescriptor*> queue = {f};
    auto* files = out->mutable_file_descriptor_response();
    while (!queue.empty()) {
      const pb::FileDescriptor* next = queue.front();
      queue.erase(queue.begin());
      pb::FileDescriptorProto proto;
      next->CopyTo(&proto);
      proto.SerializeToString(files->add_file_descriptor_proto());
      for (int i = 0; i < next->dependency_count(); ++i) {
        if (seen.insert(next->dependency(i)).second) queue.push_back(next->dependency(i));
      }
    }
  }

  const std::vector<std::string>* const services_;
  rv1::ServerReflectionRequest request_;
  rv1::ServerReflectionResponse response_;
};

class ReflectionV1 final : public rv1::ServerReflection::CallbackService {
 public:
  explicit ReflectionV1(std::vector<std::string> services) : services_(std::move(services)) {}
  grpc::ServerBidiReactor<rv1::ServerReflectionRequest, rv1::ServerReflectionResponse>*
  ServerReflectionInfo(grpc::CallbackServerContext* ctx) override {
    return new ReflectionReactor(&services_);
  }

 private:
  const std::vector<std::string> services_;
};

}  // namespace

std::unique_ptr<grpc::Service> NewReflectionV1Service(std::vector<std::string> services) {
  return std::make_unique<ReflectionV1>(std::move(services));
}

}  // namespace speakermem::server
