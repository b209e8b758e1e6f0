// zyfa-bench: causal prefill attention throughput (and sampled accuracy) of ZYFA, compared in
// the same run with cuDNN's SDPA forward on the cuda backend.
//
// Inputs (--inputs): gaussian (i.i.d., std --input-std, the throughput protocol) or realistic
// (the test suites' REALISTIC recipe, bench_inputs.h: per-channel means, outlier channels,
// RoPE, an attention sink), whose outputs do not vanish with the row length.
//
// Accuracy (--check, sampled_error.h): per-row relative error against fp64 (mean and maximum
// over sampled rows of several heads), the pooled figure beside it, and the LSE error per row
// from one extra call that returns LSE (cuDNN: a second graph that writes its softmax stats).
//
// Protocol (per configuration): warm-up calls (500 by default), then --runs runs of --iters
// calls each timed with CUDA events (host clock on cpu/emu); the kernel order rotates from run
// to run; the reported time is the mean over runs of each run's mean. Before configurations
// with S >= 16K the GPU idles --idle seconds so every kernel starts from similar clocks.
// Throughput = FLOPs / time with the exact causal count (varlen.h): 2 * H * (d_qk + d_v) times
// the visible (query, key) pairs, B * S (S + 1) / 2 at fixed lengths.
//
// --varlen LENGTHS: one varlen batch packed along the rows (ZYFA's cu_seqlens, cuDNN's ragged
// offsets); --chunk LQ:LK: fixed lengths with more keys than queries (bottom-right causal).
// Both also time ZYFA's fixed-length call of the same causal work (batch 1) in the same run.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench_config.h"
#include "config_reference.h"
#include "bench_inputs.h"
#include "quantize_bench.h"
#include "sampled_error.h"
#include "varlen.h"
#include "zyfa/version.h"
#include "zyfa/zyfa.h"
#include "zyfa_build_config.h"

#if ZYFA_BENCH_MODEL
#include "../../tests/aiter/aiter_fmha_v3.h"
#include "model.h"
#include "emu/timing/mi355x.h"
#endif

#if ZYFA_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "cudnn_sdpa.h"
#include "device_fill.h"
#endif

namespace zyfa::bench {
namespace {

struct Options {
  std::string backend = "cuda";
  std::vector<std::string> dtypes = {"bf16", "fp8"};
  std::vector<int64_t> dqk = {128, 192};
  std::vector<int64_t> gqa = {1, 4};
  std::vector<int64_t> seqlens;  // default per backend
  int64_t batch = 1;
  int64_t heads = 0;  // 0: max(32, 262144 / S) on cuda/hip, 2 on cpu/emu
  int warmup = 500, iters = 100, runs = 3;
  double idle_s = 2.0;
  float input_std = 0.1f;  // standard deviation of the Gaussian q, k, v
  InputKind inputs = InputKind::GAUSSIAN;
  bool cudnn = true;
  bool check = false;
  bool lse = false;  // --lse: the timed call (cpu, emu, --model) writes the LSE too
  double max_rel_error = 0;  // --max-rel-error: fail when a checked row's error exceeds it (0: never)
  std::string model;   // "mi355x": predicted times from the timing model (emu backend)
  int model_cus = 32;  // CUs simulated per launch (0: every busy CU; 32: XCD 0's)
  std::string json;
  std::string op = "fwd";  // fwd | quantize
  std::optional<VarlenLengths> varlen;  // --varlen: one packed batch per dtype, d and GQA
  int64_t chunk_q = 0, chunk_k = 0;     // --chunk LQ:LK
};

[[noreturn]] void usage(const char* msg) {
  std::fprintf(stderr,
               "%s\nusage: zyfa-bench [--backend cuda|cpu|emu|hip] [--dtype bf16,fp8] [--d 128,192]\n"
               "  [--gqa 1,4] [--seqlen 2048,4096,...] [--batch B] [--heads H] [--warmup N] [--iters N]\n"
               "  [--runs N] [--idle SECONDS] [--inputs gaussian|realistic] [--input-std X] [--no-cudnn]\n"
               "  [--check] [--lse] [--json FILE] [--op fwd|quantize] [--model mi355x [--model-cus N]]\n"
               "  [--varlen L1,L2,...|random:N:LO:HI:SEED [--varlen-k-extra X]] [--chunk LQ:LK]\n"
               "--varlen: one batch of sequences of these query lengths packed along the rows (cu_seqlens;\n"
               "  cuDNN: ragged offsets), X more keys than queries each (a cached prefix); --heads 32, --d 128 and\n"
               "  --gqa 1 unless given\n"
               "--chunk LQ:LK: LQ queries against LK keys (chunked prefill, bottom-right causal)\n"
               "  both also time ZYFA's fixed-length call (batch 1) of the closest causal work\n"
               "--op quantize: zyfa_fp8_quantize BF16 -> FP8 (plain, rotated, static descale) vs a copy\n"
               "--check: error against fp64 on sampled rows (per-row mean/max, pooled, LSE per row); varlen:\n"
               "  the first, last and longest sequences; --max-rel-error X (implies --check): exit 1 when\n"
               "  a checked row's relative error exceeds X, an output is not finite or ZYFA refused a call\n"
               "--lse: the timed call on cpu/emu (and the predicted one) also writes the LSE\n"
               "--model mi355x (with --backend emu): predicted MI355X kernel times from the timing model\n"
               "  instead of host timings, with AITER's kernels beside ZYFA's when .cache/aiter is present;\n"
               "  --model-cus N: CUs simulated per launch (default 32, every CU of XCD 0; 0 = all; 1 = CU 0 alone,\n"
               "                 quick but not the kernel's time: docs/timing-model.md)\n",
               msg);
  std::exit(2);
}

template <class T>
std::vector<T> parse_list(const std::string& s) {
  std::vector<T> v;
  size_t pos = 0;
  while (pos <= s.size()) {
    const size_t comma = s.find(',', pos);
    const std::string item = s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (!item.empty()) {
      if constexpr (std::is_same_v<T, std::string>) {
        v.push_back(item);
      } else {
        char* end = nullptr;
        const long long x = std::strtoll(item.c_str(), &end, 10);
        if (*end == 'K' || *end == 'k') {
          v.push_back(static_cast<T>(x * 1024));
        } else if (*end != '\0') {
          usage(("not a number: " + item).c_str());
        } else {
          v.push_back(static_cast<T>(x));
        }
      }
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return v;
}

Options parse(int argc, char** argv) {
  Options o;
  std::string varlen_spec;
  int64_t k_extra = 0;
  bool shape_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) usage(("missing value after " + a).c_str());
      return argv[++i];
    };
    if (a == "--backend") o.backend = next();
    else if (a == "--dtype") o.dtypes = parse_list<std::string>(next());
    else if (a == "--d") o.dqk = parse_list<int64_t>(next()), shape_given = true;
    else if (a == "--gqa") o.gqa = parse_list<int64_t>(next()), shape_given = true;
    else if (a == "--seqlen") o.seqlens = parse_list<int64_t>(next());
    else if (a == "--batch") o.batch = std::stoll(next());
    else if (a == "--heads") o.heads = std::stoll(next());
    else if (a == "--warmup") o.warmup = std::stoi(next());
    else if (a == "--iters") o.iters = std::stoi(next());
    else if (a == "--runs") o.runs = std::stoi(next());
    else if (a == "--idle") o.idle_s = std::stod(next());
    else if (a == "--input-std") o.input_std = std::stof(next());
    else if (a == "--inputs") {
      const std::string k = next();
      if (k == "gaussian") o.inputs = InputKind::GAUSSIAN;
      else if (k == "realistic") o.inputs = InputKind::REALISTIC;
      else usage(("--inputs must be gaussian or realistic, not " + k).c_str());
    }
    else if (a == "--no-cudnn") o.cudnn = false;
    else if (a == "--check") o.check = true;
    else if (a == "--lse") o.lse = true;
    else if (a == "--max-rel-error") o.max_rel_error = std::stod(next()), o.check = true;
    else if (a == "--json") o.json = next();
    else if (a == "--op") o.op = next();
    else if (a == "--model") o.model = next();
    else if (a == "--model-cus") o.model_cus = std::stoi(next());
    else if (a == "--varlen") varlen_spec = next();
    else if (a == "--varlen-k-extra") k_extra = std::stoll(next());
    else if (a == "--chunk") {
      std::string err;
      if (!parse_chunk(next(), &o.chunk_q, &o.chunk_k, &err)) usage(err.c_str());
    }
    else if (a == "--help" || a == "-h") usage("");
    else usage(("unknown flag " + a).c_str());
  }
  if (!varlen_spec.empty()) {
    VarlenLengths l;
    std::string err;
    if (!parse_varlen(varlen_spec, k_extra, &l, &err)) usage(err.c_str());
    o.varlen = std::move(l);
    if (o.chunk_q > 0) usage("--varlen and --chunk are separate runs: give one of them");
  } else if (k_extra != 0) {
    usage("--varlen-k-extra needs --varlen");
  }
  if ((o.varlen || o.chunk_q > 0) && !shape_given) {
    o.dqk = {128};  // the serving shape of the varlen and chunked-prefill targets, unless asked
    o.gqa = {1};
  }
  const bool gpu = o.backend == "cuda" || o.backend == "hip" || !o.model.empty();
  if (!o.model.empty() && (o.model != "mi355x" || o.backend != "emu"))
    usage("--model: the only model is mi355x, with --backend emu");
  if (o.model_cus < 0) usage("--model-cus must be >= 0");
#if !ZYFA_BENCH_MODEL
  if (!o.model.empty()) usage("--model: this zyfa-bench was built without the emulator");
#endif
  if (o.seqlens.empty()) {
    o.seqlens = gpu ? std::vector<int64_t>{2048, 4096, 8192, 16384, 32768} : std::vector<int64_t>{128, 256, 512};
  }
  if (o.iters < 1 || o.runs < 1 || o.warmup < 0) usage("--iters and --runs must be >= 1, --warmup >= 0");
  if (!(o.input_std > 0.0f && o.input_std < 1e3f)) usage("--input-std must be in (0, 1000)");
  return o;
}


struct Kernel {
  std::string name;
  std::function<bool()> call;  // one forward on the bench stream
  std::string note;            // e.g. output format
  std::vector<double> run_ms;  // per-run mean time of one call
  SampledError err;            // sampled error vs fp64 (--check); rows == 0 when not measured
  std::string lse_note;        // why the LSE error is missing, if it is
  std::optional<Config> cfg;   // what it ran when not the result's configuration (equal work)
  std::string not_run;         // why it was not timed (a refused call), reported in its row
};

struct Result {
  Config cfg;
  std::string backend;
  std::vector<Kernel> kernels;
};

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0.0 : s / double(v.size());
}

