// cuDNN SDPA forward through the frontend graph API (see cudnn_sdpa.h).
#include "cudnn_sdpa.h"

#include <cudnn_frontend.h>
#include <dlfcn.h>

#include <cmath>
#include <unordered_map>
#include <vector>

// The frontend's run-time loading reads libcudnn through this handle, which the program owns.
namespace cudnn_frontend {
void* cudnn_dlhandle = nullptr;
}

namespace zyfa::bench {
namespace {

namespace fe = cudnn_frontend;

// Loads libcudnn.so.9 once; false (with the loader's message) when it is absent.
bool load_cudnn(std::string* why) {
  static std::string error;
  static const bool loaded = [] {
    fe::cudnn_dlhandle = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_GLOBAL);
    if (fe::cudnn_dlhandle == nullptr) {
      const char* e = dlerror();
      error = std::string("libcudnn.so.9 could not be loaded: ") + (e ? e : "unknown error");
    }
    return fe::cudnn_dlhandle != nullptr;
  }();
  if (!loaded && why) *why = error;
  return loaded;
}

enum Uid : int64_t { kQ = 1, kK, kV, kO, kDq, kDk, kDv, kDs, kSs, kSo, kAmaxS, kAmaxO, kStats };

class Sdpa final : public CudnnSdpa {
 public:
  bool init(const SdpaShape& s, const SdpaBuffers& b, std::string* why) {
    buffers_ = b;
    shape_ = s;
    if (fe::detail::create_handle(&handle_) != CUDNN_STATUS_SUCCESS) {
      *why = "cudnnCreate failed";
      return false;
    }
    // Try BF16 output first (what ZYFA writes); FP8 output otherwise.
    for (bool fp8_out : {false, true}) {
      if (!s.fp8 && fp8_out) break;
      std::string err;
      if (build(fp8_out, &err)) {
        out_fp8_ = fp8_out;
        return allocate(why);
      }
      *why += (why->empty() ? "" : "; ") + std::string(fp8_out ? "fp8 out: " : "bf16 out: ") + err;
    }
    return false;
  }

  ~Sdpa() override {
    if (scratch_) cudaFree(scratch_);
    if (workspace_) cudaFree(workspace_);
    if (handle_) fe::detail::destroy_handle(handle_);
  }

  bool run(cudaStream_t stream) override {
    if (fe::detail::set_stream(handle_, stream) != CUDNN_STATUS_SUCCESS) {
      error_ = "cudnnSetStream failed";
      return false;
    }
    auto st = graph_->execute(handle_, ptrs_, workspace_);
    if (!st.is_good()) {
      error_ = st.get_message();
      return false;
    }
    return true;
  }
  bool out_is_fp8() const override { return out_fp8_; }
  std::string error() const override { return error_; }

 private:
  bool build(bool fp8_out, std::string* err) {
    const SdpaShape& s = shape_;
    auto g = std::make_shared<fe::graph::Graph>();
    g->set_io_data_type(s.fp8 ? fe::DataType_t::FP8_E4M3 : fe::DataType_t::BFLOAT16)
        .set_intermediate_data_type(fe::DataType_t::FLOAT)
        .set_compute_data_type(fe::DataType_t::FLOAT);
    // Logical (b, h, s, d) over bshd memory.
    auto tensor = [&](const char* name, Uid uid, int64_t heads, int64_t d) {
      return g->tensor(fe::graph::Tensor_attributes()
                           .set_name(name)
                           .set_uid(uid)
                           .set_dim({s.batch, heads, s.seqlen, d})
                           .set_stride({s.seqlen * heads * d, d, heads * d, 1}));
    };
    auto q = tensor("Q", kQ, s.heads, s.d_qk);
    auto k = tensor("K", kK, s.heads_k, s.d_qk);
    auto v = tensor("V", kV, s.heads_k, s.d_v);
    const float scale = s.softmax_scale != 0.0f ? s.softmax_scale : 1.0f / std::sqrt(float(s.d_qk));
    std::shared_ptr<fe::graph::Tensor_attributes> o, stats;
    if (s.fp8) {
      auto scalar = [&](const char* name, Uid uid) {
        return g->tensor(fe::graph::Tensor_attributes()
                             .set_name(name)
                             .set_uid(uid)
                             .set_dim({1, 1, 1, 1})
                             .set_stride({1, 1, 1, 1})
                             .set_data_type(fe::DataType_t::FLOAT));
      };
      auto opts = fe::graph::SDPA_fp8_attributes()
                      .set_name("sdpa_fp8")
                      .set_generate_stats(s.stats)
                      .set_causal_mask(true)
                      .set_attn_scale(scale);
      auto outs = g->sdpa_fp8(q, k, v, scalar("dq", kDq), scalar("dk", kDk), scalar("dv", kDv),
                              scalar("ds", kDs), scalar("ss", kSs), scalar("so", kSo), opts);
      o = outs[0];
      stats = outs[1];
      outs[2]->set_output(true).set_uid(kAmaxS).set_dim({1, 1, 1, 1}).set_stride({1, 1, 1, 1})
          .set_data_type(fe::DataType_t::FLOAT);
      outs[3]->set_output(true).set_uid(kAmaxO).set_dim({1, 1, 1, 1}).set_stride({1, 1, 1, 1})
          .set_data_type(fe::DataType_t::FLOAT);
      o->set_data_type(fp8_out ? fe::DataType_t::FP8_E4M3 : fe::DataType_t::BFLOAT16);
    } else {
      auto opts = fe::graph::SDPA_attributes()
                      .set_name("sdpa")
                      .set_generate_stats(s.stats)
                      .set_causal_mask(true)
                      .set_attn_scale(scale);
      auto outs = g->sdpa(q, k, v, opts);
      o = outs[0];
      stats = outs[1];
    }
    if (s.stats) {
      // Stats is (b, h, s, 1); laid out (b, h, s) contiguous like ZYFA's LSE.
      stats->set_output(true).set_uid(kStats).set_dim({s.batch, s.heads, s.seqlen, 1})
          .set_stride({s.heads * s.seqlen, s.seqlen, 1, 1}).set_data_type(fe::DataType_t::FLOAT);
    }
    o->set_output(true).set_uid(kO).set_dim({s.batch, s.heads, s.seqlen, s.d_v})
        .set_stride({s.seqlen * s.heads * s.d_v, s.d_v, s.heads * s.d_v, 1});
    auto st = g->build(handle_, {fe::HeurMode_t::A});
    if (!st.is_good()) {
      *err = st.get_message();
      return false;
    }
    graph_ = g;
    return true;
  }

