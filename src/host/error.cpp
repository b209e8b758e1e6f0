#include "host/error.h"

namespace zyfa {
namespace {
thread_local std::string t_last_error;
}

void clear_error() { t_last_error.clear(); }

zyfa_status_t set_error(zyfa_status_t status, std::string message) {
  t_last_error = std::move(message);
  return status;
}

const char* last_error() { return t_last_error.c_str(); }
}  // namespace zyfa