// Times every kernel not refused (not_run empty): warm-up, then runs with a rotating kernel
// order. timer(kernel, n) runs n calls and returns the mean milliseconds per call.
bool time_kernels(std::vector<Kernel>& all, const Options& o,
                  const std::function<double(Kernel&, int)>& timer) {
  std::vector<Kernel*> ks;
  for (Kernel& k : all)
    if (k.not_run.empty()) ks.push_back(&k);
  for (Kernel* k : ks) {
    for (int i = 0; i < o.warmup; ++i) {
      if (!k->call()) return false;
    }
  }
  for (int r = 0; r < o.runs; ++r) {
    for (size_t j = 0; j < ks.size(); ++j) {
      Kernel& k = *ks[(j + r) % ks.size()];
      const double ms = timer(k, o.iters);
      if (ms < 0) return false;
      k.run_ms.push_back(ms);
    }
  }
  return true;
}

const Config& config_of(const Result& r, const Kernel& k) { return k.cfg ? *k.cfg : r.cfg; }

double tflops(const Result& r, const Kernel& k) { return config_of(r, k).flops() / (mean(k.run_ms) * 1e-3) / 1e12; }

void print_result(const Result& r) {
  for (const Kernel& k : r.kernels) {
    const Config& c = config_of(r, k);
    if (!k.not_run.empty()) {
      std::printf("%-34s %-16s not run: %s\n", c.name().c_str(), k.name.c_str(), k.not_run.c_str());
      continue;
    }
    const double ms = mean(k.run_ms);
    double lo = 1e30, hi = 0;
    for (double x : k.run_ms) lo = std::min(lo, x), hi = std::max(hi, x);
    std::printf("%-34s %-16s %9.3f ms  %7.1f TFLOP/s  %.4e FLOP  (runs %.3f..%.3f ms)%s\n", c.name().c_str(),
                k.name.c_str(), ms, tflops(r, k), c.flops(), lo, hi,
                k.note.empty() ? "" : ("  [" + k.note + "]").c_str());
  }
  for (const Kernel& k : r.kernels) {
    const SampledError& e = k.err;
    if (e.rows == 0) continue;
    std::string lse = e.lse_max >= 0 ? fmt::format("lse/row mean {:.3e} max {:.3e} nats", e.lse_mean, e.lse_max)
                                     : "lse: " + (k.lse_note.empty() ? std::string("not measured") : k.lse_note);
    std::printf("%-34s %-16s error vs fp64, %lld rows: rel/row mean %.3e max %.3e (h%lld r%lld)  pooled %.3e  "
                "max_abs %.3e  %s%s\n",
                config_of(r, k).name().c_str(), k.name.c_str(), static_cast<long long>(e.rows), e.row_rel_mean,
                e.row_rel_max, static_cast<long long>(e.worst_head), static_cast<long long>(e.worst_row),
                e.pooled_rel, e.max_abs, lse.c_str(),
                e.nonfinite ? fmt::format("  NONFINITE {}", e.nonfinite).c_str() : "");
  }
  std::fflush(stdout);
  // ZYFA against every other kernel that ran, by TFLOP/s (the time ratio when the work is equal).
  if (r.kernels.empty() || r.kernels[0].name != "zyfa" || r.kernels[0].run_ms.empty()) return;
  const Kernel& z = r.kernels[0];
  for (size_t i = 1; i < r.kernels.size(); ++i) {
    const Kernel& k = r.kernels[i];
    if (k.run_ms.empty()) continue;
    std::printf("%-34s speedup zyfa / %s: %.3fx%s\n", r.cfg.name().c_str(), k.name.c_str(), tflops(r, z) / tflops(r, k),
                k.cfg ? " (TFLOP/s)" : "");
  }
  std::fflush(stdout);
}

