// FP8 attention with the C++ layer: quantize q, k, v with zyfa_fp8_quantize (one power-of-two
// descale per tensor, written where the backend writes), then run FP8 attention with those
// descales read by the kernel, never by the host. Compares with fp64 attention of the
// unquantized inputs, so the error printed includes quantization.
#include <cstdio>

#include "common/example_util.hpp"
#include "zyfa/zyfa.hpp"

int main() {
  constexpr int B = 1, S = 300, H = 4, HK = 1, D = 128;
  std::mt19937_64 rng(7);
  const auto qf = example::gaussian(size_t(B) * S * H * D, 1.0f, rng);
  const auto kf = example::gaussian(size_t(B) * S * HK * D, 1.0f, rng);
  const auto vf = example::gaussian(size_t(B) * S * HK * D, 1.0f, rng);

  try {
    zyfa::Handle handle;
    std::vector<uint8_t> q8(qf.size()), k8(kf.size()), v8(vf.size());
    float descales[3] = {0, 0, 0};
    const std::vector<float>* src[3] = {&qf, &kf, &vf};
    std::vector<uint8_t>* dst[3] = {&q8, &k8, &v8};
    const int heads[3] = {H, HK, HK};
    for (int i = 0; i < 3; ++i) {
      zyfa_quantize_desc_t qd = ZYFA_QUANTIZE_DESC_INIT;
      qd.src = zyfa_tensor_bshd(const_cast<float*>(src[i]->data()), ZYFA_DTYPE_FP32, B, S, heads[i], D);
      qd.dst = zyfa_tensor_bshd(dst[i]->data(), ZYFA_DTYPE_FP8_E4M3, B, S, heads[i], D);
      qd.descale = &descales[i];
      qd.backend = ZYFA_BACKEND_CPU;
      handle.fp8_quantize(qd);
    }

    std::vector<uint16_t> out(qf.size());
    zyfa_fwd_desc_t desc = ZYFA_FWD_DESC_INIT;
    desc.q = zyfa_tensor_bshd(q8.data(), ZYFA_DTYPE_FP8_E4M3, B, S, H, D);
    desc.k = zyfa_tensor_bshd(k8.data(), ZYFA_DTYPE_FP8_E4M3, B, S, HK, D);
    desc.v = zyfa_tensor_bshd(v8.data(), ZYFA_DTYPE_FP8_E4M3, B, S, HK, D);
    desc.out = zyfa_tensor_bshd(out.data(), ZYFA_DTYPE_BF16, B, S, H, D);
    desc.q_descale = zyfa_descale_device(&descales[0]);
    desc.k_descale = zyfa_descale_device(&descales[1]);
    desc.v_descale = zyfa_descale_device(&descales[2]);
    desc.backend = ZYFA_BACKEND_CPU;
    handle.fwd(desc);

    const double err = example::relative_rms(out, example::attention_fp64(qf, kf, vf, B, S, H, HK, D));
    std::printf("FP8 MQA B=%d S=%d H=%d d=%d on cpu: descales q %g k %g v %g; relative RMS error "
                "against fp64 of the unquantized inputs %.3e\n",
                B, S, H, D, descales[0], descales[1], descales[2], err);
    return err < 0.1 ? 0 : 2;
  } catch (const zyfa::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
