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

// The same exchange for the whole-byte shapes (tr_b8, tr_b16), read straight from LDS: lane l's
// 64 bits are at lds + addr[l * 4] (every address inside the LDS, checked by the caller), and
// dwords 0 and 1 of the result go to row0[l] and row1[l] for the lanes set in exec (all lanes of
// a 16-lane group or none). False, with nothing written, for the other shapes (and on hosts
// without SSE2): ds_transpose() then.
bool ds_transpose_from_lds(const DsTransposeShape& shape, const uint8_t* lds, const uint64_t* addr, uint64_t exec,
                           uint32_t* row0, uint32_t* row1);

}  // namespace zyfa::emu
