// Small Status helpers missing from Abseil 20220623 (STACK.md pitfall 5).
#ifndef SPEAKERMEM_COMMON_STATUS_MACROS_H_
#define SPEAKERMEM_COMMON_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define SM_CONCAT_INNER_(a, b) a##b
#define SM_CONCAT_(a, b) SM_CONCAT_INNER_(a, b)

// Returns the status from the enclosing function when `expr` is not OK.
#define SM_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::absl::Status sm_status_ = (expr);      \
    if (!sm_status_.ok()) return sm_status_; \
  } while (0)

// `lhs = value of expr` when `expr` (a StatusOr) is OK; otherwise returns its
// status from the enclosing function. `lhs` may be a declaration.
#define SM_ASSIGN_OR_RETURN(lhs, expr) \
  SM_ASSIGN_OR_RETURN_IMPL_(SM_CONCAT_(sm_statusor_, __LINE__), lhs, expr)
#define SM_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(tmp).value()

#endif  // SPEAKERMEM_COMMON_STATUS_MACROS_H_
