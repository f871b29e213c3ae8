// The pieces of a coset-tile kernel as text (see tile_emit.hpp).
#include "tile_emit.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace bmmc::codegen {

namespace {

// Expression for 32-bit word w of a vector variable of `bytes` bytes.
std::string word_of(const std::string& var, int bytes, int w) {
  if (bytes <= 4) return fmt::format("(unsigned){}", var);
  static const char* comp[] = {"x", "y", "z", "w"};
  return fmt::format("{}.{}", var, comp[w]);
}

// Vector constructor from word expressions.
std::string make_vector(int bytes, const std::vector<std::string>& words) {
  switch (bytes) {
    case 1: return fmt::format("(unsigned char)({})", words[0]);
    case 2: return fmt::format("(unsigned short)({})", words[0]);
    case 4: return words[0];
    case 8: return fmt::format("make_uint2({}, {})", words[0], words[1]);
    case 16: return fmt::format("make_uint4({}, {}, {}, {})", words[0], words[1], words[2], words[3]);
  }
  throw std::logic_error("codegen: no vector type of that size");
}

template <class Col>
std::string matvec_impl(const std::string& acc, const std::string& v, const std::vector<Col>& cols, const char* type,
                        const char* indent) {
  // The arithmetic happens in the accumulator's type: 0 - bit is an all-ones mask of that width.
  const char* sfx = std::string(type) == "unsigned long long" ? "ull" : "u";
  std::string s;
  for (size_t i = 0; i < cols.size(); ++i)
    if (cols[i])
      s += fmt::format("{}{} ^= (0{} - (({} >> {}) & 1{})) & {}{};\n", indent, acc, sfx, v, i, sfx, hex(cols[i]), sfx);
  return s;
}

}  // namespace

const char* vector_type(int bytes) {
  switch (bytes) {
    case 1: return "unsigned char";
    case 2: return "unsigned short";
    case 4: return "unsigned int";
    case 8: return "uint2";
    case 16: return "uint4";
  }
  throw std::logic_error("codegen: no vector type of that size");
}

std::string hex(std::uint64_t v) { return fmt::format("{:#x}", v); }

// Without the no-op parts, so the emitted kernel reads like the paper's appendix ("in[ra | lane]" for one
// element per lane and a zero offset).
std::string vector_index(const std::string& base, std::uint64_t offset, const char* sfx, int k) {
  std::string x = offset ? fmt::format("({} ^ {}{})", base, hex(offset), sfx) : base;
  if (k) x = fmt::format("({} >> {})", x, k);
  return x + " | lane";
}

std::string emit_write_row_origin(const TilePass& p, const std::string& z, const std::string& ry) {
  const auto [idx, sfx] = index_type(p.n());
  const std::uint64_t low = (std::uint64_t{1} << p.segment_bits()) - 1;
  std::vector<BitVec> warp_wrows(p.write_rows.begin(), p.write_rows.begin() + p.warp_bits);
  return fmt::format("  {} {} = ({} & {}{});\n", idx, ry, z, hex(~low & low_mask(p.n())), sfx) +
         matvec(ry, "warp", warp_wrows, idx);
}

std::string matrix_comment(const Bmmc& b) {
  std::string s = fmt::format("// permutation: n = {}, out[A·x ^ c] = in[x] ({}); A, row i = output bit i, column 0 first:\n",
                              b.n(), to_string(b.classify()));
  const std::string m = b.matrix().to_string();
  size_t start = 0;
  for (size_t i = 0; i < m.size(); ++i)
    if (m[i] == '\n') {
      s += "//   " + m.substr(start, i - start) + "\n";
      start = i + 1;
    }
  s += fmt::format("// c = {:#x}\n", b.complement());
  return s;
}

std::string matvec(const std::string& acc, const std::string& v, const std::vector<BitVec>& cols, const char* type,
                   const char* indent) {
  return matvec_impl(acc, v, cols, type, indent);
}
std::string matvec(const std::string& acc, const std::string& v, const std::vector<std::uint32_t>& cols,
                   const char* type, const char* indent) {
  return matvec_impl(acc, v, cols, type, indent);
}

