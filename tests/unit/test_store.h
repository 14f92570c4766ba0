// A real RocksDB store in a test's temporary directory.
#ifndef SPEAKERMEM_TESTS_UNIT_TEST_STORE_H_
#define SPEAKERMEM_TESTS_UNIT_TEST_STORE_H_

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "storage/store.h"

namespace speakermem::testing {

inline std::unique_ptr<storage::Store> OpenTestStore(const std::string& path) {
  storage::StoreOptions so;
  so.path = path;
  absl::StatusOr<std::unique_ptr<storage::Store>> store = storage::Store::Open(so);
  REQUIRE(store.ok());
  return std::move(*store);
}

}  // namespace speakermem::testing

#endif  // SPEAKERMEM_TESTS_UNIT_TEST_STORE_H_
