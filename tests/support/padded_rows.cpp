#include "support/padded_rows.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace zyfa::test {

void pad_v_rows(AttnData& a, int64_t pad) {
  const AttnConfig& c = a.cfg;
  ASSERT_EQ(c.layout, Layout::BSHD);
  int64_t st[4];
  st[3] = 1;
  st[2] = c.d_v;
  st[1] = c.heads_k * c.d_v + pad;
  st[0] = c.seqlen * st[1];
  const size_t e = a.elem_bytes();
  std::vector<uint8_t> v(static_cast<size_t>(c.batch * st[0]) * e);
  for (size_t i = 0; i < v.size(); i += e) {
    v[i] = e == 2 ? 0xC1 : 0x7F;  // BF16 0x7FC1, e4m3 0x7F: NaN
    if (e == 2) v[i + 1] = 0x7F;
  }
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t s = 0; s < c.seqlen; ++s)
      for (int64_t h = 0; h < c.heads_k; ++h)
        for (int64_t i = 0; i < c.d_v; ++i) {
          const int64_t from = b * a.v_stride[0] + s * a.v_stride[1] + h * a.v_stride[2] + i * a.v_stride[3];
          const int64_t to = b * st[0] + s * st[1] + h * st[2] + i;
          std::memcpy(&v[to * e], &a.v[from * e], e);
        }
  a.v = std::move(v);
  std::memcpy(a.v_stride, st, sizeof st);
}

OutView padded_out_view(const AttnConfig& c, int64_t head_pad, int64_t row_pad, int64_t batch_pad) {
  OutView v{};
  v.stride[2] = c.d_v + head_pad;
  v.stride[1] = c.heads * v.stride[2] + row_pad;
  v.stride[0] = c.seqlen * v.stride[1] + batch_pad;
  v.elems = static_cast<size_t>(c.batch * v.stride[0]);
  return v;
}

int64_t gather_out_view(const AttnData& a, const OutView& v, const std::vector<uint16_t>& out,
                        std::vector<uint16_t>* dense) {
  const AttnConfig& c = a.cfg;
  dense->assign(a.out_count(), 0);
  std::vector<bool> in_view(out.size(), false);
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t s = 0; s < c.seqlen; ++s)
      for (int64_t h = 0; h < c.heads; ++h)
        for (int64_t i = 0; i < c.d_v; ++i) {
          const int64_t off = b * v.stride[0] + s * v.stride[1] + h * v.stride[2] + i;
          in_view[off] = true;
          (*dense)[a.out_offset(b, s, h, i)] = out[off];
        }
  int64_t stray = 0;
  for (size_t i = 0; i < out.size(); ++i) stray += !in_view[i] && !is_poison_bf16(out[i]);
  return stray;
}

}  // namespace zyfa::test