IndexType index_type(int n) {
  return needs_64bit_index(n) ? IndexType{"unsigned long long", "ull"} : IndexType{"unsigned int", "u"};
}

std::string emit_block_index(const TilePass& p, const std::string& b, const std::string& base, const std::string& launch_index) {
  const auto [idx, sfx] = index_type(p.n());
  const std::string launch = base.empty() ? launch_index : base + " + " + launch_index;
  if (p.block_order.empty()) return fmt::format("  const {} {} = {};\n", idx, b, launch);
  // Launch i runs block M·i (plan/block_order.hpp): the blocks running together then touch neighbouring
  // cosets on the side the plan chose.
  std::string o = fmt::format("  const {} launch = {};\n  {} {} = 0;\n", idx, launch, idx, b);
  return o + matvec(b, "launch", std::vector<BitVec>(p.block_order.begin(), p.block_order.end()), idx);
}

std::string launch_order_comment(const TilePass& p) {
  if (p.block_order.empty()) return "";
  std::string m;
  for (std::uint64_t c : p.block_order) m += (m.empty() ? "" : ", ") + hex(c);
  return "// launch order (" + std::to_string(p.block_order.size()) + " launch bits): block b = M·blockIdx.x, M columns = [" + m + "]\n";
}

std::string emit_lane_warp() {
  return fmt::format("  const unsigned lane = threadIdx.x & {}u;\n  const unsigned warp = threadIdx.x >> {};\n",
                     (1 << kLaneBits) - 1, kLaneBits);
}

std::string emit_origin(const TilePass& p, const std::string& b, const std::string& x0, const std::string& z) {
  const auto [idx, sfx] = index_type(p.n());
  // Block origin: plan.hpp's block_origin, emitted as straight-line code. It is affine in b, so its constant
  // (b = 0) and its columns (b = 2^i) are read off the definition itself: x0's column i is one bit, the
  // position W[i] that block bit i is deposited at; z's is block_images[i]. Runs of consecutive positions
  // coalesce into one shift.
  const int block_bits = static_cast<int>(p.block_positions.size());
  const BlockOrigin origin0 = block_origin(p, 0);
  std::vector<int> W(block_bits);
  std::vector<BitVec> z_cols(block_bits);
  for (int i = 0; i < block_bits; ++i) {
    const BlockOrigin unit = block_origin(p, std::uint64_t{1} << i);
    W[i] = __builtin_ctzll(unit.x0 ^ origin0.x0);
    z_cols[i] = unit.z ^ origin0.z;
  }
  std::string o = fmt::format("  // block origin {}: block bits of {} deposited at positions W; {} = A·{} ^ c\n", x0, b, z, x0);
  o += fmt::format("  {} {} = 0;\n", idx, x0);
  for (size_t i = 0; i < W.size();) {
    size_t j = i;
    while (j + 1 < W.size() && W[j + 1] == W[j] + 1) ++j;
    const std::uint64_t mask = ((std::uint64_t{1} << (j - i + 1)) - 1) << i;
    o += fmt::format("  {} |= ({} & {}{}) << {};\n", x0, b, hex(mask), sfx, W[i] - static_cast<int>(i));
    i = j + 1;
  }
  o += fmt::format("  {} {} = {}{};\n", idx, z, hex(origin0.z), sfx);
  o += matvec(z, b, z_cols, idx);
  return o;
}