std::vector<Config> configs(const Options& o) {
  std::vector<Config> v;
  const bool gpu = o.backend == "cuda" || o.backend == "hip" || !o.model.empty();
  for (const std::string& dt : o.dtypes) {
    for (int64_t d : o.dqk) {
      for (int64_t g : o.gqa) {
        std::vector<int64_t> seqlens = o.seqlens;
        if (o.varlen || o.chunk_q > 0) seqlens = {o.varlen ? 0 : o.chunk_q};
        for (int64_t s : seqlens) {
          Config c;
          c.dtype = dt == "fp8" ? ZYFA_DTYPE_FP8_E4M3 : ZYFA_DTYPE_BF16;
          if (dt != "fp8" && dt != "bf16") usage(("unknown dtype " + dt).c_str());
          c.batch = o.batch;
          c.seqlen = c.seqlen_k = s;
          if (o.chunk_q > 0) c.seqlen_k = o.chunk_k;
          if (o.varlen) {
            c.batch = 1;
            c.lens_q = o.varlen->q;
            c.lens_k = o.varlen->k;
            c.seqlen = c.seqlen_k = 0;
            for (size_t i = 0; i < c.lens_q.size(); ++i) c.seqlen += c.lens_q[i], c.seqlen_k += c.lens_k[i];
          }
          c.equal_work = o.varlen || o.chunk_q > 0;
          const int64_t default_heads = o.varlen ? 32 : gpu ? std::max<int64_t>(32, 262144 / s) : 2 * g;
          c.heads = o.heads > 0 ? o.heads : default_heads;
          c.heads_k = c.heads / g;
          if (c.heads_k < 1 || c.heads % g != 0) usage("heads must be a multiple of the GQA ratio");
          c.d_qk = d;
          c.d_v = 128;
          v.push_back(c);
        }
      }
    }
  }
  return v;
}

// Seed of tensor t (0 q, 1 k, 2 v) of a configuration's inputs.
uint64_t tensor_seed(const Config& c, int t) {
  return 0x9e3779b97f4a7c15ull * (t + 1) ^ static_cast<uint64_t>(c.seqlen * 131 + c.heads);
}

// Host statistics of the realistic inputs of a configuration.
RealisticStats config_stats(const Config& c) {
  return realistic_stats(c.heads_k, c.d_qk, c.d_v, 0x5eed ^ static_cast<uint64_t>(c.seqlen * 131 + c.heads));
}

// Tensor t of the realistic recipe; scale, mean and sink in the memory the fill reads.
RealisticTensor realistic_tensor(const Config& c, int t, const float* scale, const float* mean, const float* sink) {
  RealisticTensor r;
  r.scale = scale;
  r.mean = mean;
  r.sink = t == 1 ? sink : nullptr;
  r.seqlen = t == 0 ? c.seqlen : c.seqlen_k;  // varlen: RoPE positions are packed rows
  r.heads = t == 0 ? c.heads : c.heads_k;
  r.group = t == 0 ? c.heads / c.heads_k : 1;
  r.d = t == 2 ? c.d_v : c.d_qk;
  r.rope_n = t == 2 ? 0 : realistic_rope_n(c.d_qk);
  r.seed = tensor_seed(c, t);
  return r;
}

// Pointers to tensor t's statistics in st: {scale, mean}.
std::pair<const float*, const float*> stats_of(const RealisticStats& st, int t) {
  if (t == 0) return {st.q_scale.data(), st.q_mean.data()};
  if (t == 1) return {st.k_scale.data(), st.k_mean.data()};
  return {st.v_scale.data(), st.v_mean.data()};
}

// Copies each kernel's sampled error into it: out for the timed output, then lse_call() (one
// more call that writes LSE, or null) for the LSE error.
void check_kernel(const ConfigReference& ref, Kernel* k, const void* out, bool out_fp8,
                  const std::function<const float*()>& lse_call) {
  k->err = ref.compare(out, out_fp8, nullptr);
  const float* lse = lse_call ? lse_call() : nullptr;
  if (lse == nullptr) return;
  const SampledError with_lse = ref.compare(out, out_fp8, lse);
  k->err.lse_mean = with_lse.lse_mean;
  k->err.lse_max = with_lse.lse_max;
  k->err.nonfinite = with_lse.nonfinite;
}

// ---------------------------------------------------------------- host backends (cpu, emu)

uint16_t to_bf16(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return static_cast<uint16_t>((b + 0x7FFF + ((b >> 16) & 1)) >> 16);
}

#if ZYFA_BENCH_MODEL
// One line of where the predicted cycles go.
std::string model_note(const emu::timing::Prediction& p) {
  const double cu = double(p.cycles) * std::max(p.cus_simulated, 1), simd = 4 * cu;
  const double wave = std::max(1.0, double(p.stats.wave_cycles));
  namespace t = emu::timing;
  // With several CUs simulated, the slowest (the kernel's time) and how much faster the
  // fastest one was: the work of the CUs differs where the job table dealt them different tiles.
  const std::string spread =
      p.cus_simulated > 1 ? fmt::format(" (slowest CU {}; the fastest {:.1f}% fewer cycles)", p.slowest_cu,
                                        100.0 * (1.0 - double(p.fastest_cu_cycles) / double(std::max<uint64_t>(p.cycles, 1))))
                          : std::string();
  return fmt::format("predicted mi355x ({} cycles, sustained clock {} GHz), {} of {} CUs simulated{}: matrix pipe {:.1f}%, VALU {:.1f}%, LDS {:.1f}%, "
                     "HBM share {:.1f}%; waves waiting: lgkmcnt {:.1f}%, vmcnt {:.1f}%, barrier {:.1f}%",
                     p.cycles, t::kSustainedClockGhz, p.cus_simulated, p.cus_busy, spread, 100.0 * double(p.stats.matrix_busy) / simd,
                     100.0 * double(p.stats.valu_busy) / simd, 100.0 * double(p.stats.lds_busy) / cu,
                     100.0 * p.stats.hbm_bytes / t::hbm_bytes_per_clk_per_cu(p.cus_busy) / cu,
                     100.0 * double(p.stats.stall[t::kStallWaitLgkm]) / wave,
                     100.0 * double(p.stats.stall[t::kStallWaitVm]) / wave,
                     100.0 * double(p.stats.stall[t::kStallBarrier]) / wave);
}

