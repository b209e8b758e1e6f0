// AmdDevice on a real GPU through the HIP module API, and make_hip_backend().
//
// The runtime is opened with dlopen rather than linked: libzyfa then loads on machines
// without ROCm (the hip backend reports NO_DEVICE there), and it uses whichever libamdhip64
// the installed ROCm provides (its soname changes between ROCm releases). The HIP header
// supplies the types and signatures.
#include <dlfcn.h>
#include <hip/hip_runtime_api.h>

#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "host/amd/amd_backend.h"
#include "host/amd/amd_device.h"
#include "host/error.h"

namespace zyfa {
namespace amd {
namespace {

// The entry points the backend uses, resolved once per process.
struct HipApi {
  decltype(&hipGetDeviceCount) GetDeviceCount = nullptr;
  decltype(&hipGetDevice) GetDevice = nullptr;
  decltype(&hipGetErrorName) GetErrorName = nullptr;
  hipError_t (*Malloc)(void** ptr, size_t bytes) = nullptr;  // the C entry point, not the template
  decltype(&hipFree) Free = nullptr;
  decltype(&hipMemcpyHtoD) MemcpyHtoD = nullptr;
  decltype(&hipModuleLoadData) ModuleLoadData = nullptr;
  decltype(&hipModuleGetFunction) ModuleGetFunction = nullptr;
  decltype(&hipModuleLaunchKernel) ModuleLaunchKernel = nullptr;
  decltype(&hipModuleUnload) ModuleUnload = nullptr;
  decltype(&hipStreamIsCapturing) StreamIsCapturing = nullptr;
  // hipGetDeviceProperties' struct changed layout in ROCm 6 (R0600); only gcnArchName is read,
  // by finding it in an oversized buffer, so either entry point serves.
  hipError_t (*GetDeviceProperties)(void* props, int device) = nullptr;
  std::string load_error;  // empty when every entry point was found

  static const HipApi& get() {
    static const HipApi api = load();
    return api;
  }

 private:
  static HipApi load() {
    HipApi api;
    void* lib = nullptr;
    for (const char* soname : {"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5"}) {
      lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
      if (lib) break;
    }
    if (!lib) {
      api.load_error = "the HIP runtime (libamdhip64.so) is not installed";
      return api;
    }
    bool ok = true;
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      if (!fn) {
        ok = false;
        if (api.load_error.empty()) api.load_error = std::string("libamdhip64 lacks ") + name;
      }
    };
    sym(api.GetDeviceCount, "hipGetDeviceCount");
    sym(api.GetDevice, "hipGetDevice");
    sym(api.GetErrorName, "hipGetErrorName");
    sym(api.Malloc, "hipMalloc");
    sym(api.Free, "hipFree");
    sym(api.MemcpyHtoD, "hipMemcpyHtoD");
    sym(api.ModuleLoadData, "hipModuleLoadData");
    sym(api.ModuleGetFunction, "hipModuleGetFunction");
    sym(api.ModuleLaunchKernel, "hipModuleLaunchKernel");
    sym(api.ModuleUnload, "hipModuleUnload");
    sym(api.StreamIsCapturing, "hipStreamIsCapturing");
    api.GetDeviceProperties =
        reinterpret_cast<hipError_t (*)(void*, int)>(dlsym(lib, "hipGetDevicePropertiesR0600"));
    if (!api.GetDeviceProperties) sym(api.GetDeviceProperties, "hipGetDeviceProperties");
    if (!ok) return api;
    api.load_error.clear();
    return api;
  }
};

std::string arch_of(const HipApi& hip, int device) {
  std::vector<char> props(64 * 1024, 0);
  if (hip.GetDeviceProperties(props.data(), device) != hipSuccess) return "";
  // gcnArchName ("gfx950:sramecc+:xnack-") is the first field that starts with "gfx".
  for (size_t i = 0; i + 3 < props.size(); ++i)
    if ((i == 0 || props[i - 1] == 0) && std::memcmp(&props[i], "gfx", 3) == 0) {
      std::string name(&props[i], strnlen(&props[i], 256));
      return name.substr(0, name.find(':'));
    }
  return "";
}

class HipDevice final : public AmdDevice {
 public:
  ~HipDevice() override {
    const HipApi& hip = HipApi::get();
    for (auto& m : modules_) (void)hip.ModuleUnload(m.second);
  }

  zyfa_status_t available() override {
    const HipApi& hip = HipApi::get();
    if (!hip.load_error.empty()) return fail(ZYFA_STATUS_NO_DEVICE, "backend = hip: {}", hip.load_error);
    int count = 0;
    if (hipError_t e = hip.GetDeviceCount(&count); e != hipSuccess || count == 0)
      return fail(ZYFA_STATUS_NO_DEVICE, "backend = hip: no AMD GPU is present (hipGetDeviceCount: {})",
                  e != hipSuccess ? hip.GetErrorName(e) : "0 devices");
    const int dev = device_id();
    std::lock_guard<std::mutex> lock(mu_);
    auto it = arch_.find(dev);
    if (it == arch_.end()) it = arch_.emplace(dev, arch_of(hip, dev)).first;
    if (it->second != "gfx950")
      return fail(ZYFA_STATUS_NOT_SUPPORTED, "backend = hip: device {} is {}, the kernels are built for gfx950 (MI355X)",
                  dev, it->second.empty() ? "of unknown architecture" : it->second);
    return ZYFA_STATUS_SUCCESS;
  }

