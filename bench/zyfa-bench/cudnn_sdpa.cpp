// cuDNN SDPA forward through the frontend graph API (see cudnn_sdpa.h).
#include "cudnn_sdpa.h"

#include <cudnn_frontend.h>
#include <dlfcn.h>

#include <algorithm>
#include <climits>
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

enum Uid : int64_t {
  kQ = 1, kK, kV, kO, kDq, kDk, kDv, kDs, kSs, kSo, kAmaxS, kAmaxO, kStats,
  kSeqQ, kSeqKv, kOffQ, kOffK, kOffV, kOffO  // ragged batches
};

// Per-sequence element offsets (B + 1) of rows packed `row` elements apart: int32, the type
// every cuDNN 9 release takes for ragged offsets. False when they do not fit.
bool ragged_offsets(const std::vector<int64_t>& lens, int64_t row, std::vector<int32_t>* out) {
  int64_t at = 0;
  out->push_back(0);
  for (int64_t l : lens) {
    at += l * row;
    if (at > INT32_MAX) return false;
    out->push_back(static_cast<int32_t>(at));
  }
  return true;
}

class Sdpa final : public CudnnSdpa {
 public:
  bool init(const SdpaShape& s, const SdpaBuffers& b, std::string* why) {
    buffers_ = b;
    shape_ = s;
    if (fe::detail::create_handle(&handle_) != CUDNN_STATUS_SUCCESS) {
      *why = "cudnnCreate failed";
      return false;
    }
    if (s.stats && ragged()) {
      *why = "softmax stats of a ragged batch are not set up in this bench";
      return false;
    }
    // The causal mask: top-left where queries and keys have one length (the long-standing
    // path of the fixed-length runs), bottom-right with more keys than queries and for ragged
    // batches. Where cuDNN refuses bottom-right (its FP8 forward takes it on Blackwell only)
    // and every sequence has as many keys as queries, top-left is the same mask: tried next.
    const bool same_lengths = ragged() ? s.ragged_q == s.ragged_k : s.seqlen_k == 0 || s.seqlen_k == s.seqlen;
    std::vector<bool> bottom_right;
    if (ragged() || !same_lengths) bottom_right.push_back(true);
    if (same_lengths) bottom_right.push_back(false);
    // BF16 output first (what ZYFA writes); FP8 output otherwise.
    for (bool br : bottom_right) {
      for (bool fp8_out : {false, true}) {
        if (!s.fp8 && fp8_out) break;
        std::string err;
        if (build(fp8_out, br, &err)) {
          out_fp8_ = fp8_out;
          note_ = std::string(fp8_out ? "FP8 output" : "BF16 output") + (ragged() ? ", ragged (THD)" : "") +
                  (br ? ", causal bottom-right" : ragged() ? ", causal top-left (the same mask: Lk = Lq)" : "");
          return allocate(why);
        }
        *why += (why->empty() ? "" : "; ") + std::string(br ? "bottom-right, " : "top-left, ") +
                (fp8_out ? "fp8 out: " : "bf16 out: ") + err;
      }
    }
    return false;
  }

