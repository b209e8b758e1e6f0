// Test support shared by every test area and the accuracy report: configurations named
// like "Fp8_D128_Gqa4_S1000", seeded input generators, an independent fp64 reference,
// and the output check (rel RMS, max error, NaN, unwritten elements).
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "zyfa/zyfa.h"

namespace zyfa::test {

enum class Layout { BSHD, BHSD, PACKED_QKV };
// GAUSSIAN: i.i.d. normal with AttnConfig::std. REALISTIC: heavy-tailed channels, RoPE-rotated
// q/k and an attention sink on token 0, so that most probabilities of a row lie many binades
// below its maximum (as in captured activations). RISING: GAUSSIAN plus one channel that makes
// every score grow by one binade per 32 keys towards key 0, so a kernel walking the keys from
// the diagonal down finds a new row maximum, 4 binades higher, in every 128-key block.
enum class Inputs { GAUSSIAN, REALISTIC, RISING };
// HOST: zyfa_descale_host(value). DEVICE_SCALAR: one float in backend memory, strides 0.
// DEVICE_PER_HEAD: a (batch, heads_k) array with real (transposed) strides; FP8 tensors are
// then quantized per (batch, head_k) group, so the values differ per entry.
enum class DescaleMode { HOST, DEVICE_SCALAR, DEVICE_PER_HEAD };

const char* to_string(Layout);
const char* to_string(Inputs);
const char* to_string(DescaleMode);

struct AttnConfig {
  zyfa_dtype_t dtype = ZYFA_DTYPE_BF16;
  int64_t batch = 1, seqlen = 128, heads = 1, heads_k = 1, d_qk = 128, d_v = 128;
  Layout layout = Layout::BSHD;
  Inputs inputs = Inputs::GAUSSIAN;
  double std = 0.1;
  bool lse = true;
  DescaleMode descale = DescaleMode::HOST;
  uint64_t seed = 1;
  float softmax_scale = 0.0f;  // 0: 1/sqrt(d_qk), as the API resolves it

  // "Fp8_D128_Gqa4_S1000", plus "_B2", "_Bhsd", "_Packed", "_Real", "_Std1", "_DevScalar",
  // "_DevPerHead", "_NoLse" when they differ from the defaults. Gtest-safe characters only.
  std::string name() const;

  // A configuration in one expression, e.g.
  //   AttnConfig::of(ZYFA_DTYPE_FP8_E4M3, 128, 8, 2, 1000).with(Layout::BHSD).with_batch(2)
  // (d_v is always 128; the remaining fields keep their defaults).
  static AttnConfig of(zyfa_dtype_t dtype, int64_t d_qk, int64_t heads, int64_t heads_k, int64_t seqlen) {
    AttnConfig c;
    c.dtype = dtype;
    c.d_qk = d_qk;
    c.heads = heads;
    c.heads_k = heads_k;
    c.seqlen = seqlen;
    return c;
  }
  AttnConfig with(Layout l) const { AttnConfig c = *this; c.layout = l; return c; }
  AttnConfig with(DescaleMode d) const { AttnConfig c = *this; c.descale = d; return c; }
  AttnConfig with(Inputs in, double input_std = 0.1) const {
    AttnConfig c = *this;
    c.inputs = in;
    c.std = input_std;
    return c;
  }
  AttnConfig with_batch(int64_t b) const { AttnConfig c = *this; c.batch = b; return c; }
  AttnConfig without_lse() const { AttnConfig c = *this; c.lse = false; return c; }
};

// Host inputs in the layout of the configuration. Each of q, k, v holds the bytes from the
// tensor's first element to one past its last one, so copying q_bytes() bytes of q to any
// memory and passing that pointer with q_stride describes the same tensor (for PACKED_QKV the
// copy carries the interleaved bytes of the other tensors, which are never read).
struct AttnData {
  AttnConfig cfg;
  std::vector<uint8_t> q, k, v;  // BF16 bits (2 bytes) or e4m3 codes (1 byte)
  int64_t q_stride[4], k_stride[4], v_stride[4], out_stride[4];  // elements, logical bshd order
  // Descales per (batch, head_k), logical index b * heads_k + hk; all 1 for BF16. In HOST and
  // DEVICE_SCALAR modes every entry is the tensor's single descale.
  std::vector<float> q_descale, k_descale, v_descale;
  // Device descale array (DEVICE modes): [q | k | v] blocks of descale_block() floats each,
  // each laid out with descale_stride_batch / descale_stride_head_k.
  std::vector<float> dev_descales;
  int64_t descale_stride_batch = 0, descale_stride_head_k = 0;

  size_t elem_bytes() const { return cfg.dtype == ZYFA_DTYPE_BF16 ? 2 : 1; }
  size_t q_bytes() const { return q.size(); }
  size_t k_bytes() const { return k.size(); }
  size_t v_bytes() const { return v.size(); }
  size_t out_count() const;  // BF16 elements of the output buffer (its layout may be bhsd)
  size_t out_bytes() const { return out_count() * 2; }
  size_t lse_count() const;  // batch * heads * seqlen, or 0 without LSE
  size_t descale_count() const { return dev_descales.size(); }
  size_t descale_block() const;  // floats per tensor in dev_descales
  float softmax_scale() const;   // resolved

  // A descriptor for buffers the caller placed in the backend's memory (q/k/v hold copies
  // of the host bytes, out has out_bytes(), lse has lse_count() floats or is null,
  // dev_descales holds descale_count() floats in DEVICE modes). Backend left AUTO.
  zyfa_fwd_desc_t desc(void* q, void* k, void* v, void* out, float* lse,
                       const float* dev_descales) const;
  // The same for the host buffers of this object (cpu and emu backends).
  zyfa_fwd_desc_t host_desc(void* out, float* lse);

