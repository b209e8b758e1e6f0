// Launches AITER's fmha_v3_fwd kernels on the emulator the way AITER's own dispatcher does
// (aiter_meta/hsa/gfx950/fmha_v3_fwd/codegen.py, fmha_fwd_v3_dispatcher and launch_kernel).
#include "aiter_fmha_v3.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>

#include <fmt/format.h>
#include <sys/mman.h>

#include "emu/loader/code_object.h"

namespace zyfa::aiter {

std::string KernelChoice::file() const {
  return fmt::format("fwd_hd{}_bf16{}.co", d_qk == 192 ? "192_hd128" : "128", causal ? "_causal" : "");
}

// hipModuleGetFunction name: "_ZN5aiter" + strlen(name) + name + "E" (codegen.py).
std::string KernelChoice::symbol() const {
  const std::string name = fmt::format("fmha_fwd_hd{}_bf16{}", d_qk == 192 ? "192_hd128" : "128", causal ? "_causal" : "");
  return fmt::format("_ZN5aiter{}{}E", name.size(), name);
}

std::string cache_dir() {
  if (const char* d = std::getenv("ZYFA_AITER_DIR"); d && *d) return d;
  return std::string(ZYFA_SOURCE_DIR) + "/.cache/aiter";
}

std::vector<uint8_t> read_code_object(const std::string& dir, const KernelChoice& kc, std::string* error) {
  const std::string path = dir + "/fmha_v3_fwd/" + kc.file();
  std::ifstream f(path, std::ios::binary);
  std::vector<uint8_t> image((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (image.empty()) *error = "cannot read " + path;
  return image;
}

void launch_geometry(const KernelChoice& kc, const Problem& p, uint32_t grid[3], uint32_t block[3]) {
  // codegen.py launch_kernel: x = query tiles (halved, rounded up, for causal masks), y = heads,
  // z = batch; one workgroup of 512 (d 128) or 256 (d 192) work-items.
  const int tiles = (p.seqlen + kc.ts_qo() - 1) / kc.ts_qo();
  const int tg_div = kc.causal ? 2 : 1;
  grid[0] = uint32_t((tiles + tg_div - 1) / tg_div);
  grid[1] = uint32_t(p.heads);
  grid[2] = uint32_t(p.batch);
  block[0] = kc.block();
  block[1] = block[2] = 1;
}

namespace {

// AITER's d 192 causal kernel walks the second query tile of its pair backwards over the key
// tiles, and its prefetch of the tile after the last one is then the tile before key 0: the
// buffer soffset (s56 for K, s57 for V) steps to -128 rows. The address is base + soffset +
// voffset with soffset an unsigned 32-bit value (CDNA4 ISA, buffer addressing), and soffset
// is outside the range check, so the read lands 4 GiB - 128 rows past the tensor's start. On
// a GPU that is some other allocation and the data are never used. Here those rows are a
// mapping of zeros, registered as a readable buffer for the call.
class WrappedPrefetch {
 public:
  WrappedPrefetch(const void* tensor, uint64_t tile_bytes) {
    const uint64_t page = 4096;
    const uint64_t at = (reinterpret_cast<uint64_t>(tensor) + (uint64_t(1) << 32) - tile_bytes) & ~(page - 1);
    size_ = (tile_bytes + 2 * page) & ~(page - 1);
    void* m = mmap(reinterpret_cast<void*>(at), size_, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (m != MAP_FAILED && reinterpret_cast<uint64_t>(m) == at) base_ = m;
    else if (m != MAP_FAILED) munmap(m, size_);
  }
  ~WrappedPrefetch() {
    if (base_) munmap(base_, size_);
  }
  WrappedPrefetch(const WrappedPrefetch&) = delete;
  WrappedPrefetch& operator=(const WrappedPrefetch&) = delete;
  // The region to register, or nullopt-like (size 0) when the address was taken.
  emu::MemoryRegion region(const char* name) const {
    return {reinterpret_cast<uint64_t>(base_), base_ ? size_ : 0, false, name};
  }
  bool ok() const { return base_ != nullptr; }

 private:
  void* base_ = nullptr;
  uint64_t size_ = 0;
};

}  // namespace

emu::DispatchResult run(const std::string& dir, const KernelChoice& kc, const Problem& p,
                        const emu::DispatchOptions& options) {
  emu::DispatchResult fail;
  const std::vector<uint8_t> image = read_code_object(dir, kc, &fail.error);
  if (image.empty()) return fail;
  const emu::LoadedCodeObject object(image.data(), image.size());

  // Strides in bytes (BF16 elements * 2), bshd contiguous; LSE (b, h, s) floats.
  const uint32_t d_v = 128;
  const uint32_t q_row = uint32_t(p.heads) * kc.d_qk * 2, k_row = uint32_t(p.heads_k) * kc.d_qk * 2;
  const uint32_t v_row = uint32_t(p.heads_k) * d_v * 2, o_row = uint32_t(p.heads) * d_v * 2;
  FmhaFwdV3Args a;
  std::memset(&a, 0, sizeof(a));
  a.ptr_o = p.out;
  a.ptr_q = p.q;
  a.ptr_k = p.k;
  a.ptr_v = p.v;
  a.ptr_lse = p.lse;
  a.scalar = p.softmax_scale > 0 ? p.softmax_scale : 1.0f / std::sqrt(float(kc.d_qk));
  a.s_seq_len = uint32_t(p.seqlen);
  a.s_Seqs = q_row;
  a.s_Ts = uint32_t(kc.ts_qo()) * q_row;
  a.s_Hs = kc.d_qk * 2;
  a.s_Bs = uint32_t(p.seqlen) * q_row;
  a.s_gqa = uint32_t(p.heads / p.heads_k);
  a.s_k_Seqs = k_row;
  a.s_k_Hs = kc.d_qk * 2;
  a.s_k_Bs = uint32_t(p.seqlen) * k_row;
  // codegen.py: 5, lowered by 2 for causal masks when the heads are not a multiple of 8 or the
  // sequence is longer than 16K.
  a.s_opt = kc.causal && (p.heads % 8 != 0 || p.seqlen > 16384) ? 3 : 5;
  a.s_lse = p.lse ? 1 : 0;
  a.s_kv_seq_len = uint32_t(p.seqlen);
  a.s_qk_head_dim = uint32_t(kc.d_qk);
  a.s_v_head_dim = d_v;
  a.s_q_head_num = uint32_t(p.heads);
  a.s_v_Seqs = v_row;
  a.s_v_Hs = d_v * 2;
  a.s_v_Bs = uint32_t(p.seqlen) * v_row;
  a.s_o_Seqs = o_row;
  a.s_o_Hs = d_v * 2;
  a.s_o_Bs = uint32_t(p.seqlen) * o_row;
  a.s_lse_Hs = uint32_t(p.seqlen) * 4;

  emu::Dispatch d;
  d.object = &object;
  d.kernel = kc.symbol();
  launch_geometry(kc, p, d.grid, d.block);
  d.kernarg = &a;
  d.kernarg_size = sizeof(a);
  const uint64_t out_bytes = uint64_t(p.batch) * p.seqlen * o_row;
  d.regions.push_back({reinterpret_cast<uint64_t>(p.q), p.q_bytes, false, "q"});
  d.regions.push_back({reinterpret_cast<uint64_t>(p.k), p.k_bytes, false, "k"});
  d.regions.push_back({reinterpret_cast<uint64_t>(p.v), p.v_bytes, false, "v"});
  d.regions.push_back({reinterpret_cast<uint64_t>(p.out), out_bytes, true, "out"});
  if (p.lse) d.regions.push_back({reinterpret_cast<uint64_t>(p.lse), uint64_t(p.batch) * p.heads * p.seqlen * 4, true, "lse"});
  std::unique_ptr<WrappedPrefetch> k_before, v_before;
  if (kc.d_qk == 192 && kc.causal) {
    k_before = std::make_unique<WrappedPrefetch>(p.k, uint64_t(kc.ts_kv()) * k_row);
    v_before = std::make_unique<WrappedPrefetch>(p.v, uint64_t(kc.ts_kv()) * v_row);
    if (!k_before->ok() || !v_before->ok()) {
      fail.error = "cannot map the rows AITER's d 192 kernel prefetches 4 GiB past K and V (address in use)";
      return fail;
    }
    d.regions.push_back(k_before->region("k, tile before key 0 (unsigned soffset)"));
    d.regions.push_back(v_before->region("v, tile before key 0 (unsigned soffset)"));
  }
  return emu::run_dispatch(d, options);
}

}  // namespace zyfa::aiter