  ~Sdpa() override {
    if (scratch_) cudaFree(scratch_);
    if (lengths_) cudaFree(lengths_);
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
  std::string note() const override { return note_; }
  std::string error() const override { return error_; }

 private:
  bool ragged() const { return !shape_.ragged_q.empty(); }

  bool build(bool fp8_out, bool bottom_right, std::string* err) {
    const SdpaShape& s = shape_;
    auto g = std::make_shared<fe::graph::Graph>();
    g->set_io_data_type(s.fp8 ? fe::DataType_t::FP8_E4M3 : fe::DataType_t::BFLOAT16)
        .set_intermediate_data_type(fe::DataType_t::FLOAT)
        .set_compute_data_type(fe::DataType_t::FLOAT);
    const bool rag = ragged();
    const int64_t b = rag ? static_cast<int64_t>(s.ragged_q.size()) : s.batch;
    const int64_t s_q = rag ? *std::max_element(s.ragged_q.begin(), s.ragged_q.end()) : s.seqlen;
    const int64_t s_kv = rag ? *std::max_element(s.ragged_k.begin(), s.ragged_k.end())
                             : (s.seqlen_k > 0 ? s.seqlen_k : s.seqlen);
    auto index = [&](const std::string& name, Uid uid, int64_t n) {
      return g->tensor(fe::graph::Tensor_attributes()
                           .set_name(name)
                           .set_uid(uid)
                           .set_dim({n, 1, 1, 1})
                           .set_stride({1, 1, 1, 1})
                           .set_data_type(fe::DataType_t::INT32));
    };
    // Logical (b, h, s, d) over bshd memory; ragged: sequence i starts at element offset[i].
    auto layout = [&](fe::graph::Tensor_attributes& t, Uid offset, int64_t heads, int64_t rows, int64_t d) {
      t.set_dim({b, heads, rows, d}).set_stride({rows * heads * d, d, heads * d, 1});
      if (rag) t.set_ragged_offset(index(t.get_name() + "_offset", offset, b + 1));
    };
    auto tensor = [&](const char* name, Uid uid, Uid offset, int64_t heads, int64_t rows, int64_t d) {
      fe::graph::Tensor_attributes t;
      t.set_name(name).set_uid(uid);
      layout(t, offset, heads, rows, d);
      return g->tensor(t);
    };
    auto q = tensor("Q", kQ, kOffQ, s.heads, s_q, s.d_qk);
    auto k = tensor("K", kK, kOffK, s.heads_k, s_kv, s.d_qk);
    auto v = tensor("V", kV, kOffV, s.heads_k, s_kv, s.d_v);
    // The mask options, the same for the BF16 and FP8 graphs.
    auto mask = [&](fe::graph::SDPA_attributes& a) {
      if (bottom_right) a.set_causal_mask_bottom_right(true);
      else a.set_causal_mask(true);
      if (rag) a.set_padding_mask(true).set_seq_len_q(index("seq_q", kSeqQ, b)).set_seq_len_kv(index("seq_kv", kSeqKv, b));
    };
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
                      .set_attn_scale(scale);
      mask(opts);
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
                      .set_attn_scale(scale);
      mask(opts);
      auto outs = g->sdpa(q, k, v, opts);
      o = outs[0];
      stats = outs[1];
    }
    if (s.stats) {
      // Stats is (b, h, s, 1); laid out (b, h, s) contiguous like ZYFA's LSE.
      stats->set_output(true).set_uid(kStats).set_dim({s.batch, s.heads, s.seqlen, 1})
          .set_stride({s.heads * s.seqlen, s.seqlen, 1, 1}).set_data_type(fe::DataType_t::FLOAT);
    }
    o->set_output(true).set_uid(kO);
    layout(*o, kOffO, s.heads, s_q, s.d_v);
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
    if (ragged() && !upload_lengths(why)) return false;
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

  // The ragged batch's index tensors in one device block: seq_len q, kv (B each), then the
  // element offsets of q, k, v, o (B + 1 each).
  bool upload_lengths(std::string* why) {
    const SdpaShape& s = shape_;
    std::vector<int32_t> host;
    for (const auto* lens : {&s.ragged_q, &s.ragged_k})
      for (int64_t l : *lens) host.push_back(static_cast<int32_t>(l));
    const int64_t rows[4] = {s.heads * s.d_qk, s.heads_k * s.d_qk, s.heads_k * s.d_v, s.heads * s.d_v};
    for (int i = 0; i < 4; ++i) {
      if (!ragged_offsets(i == 0 || i == 3 ? s.ragged_q : s.ragged_k, rows[i], &host)) {
        *why = "ragged offsets beyond int32 (too many packed elements)";
        return false;
      }
    }
    if (cudaMalloc(&lengths_, host.size() * sizeof(int32_t)) != cudaSuccess ||
        cudaMemcpy(lengths_, host.data(), host.size() * sizeof(int32_t), cudaMemcpyHostToDevice) != cudaSuccess) {
      *why = "ragged index allocation failed";
      return false;
    }
    const size_t b = s.ragged_q.size();
    int32_t* p = static_cast<int32_t*>(lengths_);
    ptrs_[kSeqQ] = p;
    ptrs_[kSeqKv] = p + b;
    for (int i = 0; i < 4; ++i) ptrs_[kOffQ + i] = p + 2 * b + i * (b + 1);
    return true;
  }

  cudnnHandle_t handle_ = nullptr;
  std::shared_ptr<fe::graph::Graph> graph_;
  std::unordered_map<int64_t, void*> ptrs_;
  void* workspace_ = nullptr;
  void* scratch_ = nullptr;
  void* lengths_ = nullptr;
  std::string note_;
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