std::string emit_phase1_loads(const TilePass& p, const CodegenOptions& opt, const std::string& in, const std::string& x0,
                              const std::string& prefix, int source_local_bits) {
  const auto [idx, sfx] = index_type(p.n());
  const int k = p.vector_bits, wb = p.warp_bits;
  std::vector<BitVec> warp_rows(p.read_rows.begin(), p.read_rows.begin() + wb);
  std::string o = "  // phase 1: warp row rho = warp + i·2^warp_bits reads x = x0 ^ R·rho ^ (lane·2^k + e): one whole run per warp\n";
  const std::string rx = "r" + prefix;
  o += fmt::format("  {} {} = {};\n", idx, rx, x0);
  o += matvec(rx, "warp", warp_rows, idx);
  const std::string ld = opt.streaming_hints ? "__ldcs(&{}[{}])" : "{}[{}]";
  for (int i = 0; i < p.iters(); ++i) {
    const std::uint64_t rho = static_cast<std::uint64_t>(i) << wb;
    const std::uint64_t offset = xor_of_columns(p.read_rows, rho);
    if (source_local_bits < 0) {
      o += fmt::format("  const vec_t {}{} = {};\n", prefix, i,
                       fmt::format(fmt::runtime(ld), in, vector_index(rx, offset, sfx, k)));
    } else {
      // The whole warp row lies in one source buffer (its low s bits are lane bits, s ≤ the split): select it once.
      const std::string x = fmt::format("x{}{}", prefix, i);
      o += fmt::format("  const {} {} = {};\n", idx, x, offset ? fmt::format("{} ^ {}{}", rx, hex(offset), sfx) : rx);
      o += fmt::format("  const vec_t {}{} = {};\n", prefix, i,
                       fmt::format(fmt::runtime(ld), fmt::format("{}.p[{} >> {}]", in, x, source_local_bits),
                                   vector_index(fmt::format("({} & {}{})", x, hex(low_mask(source_local_bits)), sfx), 0,
                                                sfx, k)));
    }
  }
  return o;
}

std::string emit_phase1_stores(const TilePass& p, const std::string& prefix, const std::string& tile_base) {
  const int k = p.vector_bits, eb = p.elem_bytes, vec = 1 << k, vb = p.vector_bytes();
  const int planes = p.planes(), wb = p.warp_bits;
  std::vector<std::uint32_t> warp_store(p.store_row_cols.begin(), p.store_row_cols.begin() + wb);
  const std::string sx = "s" + prefix;
  if (p.packed_bytes && !tile_base.empty()) throw std::logic_error("codegen: packed 1-byte tiles have no tile base");
  // Packed 1-byte tiles (TilePass::packed_bytes): byte addresses into tileb, the lane bits two bits up.
  std::string o = fmt::format("  unsigned {} = lane{};\n", sx, p.packed_bytes ? " << 2" : "");
  o += matvec(sx, "warp", warp_store, "unsigned");
  const std::string base = tile_base.empty() ? "" : tile_base + " + ";
  for (int i = 0; i < p.iters(); ++i) {
    const std::uint64_t rho = static_cast<std::uint64_t>(i) << wb;
    for (int e = 0; e < vec; ++e) {
      const std::uint32_t addr = xor_of_columns(p.store_row_cols, rho) ^ xor_of_columns(p.store_elem_cols, e);
      for (int pl = 0; pl < planes; ++pl) {
        const std::string a = fmt::format("{}{}", prefix, i);
        std::string value;
        if (eb >= 4) {
          value = word_of(a, vb, e * planes + pl);
        } else {
          const int w = (e * eb) / 4, shift = 8 * ((e * eb) % 4);
          value = vec == 1 && vb < 4 ? fmt::format("(unsigned){}", a)
                                      : fmt::format("({} >> {}) & {}u", word_of(a, vb, w), shift,
                                                    eb == 1 ? "0xff" : "0xffff");
        }
        const std::string word = addr ? fmt::format("{} ^ {}u", sx, hex(addr)) : sx;
        if (p.packed_bytes)
          o += fmt::format("  tileb[{}] = (unsigned char)({});\n", word, value);
        else
          o += fmt::format("  tile[{}{}{}] = {};\n", base, pl ? fmt::format("{}u + ", pl * p.plane_words()) : "", word, value);
      }
    }
  }
  return o;
}

