# speakermem_generate_proto(TARGET <lib> PROTOS <files...> [GRPC])
# Generates C++ (and optionally gRPC) sources for the given .proto files,
# relative to the calling directory's import root, into the build tree, and
# builds them into a static library <lib>.
function(speakermem_generate_proto)
  cmake_parse_arguments(ARG "GRPC" "TARGET;IMPORT_ROOT" "PROTOS" ${ARGN})
  set(srcs)
  set(hdrs)
  set(out_dir ${CMAKE_BINARY_DIR}/gen)
  file(MAKE_DIRECTORY ${out_dir})
  get_target_property(grpc_plugin gRPC::grpc_cpp_plugin LOCATION)
  foreach(proto ${ARG_PROTOS})
    get_filename_component(abs ${proto} ABSOLUTE)
    file(RELATIVE_PATH rel ${ARG_IMPORT_ROOT} ${abs})
    string(REGEX REPLACE "\\.proto$" "" base ${rel})
    list(APPEND srcs ${out_dir}/${base}.pb.cc)
    list(APPEND hdrs ${out_dir}/${base}.pb.h)
    set(outputs ${out_dir}/${base}.pb.cc ${out_dir}/${base}.pb.h)
    set(args --cpp_out=${out_dir})
    if(ARG_GRPC)
      list(APPEND srcs ${out_dir}/${base}.grpc.pb.cc)
      list(APPEND outputs ${out_dir}/${base}.grpc.pb.cc ${out_dir}/${base}.grpc.pb.h)
      list(APPEND args --grpc_out=${out_dir} --plugin=protoc-gen-grpc=${grpc_plugin})
    endif()
    add_custom_command(
      OUTPUT ${outputs}
      COMMAND protobuf::protoc ARGS ${args} -I ${ARG_IMPORT_ROOT} ${abs}
      DEPENDS ${abs} protobuf::protoc
      COMMENT "protoc ${rel}")
  endforeach()
  add_library(${ARG_TARGET} STATIC ${srcs})
  target_include_directories(${ARG_TARGET} PUBLIC ${out_dir})
  target_link_libraries(${ARG_TARGET} PUBLIC protobuf::libprotobuf)
  if(ARG_GRPC)
    target_link_libraries(${ARG_TARGET} PUBLIC gRPC::grpc++)
  endif()
  target_compile_options(${ARG_TARGET} PRIVATE -w)
endfunction()
