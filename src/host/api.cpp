// The C entry points: argument checks, backend resolution, and the guarantee that no C++
// exception crosses the C boundary.
#include <exception>
#include <new>

#include "host/error.h"
#include "host/handle.h"
#include "host/rotation_matrix.h"
#include "host/validate.h"

namespace zyfa {
const char* last_error();
}

namespace {

// Runs `body` and turns escaping exceptions into statuses. Clears the message on success.
template <typename F>
zyfa_status_t guarded(F&& body) noexcept {
  zyfa_status_t status;
  try {
    zyfa::clear_error();
    status = body();
  } catch (const std::bad_alloc&) {
    status = zyfa::set_error(ZYFA_STATUS_OUT_OF_MEMORY, "host allocation failed");
  } catch (const std::exception& e) {
    status = zyfa::fail(ZYFA_STATUS_INTERNAL_ERROR, "internal error: {}", e.what());
  } catch (...) {
    status = zyfa::set_error(ZYFA_STATUS_INTERNAL_ERROR, "internal error: unknown exception");
  }
  if (status == ZYFA_STATUS_SUCCESS) zyfa::clear_error();
  return status;
}

// Resolves the backend of a call and checks it is usable; AUTO never fails here.
zyfa_status_t pick_backend(zyfa_handle_t handle, zyfa_backend_t requested, zyfa_backend_t* out) {
  const zyfa_backend_t kind = handle->resolve(requested);
  if (requested == ZYFA_BACKEND_AUTO) zyfa::clear_error();
  const zyfa_status_t status = handle->backend(kind).available();
  if (status != ZYFA_STATUS_SUCCESS) return status;
  *out = kind;
  return ZYFA_STATUS_SUCCESS;
}

// The common front of zyfa_fwd and zyfa_fwd_prepare: every field rule first (so a malformed
// descriptor reads the same on every machine), then the backend the call runs on, what it
// implements, and the prefix sums where they are host memory.
zyfa_status_t resolve_fwd(zyfa_handle_t handle, const zyfa_fwd_desc_t* desc, zyfa::FwdProblem* problem) {
  if (handle == nullptr) return zyfa::fail(ZYFA_STATUS_INVALID_ARGUMENT, "handle is NULL");
  zyfa_status_t status = zyfa::validate_fwd(desc, problem);
  if (status != ZYFA_STATUS_SUCCESS) return status;
  status = pick_backend(handle, desc->backend, &problem->backend);
  if (status != ZYFA_STATUS_SUCCESS) return status;
  const bool host_memory = problem->backend == ZYFA_BACKEND_CPU || problem->backend == ZYFA_BACKEND_EMU;
  return host_memory && problem->batch != 0 ? zyfa::validate_fwd_lengths(*problem) : ZYFA_STATUS_SUCCESS;
}

// A call with no batch or no query heads is valid and has nothing to compute or write. It is
// still validated and its backend resolved, so it fails exactly where a full call would.
bool empty_call(const zyfa::FwdProblem& p) { return p.batch == 0 || p.heads == 0; }

}  // namespace