std::string emit_phase2(const TilePass& p, const CodegenOptions& opt, const std::string& out, const std::string& z,
                        const std::string& tile_base, const std::string& tag, int dest_local_bits) {
  const auto [idx, sfx] = index_type(p.n());
  const int k = p.vector_bits, s = p.segment_bits(), eb = p.elem_bytes;
  const int vec = 1 << k, vb = p.vector_bytes(), words_per_vec = vb >= 4 ? vb / 4 : 1;
  const int planes = p.planes(), wb = p.warp_bits;
  const std::uint64_t low = (std::uint64_t{1} << s) - 1;
  std::vector<std::uint32_t> warp_load(p.load_row_cols.begin(), p.load_row_cols.begin() + wb);
  const std::string ry = "ry" + tag, sy = "sy" + tag, tau = "tau" + tag;
  if (p.packed_bytes && !tile_base.empty()) throw std::logic_error("codegen: packed 1-byte tiles have no tile base");
  std::string o = "  // phase 2: warp row sigma writes y = y0 ^ U·sigma ^ (lane·2^k + e) from tile word G·(sigma, (lane·2^k + e) ^ delta)\n";
  o += fmt::format("  const unsigned {} = (lane << {}) ^ (unsigned)({} & {}u);\n", tau, k, z, hex(low));
  o += emit_write_row_origin(p, z, ry);
  o += fmt::format("  unsigned {} = 0;\n", sy);
  o += matvec(sy, "warp", warp_load, "unsigned");
  o += matvec(sy, tau, p.load_lane_cols, "unsigned");
  const std::string base = tile_base.empty() ? "" : tile_base + " + ";
  const std::string st = opt.streaming_hints ? "  __stcs(&{}[{}], {});\n" : "  {}[{}] = {};\n";
  for (int i = 0; i < p.iters(); ++i) {
    const std::uint64_t sigma = static_cast<std::uint64_t>(i) << wb;
    std::vector<std::string> parts(words_per_vec);
    for (int e = 0; e < vec; ++e) {
      const std::uint32_t addr = xor_of_columns(p.load_row_cols, sigma) ^ xor_of_columns(p.load_lane_cols, e);
      for (int pl = 0; pl < planes; ++pl) {
        const std::string at = addr ? fmt::format("({} ^ {}u)", sy, hex(addr)) : sy;
        const std::string word = p.packed_bytes
                                     ? fmt::format("(unsigned)tileb[{}]", at)
                                     : fmt::format("tile[{}{}{}]", base, pl ? fmt::format("{}u + ", pl * p.plane_words()) : "", at);
        if (eb >= 4) {
          parts[e * planes + pl] = word;
        } else {
          const int w = (e * eb) / 4, shift = 8 * ((e * eb) % 4);
          const std::string piece = shift ? fmt::format("({} << {})", word, shift) : word;
          parts[w] = parts[w].empty() ? piece : parts[w] + " | " + piece;
        }
      }
    }
    o += fmt::format("  {{ const vec_t v = {};\n", make_vector(vb, parts));
    const std::uint64_t offset = xor_of_columns(p.write_rows, sigma);
    if (dest_local_bits < 0) {
      o += "  " + fmt::format(fmt::runtime(st), out, vector_index(ry, offset, sfx, k), "v");
    } else {
      // The whole warp row lies on one rank (its low s bits are lane bits, s ≤ m): select its buffer once.
      o += fmt::format("    const {} y = {};\n", idx, offset ? fmt::format("{} ^ {}{}", ry, hex(offset), sfx) : ry);
      o += "  " + fmt::format(fmt::runtime(st), fmt::format("{}.p[y >> {}]", out, dest_local_bits),
                              vector_index(fmt::format("(y & {}{})", hex(low_mask(dest_local_bits)), sfx), 0, sfx, k), "v");
    }
    o += "  }\n";
  }
  return o;
}

std::string emit_tile_body(const TilePass& p, const CodegenOptions& opt, const std::string& base,
                           const std::string& in_index, int source_local_bits, int dest_local_bits) {
  if (!p.packing_valid()) throw std::invalid_argument("codegen: packed_bytes needs 1-byte elements, at least 4 per lane");
  std::string o = "  extern __shared__ unsigned int tile[];\n";
  if (p.packed_bytes) o += "  unsigned char* const tileb = (unsigned char*)tile;  // four 1-byte elements a word\n";
  o += emit_lane_warp();
  o += emit_block_index(p, "b", base);
  o += emit_origin(p, "b", "x0", "z");
  o += emit_phase1_loads(p, opt, "in", in_index, "a", source_local_bits);
  o += emit_phase1_stores(p, "a", "");
  o += "  __syncthreads();\n";
  o += emit_phase2(p, opt, "out", "z", "", "", dest_local_bits);
  return o;
}

}  // namespace bmmc::codegen
