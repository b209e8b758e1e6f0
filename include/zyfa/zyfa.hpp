/**
 * @file zyfa.hpp
 * @brief Header-only C++ layer over the C API: an RAII handle and exceptions.
 *
 * Nothing here adds behaviour: every call forwards to the C function of the same name and turns
 * a status other than success into zyfa::Error (or, with the try_ variants, returns it).
 *
 * Needs C++11 or later (the library itself is built as C++17; this header is not).
 */
#ifndef ZYFA_ZYFA_HPP
#define ZYFA_ZYFA_HPP

#if !defined(__cplusplus) || (__cplusplus < 201103L && !(defined(_MSVC_LANG) && _MSVC_LANG >= 201103L))
#error "zyfa/zyfa.hpp needs C++11 or later (from C, include zyfa/zyfa.h)"
#endif

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "zyfa/zyfa.h"

namespace zyfa {

/** @brief Thrown by the C++ layer; carries the status and zyfa_last_error() of the failed call. */
class Error : public std::runtime_error {
 public:
  Error(zyfa_status_t status, const std::string& message)
      : std::runtime_error(std::string(zyfa_status_string(status)) + ": " + message), status_(status) {}
  /** @brief The status the C call returned. */
  zyfa_status_t status() const noexcept { return status_; }

 private:
  zyfa_status_t status_;
};

/** @brief Result of a try_ call: the status and, on failure, the message. */
struct Status {
  zyfa_status_t code;
  std::string message;
  // Constructors rather than member initializers keep `Status{code, message}` valid in C++11.
  Status() : code(ZYFA_STATUS_SUCCESS) {}
  Status(zyfa_status_t c, std::string m = std::string()) : code(c), message(std::move(m)) {}
  /** @brief True on success. */
  explicit operator bool() const noexcept { return code == ZYFA_STATUS_SUCCESS; }
};

/** @brief Throws zyfa::Error unless status is success. */
inline void check(zyfa_status_t status) {
  if (status != ZYFA_STATUS_SUCCESS) throw Error(status, zyfa_last_error());
}

/** @brief Captures status and message without throwing. */
inline Status capture(zyfa_status_t status) {
  return Status{status, status == ZYFA_STATUS_SUCCESS ? std::string() : std::string(zyfa_last_error())};
}

/**
 * @brief zyfa_rotation_matrix(): R of (rotation, head_dim, seed) as head_dim * head_dim floats,
 * row-major; throws zyfa::Error on bad arguments.
 */
inline std::vector<float> rotation_matrix(zyfa_rotation_t rotation, int64_t head_dim, uint64_t seed) {
  std::vector<float> r(head_dim > 0 && head_dim <= 4096 ? static_cast<size_t>(head_dim * head_dim) : 1);
  check(zyfa_rotation_matrix(rotation, head_dim, seed, r.data()));
  return r;
}

/** @brief Owning wrapper of zyfa_handle_t; movable, not copyable. Thread-safe like the handle. */
class Handle {
 public:
  /** @brief Creates a handle; throws zyfa::Error on failure. */
  Handle() { check(zyfa_create(&handle_)); }
  ~Handle() { zyfa_destroy(handle_); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& other) noexcept : handle_(other.handle_) { other.handle_ = nullptr; }
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      zyfa_destroy(handle_);
      handle_ = other.handle_;
      other.handle_ = nullptr;
    }
    return *this;
  }

  /** @brief The C handle, for calls the C++ layer does not wrap. */
  zyfa_handle_t get() const noexcept { return handle_; }

  /** @brief zyfa_fwd(); throws zyfa::Error on failure. */
  void fwd(const zyfa_fwd_desc_t& desc) const { check(zyfa_fwd(handle_, &desc)); }
  /** @brief zyfa_fwd() without exceptions. */
  Status try_fwd(const zyfa_fwd_desc_t& desc) const noexcept { return capture(zyfa_fwd(handle_, &desc)); }
  /** @brief zyfa_fwd_prepare(); throws zyfa::Error on failure. */
  void fwd_prepare(const zyfa_fwd_desc_t& desc) const { check(zyfa_fwd_prepare(handle_, &desc)); }
  /** @brief zyfa_fp8_quantize(); throws zyfa::Error on failure. */
  void fp8_quantize(const zyfa_quantize_desc_t& desc) const { check(zyfa_fp8_quantize(handle_, &desc)); }
  /** @brief zyfa_fp8_quantize() without exceptions. */
  Status try_fp8_quantize(const zyfa_quantize_desc_t& desc) const noexcept {
    return capture(zyfa_fp8_quantize(handle_, &desc));
  }
  /** @brief zyfa_backend_alignment(): the alignment rules of `backend`'s kernels; throws on failure. */
  zyfa_alignment_t alignment(zyfa_backend_t backend = ZYFA_BACKEND_AUTO) const {
    zyfa_alignment_t out = ZYFA_ALIGNMENT_INIT;
    check(zyfa_backend_alignment(handle_, backend, &out));
    return out;
  }
  /** @brief The concrete backend `backend` resolves to; throws if it is not usable here. */
  zyfa_backend_t resolve(zyfa_backend_t backend = ZYFA_BACKEND_AUTO) const {
    zyfa_backend_t out = ZYFA_BACKEND_CPU;
    check(zyfa_backend_query(handle_, backend, &out));
    return out;
  }

 private:
  zyfa_handle_t handle_ = nullptr;
};

}  // namespace zyfa

#endif  // ZYFA_ZYFA_HPP