  int device_id() override {
    int dev = 0;
    if (HipApi::get().load_error.empty() && HipApi::get().GetDevice(&dev) != hipSuccess) dev = 0;
    return dev;
  }

  // hipStreamPerThread is a different stream in each thread. NULL is the legacy null stream
  // for these non-_spt entry points, which is one queue; it is keyed per thread anyway, so
  // the scratch rule does not depend on how the runtime or the caller maps NULL.
  bool per_thread_queue(void* stream) override {
    return stream == nullptr || static_cast<hipStream_t>(stream) == hipStreamPerThread;
  }

  zyfa_status_t alloc(size_t bytes, void** ptr) override {
    if (hipError_t e = HipApi::get().Malloc(ptr, bytes); e != hipSuccess)
      return fail(ZYFA_STATUS_OUT_OF_MEMORY, "backend = hip: hipMalloc({} bytes): {}", bytes, HipApi::get().GetErrorName(e));
    return ZYFA_STATUS_SUCCESS;
  }

  void free(void* ptr) override {
    if (ptr) (void)HipApi::get().Free(ptr);
  }

  // Job tables are uploaded once per shape (first call or zyfa_fwd_prepare) with a blocking
  // copy, so that any stream may use them afterwards; later calls never wait for the host.
  zyfa_status_t upload(void* dst, const void* src, size_t bytes) override {
    if (hipError_t e = HipApi::get().MemcpyHtoD(reinterpret_cast<hipDeviceptr_t>(dst), const_cast<void*>(src), bytes);
        e != hipSuccess)
      return fail(ZYFA_STATUS_RUNTIME_ERROR, "backend = hip: hipMemcpyHtoD({} bytes): {}", bytes,
                  HipApi::get().GetErrorName(e));
    return ZYFA_STATUS_SUCCESS;
  }

  zyfa_status_t capturing(void* stream, bool* out) override {
    hipStreamCaptureStatus status = hipStreamCaptureStatusNone;
    if (hipError_t e = HipApi::get().StreamIsCapturing(static_cast<hipStream_t>(stream), &status); e != hipSuccess)
      return fail(ZYFA_STATUS_RUNTIME_ERROR, "backend = hip: hipStreamIsCapturing: {}", HipApi::get().GetErrorName(e));
    *out = status != hipStreamCaptureStatusNone;
    return ZYFA_STATUS_SUCCESS;
  }

  zyfa_status_t launch(const LaunchConfig& cfg) override {
    const HipApi& hip = HipApi::get();
    hipFunction_t fn = nullptr;
    if (zyfa_status_t s = function(cfg, &fn); s != ZYFA_STATUS_SUCCESS) return s;
    size_t size = cfg.kernarg_size;
    void* extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, const_cast<void*>(cfg.kernarg), HIP_LAUNCH_PARAM_BUFFER_SIZE,
                     &size, HIP_LAUNCH_PARAM_END};
    if (hipError_t e = hip.ModuleLaunchKernel(fn, cfg.grid[0], cfg.grid[1], cfg.grid[2], cfg.block[0], cfg.block[1],
                                              cfg.block[2], cfg.dynamic_lds_bytes,
                                              static_cast<hipStream_t>(cfg.stream), nullptr, extra);
        e != hipSuccess)
      return fail(ZYFA_STATUS_RUNTIME_ERROR, "backend = hip: launching {}: {}", cfg.kernel, hip.GetErrorName(e));
    return ZYFA_STATUS_SUCCESS;
  }

 private:
  // Modules are loaded lazily, once per (device, code object); functions are cached too.
  zyfa_status_t function(const LaunchConfig& cfg, hipFunction_t* out) {
    const HipApi& hip = HipApi::get();
    const int dev = device_id();
    std::lock_guard<std::mutex> lock(mu_);
    const auto fkey = std::make_tuple(dev, cfg.code_object, std::string(cfg.kernel));
    if (auto it = functions_.find(fkey); it != functions_.end()) {
      *out = it->second;
      return ZYFA_STATUS_SUCCESS;
    }
    const auto mkey = std::make_pair(dev, cfg.code_object);
    auto mit = modules_.find(mkey);
    if (mit == modules_.end()) {
      hipModule_t module = nullptr;
      if (hipError_t e = hip.ModuleLoadData(&module, cfg.code_object->data); e != hipSuccess)
        return fail(ZYFA_STATUS_RUNTIME_ERROR, "backend = hip: loading code object {} on device {}: {}",
                    cfg.code_object->name, dev, hip.GetErrorName(e));
      mit = modules_.emplace(mkey, module).first;
    }
    hipFunction_t fn = nullptr;
    if (hipError_t e = hip.ModuleGetFunction(&fn, mit->second, cfg.kernel); e != hipSuccess)
      return fail(ZYFA_STATUS_INTERNAL_ERROR, "backend = hip: kernel {} not found in {}: {}", cfg.kernel,
                  cfg.code_object->name, hip.GetErrorName(e));
    functions_.emplace(fkey, fn);
    *out = fn;
    return ZYFA_STATUS_SUCCESS;
  }

  std::mutex mu_;
  std::map<int, std::string> arch_;
  std::map<std::pair<int, const CodeObject*>, hipModule_t> modules_;
  std::map<std::tuple<int, const CodeObject*, std::string>, hipFunction_t> functions_;
};

}  // namespace
}  // namespace amd

std::unique_ptr<Backend> make_hip_backend() {
  return amd::make_amd_backend(std::make_unique<amd::HipDevice>(), ZYFA_BACKEND_HIP);
}

}  // namespace zyfa