// --model: ZYFA's launches of one zyfa_fwd call predicted, then AITER's kernel for the same
// configuration (BF16 only: AITER ships no FP8 fwd_v3 kernel for gfx950 in this wheel).
// A refused call (a view the gfx950 kernels cannot take) gets a "not run" row named
// `name`; the equal-work call of a varlen batch or chunk is predicted as "zyfa-equal", a varlen
// batch's equal-length batch as "zyfa-equal-batch".
bool model_host(zyfa_handle_t h, const zyfa_fwd_desc_t& d, const Config& c, const Options& o, Result* res,
                const char* name = "zyfa") {
  std::vector<emu::timing::Prediction> launches;
  {
    ModelRecorder rec(o.model_cus);
    const zyfa_status_t st = zyfa_fwd(h, &d);
    if (st != ZYFA_STATUS_SUCCESS) {
      res->kernels.push_back(Kernel{name});
      res->kernels.back().not_run = fmt::format("{}: {}", zyfa_status_string(st), zyfa_last_error());
      return true;
    }
    launches = rec.take();
  }
  if (launches.empty()) {
    std::fprintf(stderr, "%s: no launch was predicted\n", c.name().c_str());
    return false;
  }
  double us = 0;
  for (const auto& p : launches) us += p.kernel_us;
  // A call of several launches (a varlen batch's job-table builder, then the attention
  // kernel) says what each took; the breakdown is the last one's.
  std::string split;
  if (launches.size() > 1) {
    split = "launches:";
    for (const auto& p : launches) split += fmt::format(" {} {:.4f} ms", p.kernel, p.kernel_us * 1e-3);
    split += "; ";
  }
  res->kernels.push_back(Kernel{name, nullptr, split + model_note(launches.back()), {us * 1e-3}});
  const std::string dir = aiter::cache_dir();
  // AITER's model problem is one fixed length: not for varlen batches or chunks (nor their
  // equal-work calls, whose row is ZYFA's alone).
  if (c.dtype == ZYFA_DTYPE_BF16 && !c.varlen() && c.seqlen_k == c.seqlen && !c.equal_work &&
      std::string(name) == "zyfa" && have_aiter_kernel(dir, c.d_qk)) {
    ModelProblem m;
    m.batch = c.batch;
    m.heads = c.heads;
    m.heads_k = c.heads_k;
    m.seqlen = c.seqlen;
    m.d_qk = c.d_qk;
    m.input_std = o.input_std;
    m.cus = o.model_cus;
    const emu::timing::Prediction p = predict_aiter(dir, m);
    if (!p.ok) {
      // ZYFA's row stays; AITER's kernel did not run to the end on the emulator.
      std::fprintf(stderr, "%s: aiter not predicted: %s\n", c.name().c_str(), p.error.c_str());
      return true;
    }
    res->kernels.push_back(Kernel{"aiter", nullptr, model_note(p), {p.kernel_us * 1e-3}});
  }
  return true;
}
#endif

// ZYFA's kernel `name` over descriptor *d (which must outlive the timing). A call the library
// refuses (say NOT_SUPPORTED: a view the backend's kernels cannot take) leaves the
// kernel untimed with the status and message in its row, and the other kernels run.
Kernel zyfa_kernel(zyfa_handle_t h, const zyfa_fwd_desc_t* d, const std::string& name) {
  Kernel k{name, [h, d]() {
             if (zyfa_fwd(h, d) == ZYFA_STATUS_SUCCESS) return true;
             std::fprintf(stderr, "zyfa_fwd: %s\n", zyfa_last_error());
             return false;
           }};
  zyfa_status_t st = zyfa_fwd_prepare(h, d);
  if (st == ZYFA_STATUS_SUCCESS) st = zyfa_fwd(h, d);
  if (st != ZYFA_STATUS_SUCCESS) k.not_run = fmt::format("{}: {}", zyfa_status_string(st), zyfa_last_error());
  return k;
}

// The inputs, output and descriptor of one ZYFA call on a host-memory backend (cpu, emu).
struct HostCall {
  std::vector<uint8_t> q, k, v;
  std::vector<uint16_t> out;
  std::vector<float> lse;  // with --lse
  std::vector<int32_t> cu_q, cu_k;
  float descale[3] = {1, 1, 1};
  zyfa_fwd_desc_t d = ZYFA_FWD_DESC_INIT;
};

bool prepare_host(zyfa_handle_t h, zyfa_backend_t backend, const Config& c, const Options& o, HostCall* call) {
  std::mt19937_64 rng(0x5eed ^ static_cast<uint64_t>(c.seqlen));
  std::normal_distribution<float> dist(0.0f, o.input_std);
  auto gaussian = [&](int64_t n) {
    std::vector<float> v(n);
    for (auto& x : v) x = dist(rng);
    return v;
  };
  const int64_t nq = c.batch * c.seqlen * c.heads * c.d_qk, nk = c.batch * c.seqlen_k * c.heads_k * c.d_qk,
                nv = c.batch * c.seqlen_k * c.heads_k * c.d_v;
  const bool fp8 = c.dtype == ZYFA_DTYPE_FP8_E4M3;
  call->q.resize(nq * (fp8 ? 1 : 2));
  call->k.resize(nk * (fp8 ? 1 : 2));
  call->v.resize(nv * (fp8 ? 1 : 2));
  std::vector<uint8_t>* bufs[3] = {&call->q, &call->k, &call->v};
  const int64_t counts[3] = {nq, nk, nv};
  const int64_t rows[3] = {c.seqlen, c.seqlen_k, c.seqlen_k};
  const int64_t heads[3] = {c.heads, c.heads_k, c.heads_k};
  const int64_t dims[3] = {c.d_qk, c.d_qk, c.d_v};
  const RealisticStats st = config_stats(c);
  for (int t = 0; t < 3; ++t) {
    std::vector<float> x;
    if (o.inputs == InputKind::GAUSSIAN) {
      x = gaussian(counts[t]);
    } else {
      const auto [scale, mean] = stats_of(st, t);
      const RealisticTensor rt = realistic_tensor(c, t, scale, mean, st.k_sink.data());
      x.resize(counts[t]);
      for (int64_t i = 0; i < counts[t]; ++i) x[i] = realistic_at(rt, i);
    }
    if (!fp8) {
      for (int64_t i = 0; i < counts[t]; ++i) {
        const uint16_t b = to_bf16(x[i]);
        std::memcpy(bufs[t]->data() + 2 * i, &b, 2);
      }
      continue;
    }
    zyfa_quantize_desc_t qd = ZYFA_QUANTIZE_DESC_INIT;
    qd.src = zyfa_tensor_bshd(x.data(), ZYFA_DTYPE_FP32, c.batch, rows[t], heads[t], dims[t]);
    qd.dst = zyfa_tensor_bshd(bufs[t]->data(), ZYFA_DTYPE_FP8_E4M3, c.batch, rows[t], heads[t], dims[t]);
    qd.descale = &call->descale[t];
    qd.backend = backend;
    if (zyfa_fp8_quantize(h, &qd) != ZYFA_STATUS_SUCCESS) {
      std::fprintf(stderr, "%s: quantize: %s\n", c.name().c_str(), zyfa_last_error());
      return false;
    }
  }
  call->out.resize(c.batch * c.seqlen * c.heads * c.d_v);
  if (c.varlen()) {
    call->cu_q = prefix_sums(c.lens_q);
    call->cu_k = prefix_sums(c.lens_k);
  }
  call->d = fwd_desc(c, call->q.data(), call->k.data(), call->v.data(), call->out.data(), call->cu_q.data(),
                     call->cu_k.data(), backend);
  if (o.lse) {
    call->lse.resize(c.batch * c.heads * c.seqlen);
    call->d.lse = call->lse.data();
  }
  if (fp8) {
    call->d.q_descale = zyfa_descale_host(call->descale[0]);
    call->d.k_descale = zyfa_descale_host(call->descale[1]);
    call->d.v_descale = zyfa_descale_host(call->descale[2]);
  }
  return true;
}

