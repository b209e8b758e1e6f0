// ELF64 (System V gABI) as used by AMDGPU code objects, the kernel descriptor and the
// metadata note: LLVM AMDGPUUsage ("ELF Code Object", "Kernel Descriptor", "Code Object V5
// Metadata"). Only what execution needs is read; anything inconsistent is an error.
#include "emu/loader/code_object.h"

#include <cstring>
#include <mutex>
#include <stdexcept>

#include "emu/core/decoder.h"
#include "emu/loader/msgpack.h"

namespace zyfa::emu {
namespace {

template <typename T>
T read(const uint8_t* data, size_t size, uint64_t off) {
  if (off > size || sizeof(T) > size - off) throw std::runtime_error("ELF: read past end of file");
  T v;
  std::memcpy(&v, data + off, sizeof(T));
  return v;
}

constexpr uint16_t kEmAmdgpu = 224;
constexpr uint32_t kPtLoad = 1, kPtNote = 4;
constexpr uint32_t kShtSymtab = 2, kShtDynsym = 11;
constexpr uint32_t kNtAmdgpuMetadata = 32;

}  // namespace

uint32_t KernelDescriptor::vgpr_count() const {
  return ((compute_pgm_rsrc1 & 0x3F) + 1) * 8;  // gfx90a+: granule of 8 (unified file)
}
uint32_t KernelDescriptor::accum_offset() const { return ((compute_pgm_rsrc3 & 0x3F) + 1) * 4; }
uint32_t KernelDescriptor::sgpr_count() const { return (((compute_pgm_rsrc1 >> 6) & 0xF) + 1) * 16; }

LoadedCodeObject::LoadedCodeObject(const uint8_t* data, size_t size) {
  if (size < 64 || std::memcmp(data, "\x7F" "ELF", 4) != 0) throw std::runtime_error("not an ELF file");
  if (data[4] != 2 || data[5] != 1) throw std::runtime_error("ELF: not 64-bit little-endian");
  if (read<uint16_t>(data, size, 18) != kEmAmdgpu) throw std::runtime_error("ELF: not an AMDGPU object");
  const uint32_t flags = read<uint32_t>(data, size, 48);
  if ((flags & 0xFF) != 0x4F) {  // EF_AMDGPU_MACH_AMDGCN_GFX950
    throw std::runtime_error("ELF: e_flags machine 0x" + std::to_string(flags & 0xFF) +
                             " is not gfx950 (0x4f)");
  }
  target_ = "gfx950";
  const uint64_t phoff = read<uint64_t>(data, size, 32);
  const uint64_t shoff = read<uint64_t>(data, size, 40);
  const uint16_t phentsize = read<uint16_t>(data, size, 54), phnum = read<uint16_t>(data, size, 56);
  const uint16_t shentsize = read<uint16_t>(data, size, 58), shnum = read<uint16_t>(data, size, 60);
  const uint16_t shstrndx = read<uint16_t>(data, size, 62);

  // Loaded image: every PT_LOAD at its virtual address.
  uint64_t image_size = 0;
  std::vector<uint8_t> note;
  for (unsigned i = 0; i < phnum; ++i) {
    const uint64_t ph = phoff + uint64_t(i) * phentsize;
    const uint32_t type = read<uint32_t>(data, size, ph);
    const uint64_t off = read<uint64_t>(data, size, ph + 8), vaddr = read<uint64_t>(data, size, ph + 16);
    const uint64_t filesz = read<uint64_t>(data, size, ph + 32), memsz = read<uint64_t>(data, size, ph + 40);
    if (type == kPtLoad) {
      if (filesz > memsz || off > size || filesz > size - off || vaddr + memsz > (1u << 30))
        throw std::runtime_error("ELF: bad PT_LOAD segment");
      if (vaddr + memsz > image_size) {
        image_size = vaddr + memsz;
        image_.resize(image_size, 0);
      }
      std::memcpy(image_.data() + vaddr, data + off, filesz);
    }
  }

  // Sections: .text range, symbol tables, notes.
  auto sh = [&](unsigned i, unsigned field_off, unsigned bytes) -> uint64_t {
    const uint64_t base = shoff + uint64_t(i) * shentsize + field_off;
    return bytes == 4 ? read<uint32_t>(data, size, base) : read<uint64_t>(data, size, base);
  };
  auto sec_name = [&](unsigned i) -> std::string {
    const uint64_t strtab = sh(shstrndx, 24, 8);
    const uint64_t at = strtab + sh(i, 0, 4);
    if (at >= size) throw std::runtime_error("ELF: bad section name");
    return std::string(reinterpret_cast<const char*>(data + at), strnlen(reinterpret_cast<const char*>(data + at), size - at));
  };
  struct Sym { std::string name; uint64_t value; uint64_t size; };
  std::vector<Sym> syms;
  for (unsigned i = 0; i < shnum; ++i) {
    const uint32_t type = static_cast<uint32_t>(sh(i, 4, 4));
    const std::string name = sec_name(i);
    if (name == ".text") {
      text_begin_ = sh(i, 16, 8);
      text_end_ = text_begin_ + sh(i, 32, 8);
      text_file_offset_ = sh(i, 24, 8);
    }
    if (type == 7 /*SHT_NOTE*/) {
      // Notes: namesz, descsz, type, name (4-aligned), desc (4-aligned).
      uint64_t p = sh(i, 24, 8);
      const uint64_t end = p + sh(i, 32, 8);
      while (p + 12 <= end) {
        const uint32_t namesz = read<uint32_t>(data, size, p), descsz = read<uint32_t>(data, size, p + 4);
        const uint32_t ntype = read<uint32_t>(data, size, p + 8);
        const uint64_t name_at = p + 12, desc_at = name_at + ((namesz + 3) & ~3u);
        if (desc_at + descsz > size) throw std::runtime_error("ELF: bad note");
        if (ntype == kNtAmdgpuMetadata && namesz >= 6 && std::memcmp(data + name_at, "AMDGPU", 6) == 0)
          note.assign(data + desc_at, data + desc_at + descsz);
        p = desc_at + ((descsz + 3) & ~3u);
      }
    }
    if (type == kShtSymtab || type == kShtDynsym) {
      const uint64_t off = sh(i, 24, 8), bytes = sh(i, 32, 8), entsize = sh(i, 56, 8);
      const uint32_t link = static_cast<uint32_t>(sh(i, 40, 4));
      const uint64_t strtab = sh(link, 24, 8);
      if (entsize < 24) throw std::runtime_error("ELF: bad symbol table");
      for (uint64_t s = off; s + entsize <= off + bytes; s += entsize) {
        const uint32_t name_off = read<uint32_t>(data, size, s);
        const uint64_t at = strtab + name_off;
        if (at >= size) throw std::runtime_error("ELF: bad symbol name");
        Sym sym{std::string(reinterpret_cast<const char*>(data + at), strnlen(reinterpret_cast<const char*>(data + at), size - at)),
                read<uint64_t>(data, size, s + 8), read<uint64_t>(data, size, s + 16)};
        syms.push_back(sym);
      }
    }
  }
  if (text_end_ <= text_begin_ || text_end_ > image_.size()) throw std::runtime_error("ELF: no .text in the loaded image");

  // Kernel descriptors: symbols named <kernel>.kd (64 bytes in the image).
  for (const Sym& s : syms) {
    if (s.name.size() < 4 || s.name.compare(s.name.size() - 3, 3, ".kd") != 0) continue;
    bool seen = false;
    for (const auto& k : kernels_) seen |= k.name == s.name.substr(0, s.name.size() - 3);
    if (seen) continue;
    if (s.value + 64 > image_.size()) throw std::runtime_error("ELF: kernel descriptor outside the image");
    KernelInfo k;
    k.name = s.name.substr(0, s.name.size() - 3);
    const uint8_t* d = image_.data() + s.value;
    auto rd32 = [&](int o) { uint32_t v; std::memcpy(&v, d + o, 4); return v; };
    k.kd.group_segment_fixed_size = rd32(0);
    k.kd.private_segment_fixed_size = rd32(4);
    k.kd.kernarg_size = rd32(8);
    std::memcpy(&k.kd.kernel_code_entry_byte_offset, d + 16, 8);
    k.kd.compute_pgm_rsrc3 = rd32(44);
    k.kd.compute_pgm_rsrc1 = rd32(48);
    k.kd.compute_pgm_rsrc2 = rd32(52);
    std::memcpy(&k.kd.kernel_code_properties, d + 56, 2);
    std::memcpy(&k.kd.kernarg_preload, d + 58, 2);
    k.entry = s.value + k.kd.kernel_code_entry_byte_offset;
    k.kernarg_segment_size = k.kd.kernarg_size;
    if (k.entry < text_begin_ || k.entry >= text_end_)
      throw std::runtime_error("kernel " + k.name + ": entry point outside .text");
    kernels_.push_back(std::move(k));
  }

  // Argument metadata (.amdhsa.kernels[i].args).
  if (!note.empty()) {
    const MsgValue md = parse_msgpack(note.data(), note.size());
    if (const MsgValue* ks = md.get("amdhsa.kernels")) {
      for (const MsgValue& km : ks->array) {
        const MsgValue* name = km.get(".name");
        if (!name) continue;
        for (KernelInfo& k : kernels_) {
          if (k.name != name->s) continue;
          if (const MsgValue* ws = km.get(".wavefront_size")) k.wavefront_size = static_cast<uint32_t>(ws->i);
          if (const MsgValue* ks2 = km.get(".kernarg_segment_size")) k.kernarg_segment_size = static_cast<uint32_t>(ks2->i);
          if (const MsgValue* args = km.get(".args")) {
            for (const MsgValue& a : args->array) {
              KernelArg arg;
              if (const MsgValue* v = a.get(".value_kind")) arg.value_kind = v->s;
              if (const MsgValue* v = a.get(".offset")) arg.offset = static_cast<uint32_t>(v->i);
              if (const MsgValue* v = a.get(".size")) arg.size = static_cast<uint32_t>(v->i);
              if (const MsgValue* v = a.get(".name")) arg.name = v->s;
              k.args.push_back(arg);
            }
          }
        }
      }
    }
  }

  // Decode .text once; index_ maps each dword offset to the instruction starting there.
  insts_ = decode_range(image_.data(), image_.size(), static_cast<uint32_t>(text_begin_),
                        static_cast<uint32_t>(text_end_));
  index_.assign((text_end_ - text_begin_ + 3) / 4, -1);
  for (size_t i = 0; i < insts_.size(); ++i) index_[(insts_[i].pc - text_begin_) >> 2] = static_cast<int32_t>(i);
}

const KernelInfo* LoadedCodeObject::find_kernel(const std::string& name) const {
  for (const auto& k : kernels_)
    if (k.name == name) return &k;
  return nullptr;
}

std::shared_ptr<const LoadedCodeObject> load_code_object_cached(const uint8_t* data, size_t size) {
  static std::mutex mu;
  static std::map<std::pair<const uint8_t*, size_t>, std::shared_ptr<const LoadedCodeObject>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find({data, size});
  if (it != cache.end()) return it->second;
  auto obj = std::make_shared<const LoadedCodeObject>(data, size);
  cache[{data, size}] = obj;
  return obj;
}

}  // namespace zyfa::emu
