// Thread-local error messages behind zyfa_last_error().
#pragma once

#include <fmt/format.h>

#include <string>

#include "zyfa/zyfa.h"

namespace zyfa {

void clear_error();
// Records the message for zyfa_last_error() and returns status, so callers can write
// `return fail(ZYFA_STATUS_INVALID_ARGUMENT, "q.shape[3] = {}: ...", d);`.
zyfa_status_t set_error(zyfa_status_t status, std::string message);

template <typename... Args>
zyfa_status_t fail(zyfa_status_t status, fmt::format_string<Args...> f, Args&&... args) {
  return set_error(status, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace zyfa