bool bench_host(zyfa_handle_t h, zyfa_backend_t backend, const Config& c, const Options& o, Result* res) {
  HostCall main;
  if (!prepare_host(h, backend, c, o, &main)) return false;
  const zyfa_fwd_desc_t& d = main.d;
  HostCall equal, batch;
  const Config ec = equal_work_config(c);
  if (c.equal_work && !prepare_host(h, backend, ec, o, &equal)) return false;
  const Config bc = c.varlen() ? equal_batch_config(c) : Config{};
  if (c.varlen() && !prepare_host(h, backend, bc, o, &batch)) return false;
#if ZYFA_BENCH_MODEL
  if (!o.model.empty()) {
    if (!model_host(h, d, c, o, res)) return false;
    if (!c.equal_work) return true;
    if (!model_host(h, equal.d, ec, o, res, "zyfa-equal")) return false;
    res->kernels.back().cfg = ec;
    if (!c.varlen()) return true;
    if (!model_host(h, batch.d, bc, o, res, "zyfa-equal-batch")) return false;
    res->kernels.back().cfg = bc;
    return true;
  }
#endif
  res->kernels.push_back(zyfa_kernel(h, &d, "zyfa"));
  if (c.equal_work) {
    res->kernels.push_back(zyfa_kernel(h, &equal.d, "zyfa-equal"));
    res->kernels.back().cfg = ec;
  }
  if (c.varlen()) {
    res->kernels.push_back(zyfa_kernel(h, &batch.d, "zyfa-equal-batch"));
    res->kernels.back().cfg = bc;
  }
  Options ho = o;
  ho.warmup = std::min(o.warmup, 1);
  const bool ok = time_kernels(res->kernels, ho, [](Kernel& k, int n) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i)
      if (!k.call()) return -1.0;
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / n;
  });
  if (!ok || !o.check) return ok;
  Kernel& zk = res->kernels[0];
  if (!zk.not_run.empty()) return true;
  const float* descale = main.descale;
  const bool fp8 = c.dtype == ZYFA_DTYPE_FP8_E4M3;
  const ConfigReference ref(c, SampledInputs{main.q.data(), main.k.data(), main.v.data(),
                                           {descale[0], descale[1], descale[2]}, fp8, c.batch, c.seqlen, c.heads,
                                           c.heads_k, c.d_qk, c.d_v, host_read_rows()});
  // LSE from one more call into separate buffers, NaN-filled so an unwritten value shows.
  std::vector<uint16_t> out_lse(main.out.size());
  std::vector<float> lse(c.batch * c.heads * c.seqlen, NAN);
  check_kernel(ref, &zk, main.out.data(), false, [&]() -> const float* {
    zyfa_fwd_desc_t dl = d;
    dl.out.data = out_lse.data();
    dl.lse = lse.data();
    if (zyfa_fwd(h, &dl) == ZYFA_STATUS_SUCCESS) return lse.data();
    zk.lse_note = std::string("zyfa_fwd with lse: ") + zyfa_last_error();
    return nullptr;
  });
  return true;
}

#if ZYFA_HAVE_CUDA
// ---------------------------------------------------------------- cuda backend

