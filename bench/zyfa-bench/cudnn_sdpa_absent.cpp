// Built when the cuDNN frontend headers were not found at configure time.
#include "cudnn_sdpa.h"

namespace zyfa::bench {

std::unique_ptr<CudnnSdpa> make_cudnn_sdpa(const SdpaShape&, const SdpaBuffers&, std::string* why) {
  *why = "zyfa-bench was configured without the cuDNN frontend headers (set ZYFA_CUDNN_FRONTEND_INCLUDE; "
         "bench/zyfa-bench/fetch-cudnn-frontend.sh fetches them)";
  return nullptr;
}

std::string cudnn_version() { return ""; }

}  // namespace zyfa::bench