extern "C" {

ZYFA_API const char* zyfa_status_string(zyfa_status_t status) {
  switch (status) {
    case ZYFA_STATUS_SUCCESS: return "success";
    case ZYFA_STATUS_INVALID_ARGUMENT: return "invalid argument";
    case ZYFA_STATUS_NOT_SUPPORTED: return "not supported";
    case ZYFA_STATUS_NO_DEVICE: return "no device";
    case ZYFA_STATUS_OUT_OF_MEMORY: return "out of memory";
    case ZYFA_STATUS_RUNTIME_ERROR: return "runtime error";
    case ZYFA_STATUS_KERNEL_FAULT: return "kernel fault";
    case ZYFA_STATUS_INTERNAL_ERROR: return "internal error";
  }
  return "unknown status";
}

ZYFA_API const char* zyfa_last_error(void) { return zyfa::last_error(); }

ZYFA_API const char* zyfa_backend_name(zyfa_backend_t backend) {
  switch (backend) {
    case ZYFA_BACKEND_AUTO: return "auto";
    case ZYFA_BACKEND_CPU: return "cpu";
    case ZYFA_BACKEND_HIP: return "hip";
    case ZYFA_BACKEND_EMU: return "emu";
    case ZYFA_BACKEND_CUDA: return "cuda";
  }
  return "unknown";
}

ZYFA_API zyfa_status_t zyfa_create(zyfa_handle_t* handle) {
  return guarded([&] {
    if (handle == nullptr) return zyfa::fail(ZYFA_STATUS_INVALID_ARGUMENT, "handle is NULL");
    *handle = new zyfa_handle();
    return ZYFA_STATUS_SUCCESS;
  });
}

ZYFA_API zyfa_status_t zyfa_destroy(zyfa_handle_t handle) {
  return guarded([&] {
    delete handle;
    return ZYFA_STATUS_SUCCESS;
  });
}

ZYFA_API zyfa_status_t zyfa_backend_query(zyfa_handle_t handle, zyfa_backend_t backend,
                                          zyfa_backend_t* resolved) {
  return guarded([&] {
    if (handle == nullptr) return zyfa::fail(ZYFA_STATUS_INVALID_ARGUMENT, "handle is NULL");
    if (backend < ZYFA_BACKEND_AUTO || backend > ZYFA_BACKEND_CUDA)
      return zyfa::fail(ZYFA_STATUS_INVALID_ARGUMENT, "backend = {}: not a zyfa_backend_t value",
                        static_cast<int>(backend));
    zyfa_backend_t kind;
    const zyfa_status_t status = pick_backend(handle, backend, &kind);
    if (status == ZYFA_STATUS_SUCCESS && resolved != nullptr) *resolved = kind;
    return status;
  });
}

ZYFA_API zyfa_status_t zyfa_backend_alignment(zyfa_handle_t handle, zyfa_backend_t backend,
                                              zyfa_alignment_t* alignment) {
  return guarded([&] {
    if (handle == nullptr) return zyfa::fail(ZYFA_STATUS_INVALID_ARGUMENT, "handle is NULL");
    if (alignment == nullptr) return zyfa::fail(ZYFA_STATUS_INVALID_ARGUMENT, "alignment is NULL");
    if (alignment->struct_size != sizeof(zyfa_alignment_t))
      return zyfa::fail(ZYFA_STATUS_INVALID_ARGUMENT,
                        "alignment->struct_size = {}: unknown record version (this library expects {}; "
                        "initialize with ZYFA_ALIGNMENT_INIT)",
                        alignment->struct_size, sizeof(zyfa_alignment_t));
    if (backend < ZYFA_BACKEND_AUTO || backend > ZYFA_BACKEND_CUDA)
      return zyfa::fail(ZYFA_STATUS_INVALID_ARGUMENT, "backend = {}: not a zyfa_backend_t value",
                        static_cast<int>(backend));
    // The rules belong to the kernels, so a concrete backend is answered even where it cannot
    // run; only AUTO needs a usable backend to name.
    zyfa_backend_t kind = backend;
    if (backend == ZYFA_BACKEND_AUTO) {
      const zyfa_status_t status = pick_backend(handle, backend, &kind);
      if (status != ZYFA_STATUS_SUCCESS) return status;
    }
    *alignment = zyfa::backend_alignment(kind);
    return ZYFA_STATUS_SUCCESS;
  });
}

ZYFA_API zyfa_status_t zyfa_fwd(zyfa_handle_t handle, const zyfa_fwd_desc_t* desc) {
  return guarded([&] {
    zyfa::FwdProblem problem;
    const zyfa_status_t status = resolve_fwd(handle, desc, &problem);
    if (status != ZYFA_STATUS_SUCCESS || empty_call(problem)) return status;
    return handle->backend(problem.backend).fwd(problem);
  });
}

ZYFA_API zyfa_status_t zyfa_fwd_prepare(zyfa_handle_t handle, const zyfa_fwd_desc_t* desc) {
  return guarded([&] {
    zyfa::FwdProblem problem;
    const zyfa_status_t status = resolve_fwd(handle, desc, &problem);
    if (status != ZYFA_STATUS_SUCCESS || empty_call(problem)) return status;
    return handle->backend(problem.backend).fwd_prepare(problem);
  });
}

ZYFA_API zyfa_status_t zyfa_fp8_quantize(zyfa_handle_t handle, const zyfa_quantize_desc_t* desc) {
  return guarded([&] {
    if (handle == nullptr) return zyfa::fail(ZYFA_STATUS_INVALID_ARGUMENT, "handle is NULL");
    zyfa::QuantizeProblem problem;
    // Field rules first, so a malformed descriptor reads the same on every machine.
    zyfa_status_t status = zyfa::validate_quantize(desc, &problem);
    if (status != ZYFA_STATUS_SUCCESS) return status;
    status = pick_backend(handle, desc->backend, &problem.backend);
    return status != ZYFA_STATUS_SUCCESS ? status : handle->backend(problem.backend).fp8_quantize(problem);
  });
}

ZYFA_API zyfa_status_t zyfa_rotation_matrix(zyfa_rotation_t rotation, int64_t head_dim, uint64_t seed,
                                            float* out) {
  return guarded([&] { return zyfa::rotation_matrix(rotation, head_dim, seed, out); });
}

}  // extern "C"