#define BENCH_CUDA(expr)                                                                   \
  do {                                                                                     \
    const cudaError_t e_ = (expr);                                                         \
    if (e_ != cudaSuccess) {                                                               \
      std::fprintf(stderr, "%s: %s\n", #expr, cudaGetErrorString(e_));                    \
      return false;                                                                        \
    }                                                                                      \
  } while (0)

struct DeviceMem {
  std::vector<void*> ptrs;
  ~DeviceMem() {
    for (void* p : ptrs) cudaFree(p);
  }
  void* alloc(size_t bytes) {
    void* p = nullptr;
    if (cudaMalloc(&p, bytes) != cudaSuccess) return nullptr;
    ptrs.push_back(p);
    return p;
  }
};

ReadRows cuda_read_rows() {
  return [](void* dst, const void* src, size_t width, size_t pitch, int64_t rows) {
    return cudaMemcpy2D(dst, width, src, pitch == 0 ? width : pitch, width, rows, cudaMemcpyDeviceToHost) ==
           cudaSuccess;
  };
}

// --check on cuda: the timed outputs of ZYFA (out) and cuDNN (out_ref) against the fp64
// reference of the sampled rows; LSE from one more call of each into scratch buffers (cuDNN:
// a second graph that also writes its softmax stats, run once).
bool check_cuda(zyfa_handle_t h, const Config& c, const zyfa_fwd_desc_t& d, bool with_cudnn, bool cudnn_fp8_out,
                void* out, void* out_ref, DeviceMem& mem, cudaStream_t stream, Result* res) {
  const bool fp8 = c.dtype == ZYFA_DTYPE_FP8_E4M3;
  float ds[3] = {1, 1, 1};
  if (fp8) {
    // The descales sit in the one device array the bench allocated: q, k, v in order.
    BENCH_CUDA(cudaMemcpy(ds, d.q_descale.ptr, sizeof ds, cudaMemcpyDeviceToHost));
  }
  const ConfigReference ref(c, SampledInputs{d.q.data, d.k.data, d.v.data, {ds[0], ds[1], ds[2]}, fp8, c.batch,
                                           c.seqlen, c.heads, c.heads_k, c.d_qk, c.d_v, cuda_read_rows()});
  if (!ref.ok()) {
    std::fprintf(stderr, "%s: reading the inputs back failed\n", c.name().c_str());
    return false;
  }
  const size_t n_lse = static_cast<size_t>(c.batch * c.heads * c.seqlen);
  void* out_aux = mem.alloc(static_cast<size_t>(c.batch * c.seqlen * c.heads * c.d_v) * 2);
  float* lse = static_cast<float*>(mem.alloc(n_lse * sizeof(float)));
  // Runs one call that writes `lse` (NaN-filled first, so an unwritten value shows) and returns
  // it (compare() reads it back through the inputs' reader), or null with the reason in *note.
  auto lse_of = [&](const std::function<std::string()>& call, std::string* note) -> const float* {
    if (!out_aux || !lse) {
      *note = "no memory for the LSE call";
      return nullptr;
    }
    std::string why;
    if (cudaMemsetAsync(lse, 0xFF, n_lse * sizeof(float), stream) != cudaSuccess) why = "cudaMemset failed";
    if (why.empty()) why = call();
    if (why.empty() && cudaStreamSynchronize(stream) != cudaSuccess) why = cudaGetErrorString(cudaGetLastError());
    *note = why;
    return why.empty() ? lse : nullptr;
  };
  for (Kernel& kr : res->kernels) {
    if (!kr.not_run.empty()) continue;
    if (kr.name == "zyfa") {
      check_kernel(ref, &kr, out, false, [&]() {
        return lse_of(
            [&]() -> std::string {
              zyfa_fwd_desc_t dl = d;
              dl.out.data = out_aux;
              dl.lse = lse;
              return zyfa_fwd(h, &dl) == ZYFA_STATUS_SUCCESS ? "" : std::string("zyfa_fwd: ") + zyfa_last_error();
            },
            &kr.lse_note);
      });
    } else if (kr.name == "cudnn" && with_cudnn) {
      check_kernel(ref, &kr, out_ref, cudnn_fp8_out, [&]() -> const float* {
        SdpaShape s{fp8, c.batch, c.seqlen, c.heads, c.heads_k, c.d_qk, c.d_v, 0.0f, true};
        s.seqlen_k = c.seqlen_k;
        s.ragged_q = c.lens_q;
        s.ragged_k = c.lens_k;
        SdpaBuffers b{d.q.data, d.k.data, d.v.data, out_aux, d.q_descale.ptr, d.k_descale.ptr,
                      d.v_descale.ptr, lse};
        std::string why;
        std::unique_ptr<CudnnSdpa> with_stats = make_cudnn_sdpa(s, b, &why);
        if (!with_stats) {
          kr.lse_note = "cuDNN graph with stats: " + why;
          return nullptr;
        }
        return lse_of([&]() { return with_stats->run(stream) ? std::string() : with_stats->error(); }, &kr.lse_note);
      });
    }
  }
  return true;
}

// The device buffers and descriptor of one ZYFA call on the cuda backend (in `mem`).
struct CudaCall {
  void *q = nullptr, *k = nullptr, *v = nullptr, *out = nullptr;
  float* descales = nullptr;  // q, k, v
  zyfa_fwd_desc_t d = ZYFA_FWD_DESC_INIT;
};

bool prepare_cuda(zyfa_handle_t h, const Config& c, const Options& o, DeviceMem& mem, cudaStream_t stream,
                  CudaCall* call) {
  const bool fp8 = c.dtype == ZYFA_DTYPE_FP8_E4M3;
  const size_t elem = fp8 ? 1 : 2;
  const int64_t nq = c.batch * c.seqlen * c.heads * c.d_qk, nk = c.batch * c.seqlen_k * c.heads_k * c.d_qk,
                nv = c.batch * c.seqlen_k * c.heads_k * c.d_v, no = c.batch * c.seqlen * c.heads * c.d_v;
  void* q = call->q = mem.alloc(nq * elem);
  void* k = call->k = mem.alloc(nk * elem);
  void* v = call->v = mem.alloc(nv * elem);
  void* out = call->out = mem.alloc(no * 2);
  float* descales = call->descales = static_cast<float*>(mem.alloc(3 * sizeof(float)));
  if (!q || !k || !v || !out || !descales) {
    std::fprintf(stderr, "%s: device allocation failed\n", c.name().c_str());
    return false;
  }
  // NaN (0xFFFF) until written: an element no call writes shows in --check as non-finite.
  BENCH_CUDA(cudaMemset(out, 0xFF, no * 2));
  // Gaussian (std 0.1 unless --input-std) or realistic inputs, filled on the device; FP8
  // through zyfa_fp8_quantize (power-of-two descales on device).
  void* bufs[3] = {q, k, v};
  const int64_t counts[3] = {nq, nk, nv};
  const int64_t rows[3] = {c.seqlen, c.seqlen_k, c.seqlen_k};
  const int64_t heads[3] = {c.heads, c.heads_k, c.heads_k};
  const int64_t dims[3] = {c.d_qk, c.d_qk, c.d_v};
  void* staging = fp8 ? mem.alloc(std::max({nq, nk, nv}) * 2) : nullptr;
  const RealisticStats st = config_stats(c);
  float* dev_sink = nullptr;
  if (o.inputs == InputKind::REALISTIC) {
    dev_sink = static_cast<float*>(mem.alloc(st.k_sink.size() * sizeof(float)));
    if (!dev_sink) return false;
    BENCH_CUDA(cudaMemcpy(dev_sink, st.k_sink.data(), st.k_sink.size() * sizeof(float), cudaMemcpyHostToDevice));
  }
  for (int t = 0; t < 3; ++t) {
    uint16_t* dst = static_cast<uint16_t*>(fp8 ? staging : bufs[t]);
    if (o.inputs == InputKind::GAUSSIAN) {
      BENCH_CUDA(fill_gaussian_bf16(dst, counts[t], tensor_seed(c, t), o.input_std, stream));
    } else {
      const auto [scale, mean] = stats_of(st, t);
      const size_t n = static_cast<size_t>(c.heads_k * dims[t]);  // per KV head, shared by its q heads
      float* dev = static_cast<float*>(mem.alloc(2 * n * sizeof(float)));
      if (!dev) return false;
      BENCH_CUDA(cudaMemcpy(dev, scale, n * sizeof(float), cudaMemcpyHostToDevice));
      BENCH_CUDA(cudaMemcpy(dev + n, mean, n * sizeof(float), cudaMemcpyHostToDevice));
      BENCH_CUDA(fill_realistic_bf16(dst, counts[t], realistic_tensor(c, t, dev, dev + n, dev_sink), stream));
    }
    if (!fp8) continue;
    zyfa_quantize_desc_t qd = ZYFA_QUANTIZE_DESC_INIT;
    qd.src = zyfa_tensor_bshd(staging, ZYFA_DTYPE_BF16, c.batch, rows[t], heads[t], dims[t]);
    qd.dst = zyfa_tensor_bshd(bufs[t], ZYFA_DTYPE_FP8_E4M3, c.batch, rows[t], heads[t], dims[t]);
    qd.descale = descales + t;
    qd.stream = stream;
    qd.backend = ZYFA_BACKEND_CUDA;
    if (zyfa_fp8_quantize(h, &qd) != ZYFA_STATUS_SUCCESS) {
      std::fprintf(stderr, "%s: quantize: %s\n", c.name().c_str(), zyfa_last_error());
      return false;
    }
  }
  // Varlen: the prefix sums in device memory, as an engine holds them.
  int32_t *cu_q = nullptr, *cu_k = nullptr;
  if (c.varlen()) {
    const std::vector<int32_t> hq = prefix_sums(c.lens_q), hk = prefix_sums(c.lens_k);
    cu_q = static_cast<int32_t*>(mem.alloc(hq.size() * sizeof(int32_t)));
    cu_k = static_cast<int32_t*>(mem.alloc(hk.size() * sizeof(int32_t)));
    if (!cu_q || !cu_k) return false;
    BENCH_CUDA(cudaMemcpy(cu_q, hq.data(), hq.size() * sizeof(int32_t), cudaMemcpyHostToDevice));
    BENCH_CUDA(cudaMemcpy(cu_k, hk.data(), hk.size() * sizeof(int32_t), cudaMemcpyHostToDevice));
  }
  BENCH_CUDA(cudaStreamSynchronize(stream));
  call->d = fwd_desc(c, q, k, v, out, cu_q, cu_k, ZYFA_BACKEND_CUDA);
  if (fp8) {
    call->d.q_descale = zyfa_descale_device(descales);
    call->d.k_descale = zyfa_descale_device(descales + 1);
    call->d.v_descale = zyfa_descale_device(descales + 2);
  }
  call->d.stream = stream;
  return true;
}

// cuDNN's SDPA of c over the same inputs as ZYFA's call (ragged offsets for a varlen batch),
// writing out_ref; null (with the reason in the kernel's row) where cuDNN refuses it.
std::unique_ptr<CudnnSdpa> add_cudnn(const Config& c, const CudaCall& call, void* out_ref, cudaStream_t stream,
                                     Result* res) {
  SdpaShape s{c.dtype == ZYFA_DTYPE_FP8_E4M3, c.batch, c.seqlen, c.heads, c.heads_k, c.d_qk, c.d_v, 0.0f};
  s.seqlen_k = c.seqlen_k;
  s.ragged_q = c.lens_q;
  s.ragged_k = c.lens_k;
  SdpaBuffers b{call.q, call.k, call.v, out_ref, call.descales, call.descales + 1, call.descales + 2};
  std::string why;
  std::unique_ptr<CudnnSdpa> cudnn = make_cudnn_sdpa(s, b, &why);
  Kernel k{"cudnn"};
  if (cudnn) {
    CudnnSdpa* p = cudnn.get();
    k.call = [p, stream]() {
      if (p->run(stream)) return true;
      std::fprintf(stderr, "cudnn: %s\n", p->error().c_str());
      return false;
    };
    k.note = p->note();
  } else {
    k.not_run = why;
  }
  res->kernels.push_back(std::move(k));
  return cudnn;
}

bool bench_cuda(zyfa_handle_t h, const Config& c, const Options& o, cudaStream_t stream, Result* res) {
  DeviceMem mem;
  CudaCall main, equal, batch;
  if (!prepare_cuda(h, c, o, mem, stream, &main)) return false;
  void* out_ref = mem.alloc(static_cast<size_t>(c.batch * c.seqlen * c.heads * c.d_v) * 2);
  if (!out_ref) {
    std::fprintf(stderr, "%s: device allocation failed\n", c.name().c_str());
    return false;
  }
  BENCH_CUDA(cudaMemset(out_ref, 0xFF, static_cast<size_t>(c.batch * c.seqlen * c.heads * c.d_v) * 2));
  const zyfa_fwd_desc_t& d = main.d;
  res->kernels.push_back(zyfa_kernel(h, &d, "zyfa"));
  std::unique_ptr<CudnnSdpa> cudnn;
  if (o.cudnn) cudnn = add_cudnn(c, main, out_ref, stream, res);
  if (c.equal_work) {
    const Config ec = equal_work_config(c);
    if (!prepare_cuda(h, ec, o, mem, stream, &equal)) return false;
    res->kernels.push_back(zyfa_kernel(h, &equal.d, "zyfa-equal"));
    res->kernels.back().cfg = ec;
  }
  if (c.varlen()) {
    const Config bc = equal_batch_config(c);
    if (!prepare_cuda(h, bc, o, mem, stream, &batch)) return false;
    res->kernels.push_back(zyfa_kernel(h, &batch.d, "zyfa-equal-batch"));
    res->kernels.back().cfg = bc;
  }
  BENCH_CUDA(cudaStreamSynchronize(stream));
  cudaEvent_t e0, e1;
  BENCH_CUDA(cudaEventCreate(&e0));
  BENCH_CUDA(cudaEventCreate(&e1));
  const bool ok = time_kernels(res->kernels, o, [&](Kernel& kr, int n) {
    cudaEventRecord(e0, stream);
    for (int i = 0; i < n; ++i)
      if (!kr.call()) return -1.0;
    cudaEventRecord(e1, stream);
    if (cudaEventSynchronize(e1) != cudaSuccess) return -1.0;
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    return double(ms) / n;
  });
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  if (!ok) return false;
  BENCH_CUDA(cudaStreamSynchronize(stream));
  BENCH_CUDA(cudaGetLastError());
  if (!o.check) return true;
  return check_cuda(h, c, d, cudnn != nullptr, cudnn && cudnn->out_is_fp8(), main.out, out_ref, mem, stream, res);
}
#endif

// --max-rel-error: every kernel ran, and each checked one within max_rel per row, all finite.
bool within_error(const Result& r, double max_rel) {
  bool ok = true;
  for (const Kernel& k : r.kernels) {
    const SampledError& e = k.err;
    std::string why;
    if (k.name == "zyfa" && !k.not_run.empty()) why = "not run";
    else if (k.not_run.empty() && e.rows > 0 && !(e.row_rel_max <= max_rel && e.nonfinite == 0))
      why = fmt::format("row error {:.3e} (limit {:.3e}), {} non-finite", e.row_rel_max, max_rel, e.nonfinite);
    else if (k.name == "zyfa" && e.rows == 0) why = "not checked";
    if (why.empty()) continue;
    std::printf("%-34s %-16s FAILED --max-rel-error: %s\n", config_of(r, k).name().c_str(), k.name.c_str(), why.c_str());
    ok = false;
  }
  return ok;
}

// A measured figure, or null (not measured, or infinite: a NaN/inf output).
std::string json_num(double x) { return x >= 0 && std::isfinite(x) ? fmt::format("{:.4e}", x) : "null"; }

// s as the body of a JSON string (the refusal messages of libraries may hold quotes).
std::string json_escape(const std::string& s) {
  std::string e;
  for (char ch : s) {
    if (ch == '"' || ch == '\\') e += '\\';
    if (static_cast<unsigned char>(ch) < 0x20) ch = ' ';
    e += ch;
  }
  return e;
}

// The --check fields of one kernel (empty without --check).
std::string error_json(const Kernel& k) {
  const SampledError& e = k.err;
  if (e.rows == 0) return "";
  return fmt::format(
      "\"sampled_rows\": {}, \"row_rel_mean\": {}, \"row_rel_max\": {}, \"row_rel_max_at\": [{}, {}], "
      "\"pooled_rel\": {}, \"max_abs\": {}, \"lse_row_mean\": {}, \"lse_row_max\": {}, \"nonfinite\": {}, ",
      e.rows, json_num(e.row_rel_mean), json_num(e.row_rel_max), e.worst_head, e.worst_row, json_num(e.pooled_rel),
      json_num(e.max_abs), json_num(e.lse_mean), json_num(e.lse_max), e.nonfinite);
}

void write_json(const Options& o, const std::vector<Result>& results, const std::string& device,
                const std::string& cudnn_ver) {
  std::FILE* f = std::fopen(o.json.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "cannot write %s\n", o.json.c_str());
    return;
  }
  fmt::print(f, "{{\n  \"device\": \"{}\",\n  \"cudnn\": \"{}\",\n  \"zyfa\": \"{}\",\n", device, cudnn_ver,
             ZYFA_VERSION_STRING);
  fmt::print(f, "  \"protocol\": {{\"warmup\": {}, \"iters\": {}, \"runs\": {}, \"idle_s\": {}, ", o.warmup,
             o.iters, o.runs, o.idle_s);
  fmt::print(f, "\"inputs\": \"{}\", \"input_std\": {}, \"check\": {}}},\n", to_string(o.inputs), o.input_std,
             o.check ? "\"per-row relative error ||o_r - ref_r|| / ||ref_r|| over sampled rows (mean, max; "
                       "max_at = [head, row]); pooled_rel = ||o - ref|| / ||ref|| over the same rows together; "
                       "LSE error per row in nats\""
                     : "null");
  fmt::print(f, "  \"results\": [\n");
  bool first = true;
  for (const Result& r : results) {
    for (const Kernel& k : r.kernels) {
      const Config& c = config_of(r, k);
      const bool ran = k.not_run.empty();
      std::string runs, lens;
      for (double x : k.run_ms) runs += fmt::format("{}{:.5f}", runs.empty() ? "" : ", ", x);
      if (c.varlen()) {
        for (size_t i = 0; i < c.lens_q.size(); ++i)
          lens += fmt::format("{}[{}, {}]", i ? ", " : "", c.lens_q[i], c.lens_k[i]);
        lens = "\"varlen_lengths\": [" + lens + "], ";
      }
      if (k.cfg) lens += fmt::format("\"equal_work_of\": \"{}\", ", r.cfg.name());
      fmt::print(f,
                 "{}    {{\"config\": \"{}\", \"backend\": \"{}\", \"kernel\": \"{}\", \"dtype\": \"{}\", "
                 "\"batch\": {}, \"seqlen\": {}, \"seqlen_k\": {}, \"heads\": {}, \"heads_k\": {}, \"d_qk\": {}, "
                 "\"d_v\": {}, {}\"flops\": {:.6e}, \"time_ms\": {}, \"run_ms\": [{}], \"tflops\": {}, {}\"note\": \"{}\"}}",
                 first ? "" : ",\n", c.name(), r.backend, k.name, c.dtype == ZYFA_DTYPE_BF16 ? "bf16" : "fp8",
                 c.batch, c.seqlen, c.seqlen_k, c.heads, c.heads_k, c.d_qk, c.d_v, lens, c.flops(),
                 ran ? fmt::format("{:.5f}", mean(k.run_ms)) : "null", runs,
                 ran ? fmt::format("{:.2f}", tflops(r, k)) : "null", error_json(k),
                 json_escape(ran ? k.note : "not run: " + k.not_run));
      first = false;
    }
  }
  fmt::print(f, "\n  ]\n}}\n");
  std::fclose(f);
}

