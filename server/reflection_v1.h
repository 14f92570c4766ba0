// Server reflection, protocol v1 (grpc.reflection.v1), beside the v1alpha
// service gRPC's plugin provides: the same answers from the process's
// generated descriptor pool, for tools that ask for v1 first.
#ifndef SPEAKERMEM_SERVER_REFLECTION_V1_H_
#define SPEAKERMEM_SERVER_REFLECTION_V1_H_

#include <memory>
#include <string>
#include <vector>

namespace grpc {
class Service;
}  // namespace grpc

namespace speakermem::server {

// `services`: the fully qualified names list_services answers with.
std::unique_ptr<grpc::Service> NewReflectionV1Service(std::vector<std::string> services);

}  // namespace speakermem::server

#endif  // SPEAKERMEM_SERVER_REFLECTION_V1_H_