  // Decoded input element (times nothing: the raw BF16 or e4m3 value) at logical (b, s, h, i).
  double q_at(int64_t b, int64_t s, int64_t h, int64_t i) const;
  double k_at(int64_t b, int64_t s, int64_t h, int64_t i) const;
  double v_at(int64_t b, int64_t s, int64_t h, int64_t i) const;
  // Offset of logical (b, s, h, i) in the output buffer, in elements.
  int64_t out_offset(int64_t b, int64_t s, int64_t h, int64_t i) const;
};

// The parts of a configuration's name: "Fp8_D128_Gqa4" (dtype, head dims, heads) and the
// input kind ("", "_Real", "_Rising", "_Std1").
std::string kind_name(zyfa_dtype_t dtype, int64_t d_qk, int64_t d_v, int64_t heads, int64_t heads_k);
std::string inputs_name(Inputs inputs, double std);

// Lets gtest print a configuration parameter by its name.
inline void PrintTo(const AttnConfig& c, std::ostream* os) { *os << c.name() << " seed " << c.seed; }

AttnData make_attn_data(const AttnConfig& cfg);  // fresh inputs from cfg.seed

// fp64 attention of the given (decoded, descaled) inputs. out in logical order
// (b, s, h, i) contiguous; lse (natural log) in (b, h, s) order.
struct ReferenceResult {
  std::vector<double> out;
  std::vector<double> lse;
  double out_rms = 0.0;   // RMS of all reference outputs
  double out_max = 0.0;   // max |reference output|
};
// causal false: every query row sees every key (AMD's unmasked kernels in tests/aiter).
ReferenceResult reference_fp64(const AttnData& data, bool causal = true);
// One row of it: plain two-pass softmax of q (d_qk doubles, descaled) against the first n_keys
// rows of K (d_qk each) and V (d_v each), dot products times `scale`; adds the output to o[0..d_v)
// and returns the natural-log LSE. n_keys <= 0 (a row that sees no key): o unchanged, -inf.
double reference_row(const double* q, const double* K, const double* V, int64_t n_keys, int64_t d_qk, int64_t d_v,
                     double scale, double* o);
// Sets out_rms and out_max from out.
void finish_reference(ReferenceResult& r);

// What a backend's output is held to. rel_rms bounds ||o - r|| / ||r||; max_abs bounds
// max |o - r| as a multiple of max |r|; lse_abs bounds max |lse - lse_ref| in nats; a
// positive elem_rel additionally bounds every element: |o - r| <= elem_rel * |r| + tiny.
struct Tolerance {
  double rel_rms = 0.0;
  double max_abs = 0.0;
  double lse_abs = 0.0;
  double elem_rel = 0.0;
};
// Tolerance for a GPU kernel of the configuration's dtype and inputs (docs/numerics.md).
Tolerance kernel_tolerance(const AttnConfig& cfg);
// Tolerance for the cpu backend: exact attention rounded once to BF16.
Tolerance cpu_tolerance();

// rel_rms is the global figure ||o - r|| / ||r|| over every output. With causal attention
// on zero-mean inputs row s's output shrinks like 1/sqrt(s + 1), so the global figure weighs
// row s by 1/(s + 1), favouring the first rows, whose few probabilities are nearly exact; the
// per-row figures e_row = ||o_row - r_row|| / ||r_row|| (one row: the d_v outputs of one
// (b, s, h)) weigh every row alike. Tolerances bound the global figure (docs/numerics.md);
// reports show both.
struct CheckResult {
  double rel_rms = 0.0;
  double row_rel_mean = 0.0;   // mean of e_row over rows (a row with a NaN or unwritten output: inf)
  double row_rel_max = 0.0;    // max of e_row ...
  int64_t row_worst = -1;      // ... at logical row (b * seqlen + s) * heads + h
  double max_abs = 0.0;        // max |o - r|
  int64_t worst_index = -1;    // logical (b, s, h, i) linear index of max_abs
  double max_elem_rel = 0.0;   // max |o - r| / |r| over |r| > 0
  double lse_max_abs = 0.0;
  int64_t lse_worst_index = -1;
  int64_t nan_count = 0;        // NaN or inf outputs (or LSE values)
  int64_t unwritten_count = 0;  // elements still holding the poison pattern
  Tolerance tol;
  double ref_max = 0.0;
  bool has_lse = false;
  std::string failure;  // empty when ok()

  bool ok() const { return failure.empty(); }
  std::string summary() const;
};
// out_bf16 is the output buffer (layout of data.out_stride); lse_or_null is (b, h, s).
CheckResult check_output(const AttnData& data, const ReferenceResult& ref,
                         const uint16_t* out_bf16, const float* lse_or_null);
CheckResult check_output(const AttnData& data, const ReferenceResult& ref,
                         const uint16_t* out_bf16, const float* lse_or_null,
                         const Tolerance& tol);

// NaN patterns that no backend writes as a result: a check finding them reports the
// element as unwritten (a real NaN result is counted as NaN).
inline constexpr uint16_t kPoisonBf16 = 0x7FA5;      // a signalling-NaN bf16
inline constexpr uint32_t kPoisonF32 = 0x7FA5A5A5u;  // a signalling-NaN float
void poison_bf16(uint16_t* p, size_t n);
void poison_f32(float* p, size_t n);
bool is_poison_bf16(uint16_t v);
bool is_poison_f32(float v);

// $ZYFA_TEST_SEED if set, else from the clock; printed once per process.
uint64_t test_seed();
// A distinct seed per test name derived from test_seed(), so tests differ but one run is
// reproducible from the printed seed.
uint64_t seed_for(const std::string& test_name);

}  // namespace zyfa::test
