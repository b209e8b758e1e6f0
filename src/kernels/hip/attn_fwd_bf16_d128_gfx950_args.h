// Work split of the gfx950 BF16 d = 128 ping-pong kernel (attn_fwd_bf16_d128_gfx950.hip). It
// takes the baseline kernels' AttnFwdArgs unchanged; only the tile and workgroup sizes differ,
// and the host builds the job table and the tile divisor with these.
#pragma once

#include "attn_fwd_args.h"

namespace zyfa::kernels::bf16_d128_gfx950 {

// 8 waves, two per SIMD; each owns 32 query rows (one 32x32 block of transposed scores).
inline constexpr int kWaves = 8;
inline constexpr int kWaveRows = 32;
inline constexpr int kTileRows = kWaves * kWaveRows;  // 256 query rows per tile
inline constexpr int kThreads = kWaves * 64;
// K and V stream through LDS in blocks of 64 keys (64 x 128 BF16 = 16 KiB), double-buffered.
inline constexpr int kKeyBlock = 64;
inline constexpr int kRowBytes = 128 * 2;
inline constexpr int kBlockBytes = kKeyBlock * kRowBytes;

}  // namespace zyfa::kernels::bf16_d128_gfx950