int main_impl(int argc, char** argv) {
  const Options o = parse(argc, argv);
  zyfa_backend_t backend;
  if (o.backend == "cuda") backend = ZYFA_BACKEND_CUDA;
  else if (o.backend == "cpu") backend = ZYFA_BACKEND_CPU;
  else if (o.backend == "emu") backend = ZYFA_BACKEND_EMU;
  else if (o.backend == "hip") backend = ZYFA_BACKEND_HIP;
  else usage(("unknown backend " + o.backend).c_str());
  zyfa_handle_t h = nullptr;
  if (zyfa_create(&h) != ZYFA_STATUS_SUCCESS || zyfa_backend_query(h, backend, nullptr) != ZYFA_STATUS_SUCCESS) {
    std::fprintf(stderr, "backend %s not usable: %s\n", o.backend.c_str(), zyfa_last_error());
    return 1;
  }
  std::string device = o.model.empty() ? o.backend : "MI355X predicted by the gfx950 timing model (emu)", cudnn_ver;
#if ZYFA_HAVE_CUDA
  cudaStream_t stream = nullptr;
  if (backend == ZYFA_BACKEND_CUDA) {
    cudaDeviceProp prop{};
    int dev = 0, driver = 0;
    cudaGetDevice(&dev);
    cudaGetDeviceProperties(&prop, dev);
    cudaDriverGetVersion(&driver);
    device = fmt::format("{} ({} SMs), CUDA driver {}.{}", prop.name, prop.multiProcessorCount, driver / 1000,
                         driver % 1000 / 10);
    cudnn_ver = o.cudnn ? cudnn_version() : "";
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  }
#endif
  if (backend == ZYFA_BACKEND_HIP) {
    std::fprintf(stderr, "--backend hip: this zyfa-bench was built without the HIP runtime for device buffers\n");
    return 1;
  }
  std::printf("device: %s%s\nprotocol: %d warm-up calls, %d runs x %d calls, rotated order, "
              "idle %.1f s before S >= 16K, %s\n",
              device.c_str(), cudnn_ver.empty() ? "" : (", cuDNN " + cudnn_ver).c_str(), o.warmup, o.runs,
              o.iters, o.idle_s,
              o.inputs == InputKind::GAUSSIAN
                  ? fmt::format("Gaussian inputs std {:g}", static_cast<double>(o.input_std)).c_str()
                  : "realistic inputs (per-channel means, outlier channels, RoPE, sink)");
  if (o.varlen) std::printf("varlen: %s\n", describe(*o.varlen).c_str());
  if (o.op == "quantize") {
    QuantizeBenchOptions qo;
    qo.seqlens = o.seqlens;
    qo.dims = o.dqk;
    qo.batch = o.batch;
    qo.heads = o.heads > 0 ? o.heads : 32;
    qo.warmup = std::min(o.warmup, 50);
    qo.iters = o.iters;
    qo.model = !o.model.empty();
    qo.model_cus = o.model_cus;
#if ZYFA_HAVE_CUDA
    qo.stream = stream;
#endif
    const bool ok = bench_quantize(h, backend, qo);
    zyfa_destroy(h);
    return ok ? 0 : 1;
  }
  if (o.op != "fwd") usage(("--op must be fwd or quantize, not " + o.op).c_str());
  std::vector<Result> results;
  bool all_ok = true;
  for (const Config& c : configs(o)) {
    Result r;
    r.cfg = c;
    r.backend = o.backend;
    if (std::max(c.seqlen, c.seqlen_k) >= 16384 && o.idle_s > 0 && o.model.empty()) {
      std::this_thread::sleep_for(std::chrono::duration<double>(o.idle_s));
    }
    bool ok = false;
#if ZYFA_HAVE_CUDA
    if (backend == ZYFA_BACKEND_CUDA) ok = bench_cuda(h, c, o, stream, &r);
#endif
    if (backend == ZYFA_BACKEND_CPU || backend == ZYFA_BACKEND_EMU) ok = bench_host(h, backend, c, o, &r);
    if (!ok) {
      std::fprintf(stderr, "%s: failed\n", c.name().c_str());
      all_ok = false;
      continue;
    }
    print_result(r);
    // A refused ZYFA call leaves its row "not run" and the peers timed; the exit status says it.
    for (const Kernel& k : r.kernels)
      if (k.name.rfind("zyfa", 0) == 0 && !k.not_run.empty()) all_ok = false;
    if (o.max_rel_error > 0 && !within_error(r, o.max_rel_error)) all_ok = false;
    results.push_back(std::move(r));
  }
  if (!o.json.empty()) write_json(o, results, device, cudnn_ver);
  zyfa_destroy(h);
  return all_ok ? 0 : 1;
}

}  // namespace
}  // namespace zyfa::bench

int main(int argc, char** argv) { return zyfa::bench::main_impl(argc, argv); }
