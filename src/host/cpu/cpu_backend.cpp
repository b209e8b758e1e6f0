// The cpu backend: every supported configuration on host memory, as exact as fp64 allows.
// Device descales are host pointers here.
#include <memory>
#include <new>
#include <system_error>

#include "host/backend.h"
#include "host/error.h"
#include "host/cpu/cpu_attention.h"
#include "host/cpu/cpu_quantize.h"

namespace zyfa {
namespace {

class CpuBackend final : public Backend {
 public:
  zyfa_status_t available() override { return ZYFA_STATUS_SUCCESS; }

  zyfa_status_t fwd(const FwdProblem& p) override {
    try {
      cpu::attention_fwd(p);
    } catch (const std::bad_alloc&) {
      return fail(ZYFA_STATUS_OUT_OF_MEMORY, "backend = cpu: out of host memory for scratch tiles");
    } catch (const std::system_error& e) {
      return fail(ZYFA_STATUS_RUNTIME_ERROR, "backend = cpu: {}", e.what());
    }
    return ZYFA_STATUS_SUCCESS;
  }

  zyfa_status_t fp8_quantize(const QuantizeProblem& p) override {
    cpu::fp8_quantize(p);  // allocates nothing
    return ZYFA_STATUS_SUCCESS;
  }
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace zyfa
