// The object behind zyfa_handle_t: one lazily created instance of each backend.
#pragma once

#include <array>
#include <memory>
#include <mutex>

#include "host/backend.h"

struct zyfa_handle {
  // Returns the backend instance for a concrete kind (never AUTO); created on first use.
  zyfa::Backend& backend(zyfa_backend_t kind);
  // Resolves AUTO: cuda, then hip, when their device is usable; cpu otherwise.
  zyfa_backend_t resolve(zyfa_backend_t requested);

 private:
  std::mutex mutex_;
  std::array<std::unique_ptr<zyfa::Backend>, 5> backends_;
};
