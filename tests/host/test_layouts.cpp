// Layout edge cases of zyfa_fwd against the fp64 reference, on the backends whose memory is
// host memory (cpu always, emu when built): the alignment rules zyfa_backend_alignment()
// reports are the ones the backend enforces (a pointer or stride one element off the rule is
// refused naming the field, one exactly on it runs correctly); strided outputs with gaps are
// written exactly where they say and nowhere else; calls with no batch or no heads succeed and
// write nothing.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "support/zyfa_test_support.h"

namespace zyfa::test {
namespace {

// Host buffers of room bytes whose usable start is 256-byte aligned, so that `base() + shift`
// has exactly the alignment the test asks for.
struct Aligned {
  std::vector<uint8_t> raw;
  explicit Aligned(size_t room) : raw(room + 512) {}
  uint8_t* base() {
    const auto p = reinterpret_cast<uintptr_t>(raw.data());
    return raw.data() + ((256 - p % 256) % 256);
  }
};

bool usable(zyfa_backend_t b) {
  zyfa_handle_t h;
  if (zyfa_create(&h) != ZYFA_STATUS_SUCCESS) return false;
  const bool ok = zyfa_backend_query(h, b, nullptr) == ZYFA_STATUS_SUCCESS;
  zyfa_destroy(h);
  return ok;
}

zyfa_alignment_t rules_of(zyfa_backend_t b) {
  zyfa_handle_t h;
  EXPECT_EQ(zyfa_create(&h), ZYFA_STATUS_SUCCESS);
  zyfa_alignment_t a = ZYFA_ALIGNMENT_INIT;
  EXPECT_EQ(zyfa_backend_alignment(h, b, &a), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  zyfa_destroy(h);
  return a;
}

// One call of `data` with each tensor copied to `shift[t]` bytes past an aligned start and the
// seqlen strides widened by `pad[t]` elements (q, k, v, out). Outputs are poisoned; the result
// is checked against the reference when the call succeeds.
struct Placed {
  zyfa_status_t status = ZYFA_STATUS_INTERNAL_ERROR;
  std::string error;
  bool untouched = false;  // success: nothing outside the output's elements written; else nothing at all
  CheckResult check;
};

Placed run_placed(AttnData data, zyfa_backend_t backend, const size_t shift[4], const int64_t pad[4]) {
  const AttnConfig& c = data.cfg;
  const size_t eb = data.elem_bytes();
  // Re-lay each input bshd with a widened seqlen stride, so that pad changes only that stride.
  const int64_t heads[3] = {c.heads, c.heads_k, c.heads_k};
  const int64_t dims[3] = {c.d_qk, c.d_qk, c.d_v};
  std::vector<uint8_t>* src[3] = {&data.q, &data.k, &data.v};
  int64_t* strides[3] = {data.q_stride, data.k_stride, data.v_stride};
  std::vector<Aligned> in;
  for (int t = 0; t < 3; ++t) {
    const int64_t row = heads[t] * dims[t] + pad[t];
    const int64_t st[4] = {c.seqlen * row, row, dims[t], 1};
    std::vector<uint8_t> relaid(static_cast<size_t>(c.batch * c.seqlen * row) * eb);
    for (int64_t b = 0; b < c.batch; ++b)
      for (int64_t s = 0; s < c.seqlen; ++s)
        for (int64_t h = 0; h < heads[t]; ++h) {
          const int64_t from = b * strides[t][0] + s * strides[t][1] + h * strides[t][2];
          const int64_t to = b * st[0] + s * st[1] + h * st[2];
          std::memcpy(&relaid[to * eb], src[t]->data() + from * eb, static_cast<size_t>(dims[t]) * eb);
        }
    // The reference reads the same layout from data; the call reads the shifted copy.
    in.emplace_back(relaid.size() + shift[t]);
    std::memcpy(in.back().base() + shift[t], relaid.data(), relaid.size());
    *src[t] = std::move(relaid);
    std::memcpy(strides[t], st, sizeof st);
  }
  const int64_t orow = c.heads * c.d_v + pad[3];
  const int64_t ost[4] = {c.seqlen * orow, orow, c.d_v, 1};
  std::memcpy(data.out_stride, ost, sizeof ost);
  const size_t out_elems = static_cast<size_t>(c.batch * c.seqlen * orow);
  Aligned out((out_elems + 64) * 2 + shift[3]);
  auto* o = reinterpret_cast<uint16_t*>(out.base() + shift[3]);
  poison_bf16(o, out_elems + 64);
  std::vector<float> lse(data.lse_count());
  poison_f32(lse.data(), lse.size());

  zyfa_fwd_desc_t d = data.desc(in[0].base() + shift[0], in[1].base() + shift[1], in[2].base() + shift[2], o,
                                lse.data(), data.dev_descales.data());
  d.backend = backend;
  zyfa_handle_t h;
  Placed r;
  EXPECT_EQ(zyfa_create(&h), ZYFA_STATUS_SUCCESS);
  r.status = zyfa_fwd(h, &d);
  r.error = zyfa_last_error();
  zyfa_destroy(h);

  // Which output elements the call may write: the logical ones, and none in the padding.
  std::vector<bool> mine(out_elems + 64, false);
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t s = 0; s < c.seqlen; ++s)
      for (int64_t hh = 0; hh < c.heads; ++hh)
        for (int64_t i = 0; i < c.d_v; ++i) mine[data.out_offset(b, s, hh, i)] = true;
  r.untouched = true;
  for (size_t i = 0; i < mine.size(); ++i)
    if ((r.status != ZYFA_STATUS_SUCCESS || !mine[i]) && !is_poison_bf16(o[i])) r.untouched = false;
  if (r.status != ZYFA_STATUS_SUCCESS) {
    for (float x : lse)
      if (!is_poison_f32(x)) r.untouched = false;
    return r;
  }
  r.check = check_output(data, reference_fp64(data), o, c.lse ? lse.data() : nullptr,
                         backend == ZYFA_BACKEND_CPU ? cpu_tolerance() : kernel_tolerance(c));
  return r;
}

class Alignment : public ::testing::TestWithParam<zyfa_backend_t> {};

// Each tensor with a rule beyond its element size is refused, naming the field, when its data or
// its seqlen stride is one element off the rule, and runs correctly when exactly on it. A tensor
// without such a rule runs correctly one element off any 16-byte boundary.
TEST_P(Alignment, ReportedRulesAreEnforcedAndSufficient) {
  const zyfa_backend_t backend = GetParam();
  if (!usable(backend)) GTEST_SKIP() << zyfa_backend_name(backend) << " is not usable here";
  const zyfa_alignment_t rules = rules_of(backend);
  ASSERT_EQ(rules.backend, backend);
  const uint32_t rule[4] = {rules.q, rules.k, rules.v, rules.out};
  const char* names[4] = {"q", "k", "v", "out"};
  for (zyfa_dtype_t dt : {ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP8_E4M3}) {
    AttnConfig cfg = AttnConfig::of(dt, 128, 2, 1, 48);  // 48 rows: batch strides stay on the rules
    cfg.seed = seed_for(std::string("Alignment_") + zyfa_backend_name(backend) + "_" + cfg.name());
    std::printf("%s on %s: input seed %llu\n", cfg.name().c_str(), zyfa_backend_name(backend),
                static_cast<unsigned long long>(cfg.seed));
    const AttnData data = make_attn_data(cfg);
    for (int t = 0; t < 4; ++t) {
      const size_t eb = t == 3 ? 2 : data.elem_bytes();
      SCOPED_TRACE(std::string(names[t]) + " " + cfg.name());
      size_t shift[4] = {0, 0, 0, 0};
      int64_t pad[4] = {0, 0, 0, 0};
      if (rule[t] > eb) {
        shift[t] = eb;  // element-aligned, off the rule
        Placed r = run_placed(data, backend, shift, pad);
        EXPECT_EQ(r.status, ZYFA_STATUS_NOT_SUPPORTED) << r.error;
        EXPECT_NE(r.error.find(std::string(names[t]) + ".data"), std::string::npos) << r.error;
        EXPECT_TRUE(r.untouched);
        shift[t] = 0;
        pad[t] = 1;  // one element more per row: the byte stride leaves the rule
        r = run_placed(data, backend, shift, pad);
        EXPECT_EQ(r.status, ZYFA_STATUS_NOT_SUPPORTED) << r.error;
        EXPECT_NE(r.error.find(std::string(names[t]) + ".stride[1]"), std::string::npos) << r.error;
        EXPECT_TRUE(r.untouched);
        shift[t] = rule[t];
        pad[t] = rule[t] / eb;  // on the rule: runs
      } else {
        shift[t] = eb + 16;  // off every boundary but the element's
        pad[t] = 1;
      }
      const Placed r = run_placed(data, backend, shift, pad);
      ASSERT_EQ(r.status, ZYFA_STATUS_SUCCESS) << r.error;
      EXPECT_TRUE(r.check.ok()) << r.check.summary();
      EXPECT_TRUE(r.untouched) << "an element in the stride padding was written";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, Alignment, ::testing::Values(ZYFA_BACKEND_CPU, ZYFA_BACKEND_EMU),
                         [](const auto& info) { return std::string(zyfa_backend_name(info.param)); });

TEST(AlignmentQuery, EveryBackendAnsweredAutoAsResolved) {
  zyfa_handle_t h;
  ASSERT_EQ(zyfa_create(&h), ZYFA_STATUS_SUCCESS);
  for (zyfa_backend_t b : {ZYFA_BACKEND_CPU, ZYFA_BACKEND_HIP, ZYFA_BACKEND_EMU, ZYFA_BACKEND_CUDA}) {
    zyfa_alignment_t a = ZYFA_ALIGNMENT_INIT;
    ASSERT_EQ(zyfa_backend_alignment(h, b, &a), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
    EXPECT_EQ(a.backend, b);
    for (uint32_t x : {a.q, a.k, a.v, a.out}) EXPECT_TRUE(x >= 1 && x <= 256 && (x & (x - 1)) == 0) << x;
  }
  // hip and emu launch the same code objects, so they share one rule.
  const zyfa_alignment_t hip = rules_of(ZYFA_BACKEND_HIP), emu = rules_of(ZYFA_BACKEND_EMU);
  EXPECT_TRUE(hip.q == emu.q && hip.k == emu.k && hip.v == emu.v && hip.out == emu.out);
  zyfa_backend_t resolved;
  ASSERT_EQ(zyfa_backend_query(h, ZYFA_BACKEND_AUTO, &resolved), ZYFA_STATUS_SUCCESS);
  zyfa_alignment_t a = ZYFA_ALIGNMENT_INIT;
  ASSERT_EQ(zyfa_backend_alignment(h, ZYFA_BACKEND_AUTO, &a), ZYFA_STATUS_SUCCESS);
  EXPECT_EQ(a.backend, resolved);
  zyfa_destroy(h);
}

TEST(AlignmentQuery, BadArgumentsRefusedAndNothingWritten) {
  zyfa_handle_t h;
  ASSERT_EQ(zyfa_create(&h), ZYFA_STATUS_SUCCESS);
  zyfa_alignment_t a = ZYFA_ALIGNMENT_INIT;
  a.struct_size = 8;
  a.q = 77;
  EXPECT_EQ(zyfa_backend_alignment(h, ZYFA_BACKEND_CPU, &a), ZYFA_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zyfa_last_error()).find("struct_size = 8"), std::string::npos) << zyfa_last_error();
  EXPECT_EQ(a.q, 77u);
  a = ZYFA_ALIGNMENT_INIT;
  a.q = 77;
  EXPECT_EQ(zyfa_backend_alignment(h, static_cast<zyfa_backend_t>(9), &a), ZYFA_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zyfa_last_error()).find("backend = 9"), std::string::npos) << zyfa_last_error();
  EXPECT_EQ(a.q, 77u);
  EXPECT_EQ(zyfa_backend_alignment(h, ZYFA_BACKEND_CPU, nullptr), ZYFA_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(zyfa_backend_alignment(nullptr, ZYFA_BACKEND_CPU, &a), ZYFA_STATUS_INVALID_ARGUMENT);
  zyfa_destroy(h);
}

// An output in any nested order (here heads, seqlen, batch outermost to innermost, with a gap
// after each head) is written exactly at its elements and matches the reference.
TEST(StridedOutput, PermutedWithGapsWrittenExactly) {
  AttnConfig cfg = AttnConfig::of(ZYFA_DTYPE_BF16, 128, 3, 1, 33).with_batch(2);
  cfg.seed = seed_for("StridedOutput_" + cfg.name());
  std::printf("%s: input seed %llu\n", cfg.name().c_str(), static_cast<unsigned long long>(cfg.seed));
  AttnData data = make_attn_data(cfg);
  const int64_t st[4] = {128, 2 * 128, 2 * 128 * 33 + 64, 1};  // (b, s, h, d): b innermost, then s, then h
  std::memcpy(data.out_stride, st, sizeof st);
  const size_t n = static_cast<size_t>(3 * st[2] + 64);
  std::vector<uint16_t> out(n);
  std::vector<float> lse(data.lse_count());
  poison_bf16(out.data(), n);
  poison_f32(lse.data(), lse.size());
  zyfa_fwd_desc_t d = data.host_desc(out.data(), lse.data());
  d.backend = ZYFA_BACKEND_CPU;
  zyfa_handle_t h;
  ASSERT_EQ(zyfa_create(&h), ZYFA_STATUS_SUCCESS);
  ASSERT_EQ(zyfa_fwd(h, &d), ZYFA_STATUS_SUCCESS) << zyfa_last_error();
  zyfa_destroy(h);
  const CheckResult r = check_output(data, reference_fp64(data), out.data(), lse.data(), cpu_tolerance());
  EXPECT_TRUE(r.ok()) << r.summary();
  std::vector<bool> mine(n, false);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t s = 0; s < 33; ++s)
      for (int64_t hh = 0; hh < 3; ++hh)
        for (int64_t i = 0; i < 128; ++i) mine[data.out_offset(b, s, hh, i)] = true;
  for (size_t i = 0; i < n; ++i)
    if (!mine[i]) ASSERT_TRUE(is_poison_bf16(out[i])) << "element " << i << " outside the output was written";
}

// The documented, conservative rule: an output whose dimensions interleave is refused even when
// it writes each element once (row offsets 0, 2, 4 and 3, 5, 7 head rows here), with a message
// stating the rule.
TEST(StridedOutput, InterleavedLayoutRefusedByTheNestedRule) {
  AttnConfig cfg = AttnConfig::of(ZYFA_DTYPE_BF16, 128, 3, 1, 2);
  cfg.seed = seed_for("StridedOutputInterleaved");
  AttnData data = make_attn_data(cfg);
  const int64_t st[4] = {8 * 128, 3 * 128, 2 * 128, 1};
  std::memcpy(data.out_stride, st, sizeof st);
  std::vector<uint16_t> out(8 * 128);
  std::vector<float> lse(data.lse_count());
  poison_bf16(out.data(), out.size());
  poison_f32(lse.data(), lse.size());
  zyfa_fwd_desc_t d = data.host_desc(out.data(), lse.data());
  d.backend = ZYFA_BACKEND_CPU;
  zyfa_handle_t h;
  ASSERT_EQ(zyfa_create(&h), ZYFA_STATUS_SUCCESS);
  EXPECT_EQ(zyfa_fwd(h, &d), ZYFA_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zyfa_last_error()).find("out.stride[1] = 384: output elements may overlap"),
            std::string::npos)
      << zyfa_last_error();
  zyfa_destroy(h);
  for (uint16_t x : out) ASSERT_TRUE(is_poison_bf16(x));
  for (float x : lse) ASSERT_TRUE(is_poison_f32(x));
}

// batch = 0 or heads = 0 is a valid call with nothing to do: SUCCESS, "" as the message, and no
// output or LSE element written, with real buffers or NULL ones, on every usable backend. A
// backend that cannot run here answers an empty call as it answers a full one.
TEST(EmptyCall, NoBatchOrNoHeadsSucceedsAndWritesNothing) {
  AttnConfig cfg = AttnConfig::of(ZYFA_DTYPE_FP8_E4M3, 128, 4, 2, 16).with_batch(2);
  cfg.seed = seed_for("EmptyCall");
  AttnData data = make_attn_data(cfg);
  std::vector<uint16_t> out(data.out_count());
  std::vector<float> lse(data.lse_count());
  struct Case {
    const char* name;
    int64_t batch, heads, heads_k;
    bool null_data;
  };
  const Case cases[] = {{"batch 0", 0, 4, 2, false}, {"batch 0, NULL data", 0, 4, 2, true},
                        {"heads 0", 2, 0, 2, false}, {"heads 0 and heads_k 0", 2, 0, 0, true}};
  zyfa_handle_t h;
  ASSERT_EQ(zyfa_create(&h), ZYFA_STATUS_SUCCESS);
  for (zyfa_backend_t b : {ZYFA_BACKEND_AUTO, ZYFA_BACKEND_CPU, ZYFA_BACKEND_EMU, ZYFA_BACKEND_HIP, ZYFA_BACKEND_CUDA}) {
    const zyfa_status_t expected = zyfa_backend_query(h, b, nullptr);
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(zyfa_backend_name(b)) + ", " + c.name);
      poison_bf16(out.data(), out.size());
      poison_f32(lse.data(), lse.size());
      zyfa_fwd_desc_t d = data.host_desc(out.data(), lse.data());
      d.backend = b;
      for (zyfa_tensor_t* t : {&d.q, &d.k, &d.v, &d.out}) {
        t->shape[0] = c.batch;
        if (c.null_data) t->data = nullptr;
      }
      d.q.shape[2] = d.out.shape[2] = c.heads;
      d.k.shape[2] = d.v.shape[2] = c.heads_k;
      for (auto* call : {&zyfa_fwd_prepare, &zyfa_fwd}) {
        const zyfa_status_t st = (*call)(h, &d);
        EXPECT_EQ(st, expected) << zyfa_last_error();
        if (expected == ZYFA_STATUS_SUCCESS) EXPECT_STREQ(zyfa_last_error(), "");
      }
      for (uint16_t x : out) ASSERT_TRUE(is_poison_bf16(x));
      for (float x : lse) ASSERT_TRUE(is_poison_f32(x));
    }
  }
  zyfa_destroy(h);
}

}  // namespace
}  // namespace zyfa::test
