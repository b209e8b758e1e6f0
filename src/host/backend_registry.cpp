// Backends that this build does not carry are replaced by objects that say why.
#include <utility>

#include "host/backend.h"
#include "host/error.h"
#include "zyfa_build_config.h"

namespace zyfa {
namespace {

class UnavailableBackend final : public Backend {
 public:
  UnavailableBackend(zyfa_status_t status, std::string why) : status_(status), why_(std::move(why)) {}
  zyfa_status_t available() override { return set_error(status_, why_); }
  zyfa_status_t fwd(const FwdProblem&) override { return available(); }
  zyfa_status_t fwd_prepare(const FwdProblem&) override { return available(); }
  zyfa_status_t fp8_quantize(const QuantizeProblem&) override { return available(); }

 private:
  zyfa_status_t status_;
  std::string why_;
};

}  // namespace

std::unique_ptr<Backend> make_unavailable_backend(zyfa_status_t status, std::string why) {
  return std::make_unique<UnavailableBackend>(status, std::move(why));
}

namespace {

// A backend this build does not carry: NOT_SUPPORTED, saying what it was built without and how
// to build it.
[[maybe_unused]] std::unique_ptr<Backend> not_built(const char* backend, const char* missing_and_how) {
  return make_unavailable_backend(ZYFA_STATUS_NOT_SUPPORTED,
                                  fmt::format("backend = {}: this libzyfa was built without {}", backend, missing_and_how));
}

}  // namespace

#if !ZYFA_HAVE_HIP
std::unique_ptr<Backend> make_hip_backend() {
  return not_built("hip", "the gfx950 toolchain (toolchain: " ZYFA_AMD_TOOLCHAIN_SUMMARY
                          "); rebuild with -DZYFA_AMD_TOOLCHAIN=rocm or =sysroot (see docs/building.md)");
}
#endif

#if !ZYFA_HAVE_EMU
std::unique_ptr<Backend> make_emu_backend() {
  return not_built("emu", "gfx950 code objects (toolchain: " ZYFA_AMD_TOOLCHAIN_SUMMARY
                          "); rebuild with -DZYFA_AMD_TOOLCHAIN=rocm or =sysroot (see docs/building.md)");
}
#endif

#if !ZYFA_HAVE_CUDA
std::unique_ptr<Backend> make_cuda_backend() {
  return not_built("cuda", "the CUDA toolkit; rebuild with -DZYFA_CUDA=on");
}
#endif

}  // namespace zyfa