  bool allocate(std::string* why) {
    int64_t ws = 0;
    if (!graph_->get_workspace_size(ws).is_good() ||
        (ws > 0 && cudaMalloc(&workspace_, ws) != cudaSuccess)) {
      *why = "workspace allocation failed";
      return false;
    }
    ptrs_[kQ] = const_cast<void*>(buffers_.q);
    ptrs_[kK] = const_cast<void*>(buffers_.k);
    ptrs_[kV] = const_cast<void*>(buffers_.v);
    ptrs_[kO] = buffers_.out;
    if (shape_.stats) ptrs_[kStats] = buffers_.stats;
    if (shape_.fp8) {
      // [descale_s, scale_s, scale_o, amax_s, amax_o]. P is scaled by 256 before its FP8
      // rounding (descale 1/256), the same power of two ZYFA's Hopper kernels use.
      if (cudaMalloc(&scratch_, 5 * sizeof(float)) != cudaSuccess) {
        *why = "scratch allocation failed";
        return false;
      }
      const float init[5] = {1.0f / 256.0f, 256.0f, 1.0f, 0.0f, 0.0f};
      cudaMemcpy(scratch_, init, sizeof init, cudaMemcpyHostToDevice);
      float* f = static_cast<float*>(scratch_);
      ptrs_[kDq] = const_cast<float*>(buffers_.q_descale);
      ptrs_[kDk] = const_cast<float*>(buffers_.k_descale);
      ptrs_[kDv] = const_cast<float*>(buffers_.v_descale);
      ptrs_[kDs] = f;
      ptrs_[kSs] = f + 1;
      ptrs_[kSo] = f + 2;
      ptrs_[kAmaxS] = f + 3;
      ptrs_[kAmaxO] = f + 4;
    }
    return true;
  }

  cudnnHandle_t handle_ = nullptr;
  std::shared_ptr<fe::graph::Graph> graph_;
  std::unordered_map<int64_t, void*> ptrs_;
  void* workspace_ = nullptr;
  void* scratch_ = nullptr;
  SdpaBuffers buffers_;
  SdpaShape shape_;
  bool out_fp8_ = false;
  std::string error_;
};

}  // namespace

std::unique_ptr<CudnnSdpa> make_cudnn_sdpa(const SdpaShape& shape, const SdpaBuffers& buffers,
                                           std::string* why) {
  if (!load_cudnn(why)) return nullptr;
  try {
    auto s = std::make_unique<Sdpa>();
    if (!s->init(shape, buffers, why)) return nullptr;
    return s;
  } catch (const std::exception& e) {  // the frontend throws when libcudnn cannot be loaded
    *why = e.what();
    return nullptr;
  }
}

std::string cudnn_version() {
  if (!load_cudnn(nullptr)) return "";
  try {
    const size_t v = fe::detail::get_backend_version();
    return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
  } catch (const std::exception&) {
    return "";
  }
}

}  // namespace zyfa::bench
