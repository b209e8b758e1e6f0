// The gfx950 transposing LDS reads (ds_read_b64_tr_b4/b8/b16, ds_read_b96_tr_b6): which lane
// receives which element of the data the lanes of its 16-lane group read.
#pragma once

#include <cstdint>

namespace zyfa::emu {

struct DsTransposeShape {
  uint8_t dwords = 0;     // per lane: 2 (64 bits) or 3 (96 bits, tr_b6)
  uint8_t elem_bits = 0;  // 4, 6, 8 or 16
  uint8_t elems = 0;      // elements per lane: dwords * 32 / elem_bits
  uint8_t align = 0;      // required alignment of each lane's address, in bytes
};

// The shape of a transposing read, or false for any other DS opcode.
bool ds_transpose_shape(uint16_t op, DsTransposeShape* shape);

// raw[lane * 4 + k]: dword k of what lane `lane` read at its address (k < shape.dwords);
// out gets the transposed dwords in the same layout. Only groups whose bit is set in
// `groups` (bit g: lanes 16g..16g+15) are computed.
void ds_transpose(const DsTransposeShape& shape, const uint32_t* raw, uint32_t* out, unsigned groups);

}  // namespace zyfa::emu
