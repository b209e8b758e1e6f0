// The interface between the API layer and the execution backends.
#pragma once

#include <memory>
#include <string>

#include "host/problem.h"

namespace zyfa {

class Backend {
 public:
  virtual ~Backend() = default;
  // SUCCESS if usable here; otherwise NOT_SUPPORTED / NO_DEVICE and a reason (set_error).
  virtual zyfa_status_t available() = 0;
  virtual zyfa_status_t fwd(const FwdProblem& p) = 0;
  // Host-side preparation for graph capture. Default: nothing to prepare.
  virtual zyfa_status_t fwd_prepare(const FwdProblem&) { return ZYFA_STATUS_SUCCESS; }
  virtual zyfa_status_t fp8_quantize(const QuantizeProblem& p) = 0;
};

// Factories, one per backend. A backend that was not built returns an object whose
// available() reports NOT_SUPPORTED with a message saying how to enable it.
std::unique_ptr<Backend> make_cpu_backend();
std::unique_ptr<Backend> make_hip_backend();
std::unique_ptr<Backend> make_emu_backend();
std::unique_ptr<Backend> make_cuda_backend();

// A backend that only explains why it is absent.
std::unique_ptr<Backend> make_unavailable_backend(zyfa_status_t status, std::string why);

}  // namespace zyfa
