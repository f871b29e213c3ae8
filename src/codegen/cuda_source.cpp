// Plan → CUDA source (see cuda_source.hpp). Every helper below returns text; nothing here knows CUDA APIs.
#include "bmmc/codegen/cuda_source.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace bmmc {

namespace {

// C type moving `bytes` bytes in one access.
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

std::string hex(std::uint64_t v) { return fmt::format("{:#x}", v); }

// Vector index of a warp access: ((base ^ offset) >> k) | lane, without the no-op parts, so the emitted
// kernel reads like the paper's appendix ("in[rx | lane]" for one element per lane and a zero offset).
std::string vector_index(const char* base, std::uint64_t offset, const char* sfx, int k) {
  std::string x = offset ? fmt::format("({} ^ {}{})", base, hex(offset), sfx) : std::string(base);
  if (k) x = fmt::format("({} >> {})", x, k);
  return x + " | lane";
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

// "acc ^= (0 - ((v >> i) & 1)) & col_i" for each non-zero column: a branch-free F2 mat-vec of v.
template <class Col>
std::string matvec(const std::string& acc, const std::string& v, const std::vector<Col>& cols, const char* type) {
  // The arithmetic happens in the accumulator's type: 0 - bit is an all-ones mask of that width.
  const char* sfx = std::string(type) == "unsigned long long" ? "ull" : "u";
  std::string s;
  for (size_t i = 0; i < cols.size(); ++i)
    if (cols[i])
      s += fmt::format("  {} ^= (0{} - (({} >> {}) & 1{})) & {}{};\n", acc, sfx, v, i, sfx, hex(cols[i]), sfx);
  return s;
}

KernelSource generate_naive(const NaivePass& p, const CodegenOptions&) {
  const int n = p.n();
  const bool wide = needs_64bit_index(n);
  const char* idx = wide ? "unsigned long long" : "unsigned int";
  const char* sfx = wide ? "ull" : "u";
  KernelSource k;
  k.block = static_cast<unsigned>(p.threads_per_block);
  k.grid = p.blocks();
  const std::uint64_t total = std::uint64_t{1} << n;
  std::string s;
  s += "// bmmc generated kernel (" + std::string(kCodegenVersion) + "): naive, one element per thread\n";
  s += matrix_comment(p.bmmc);
  s += fmt::format("// elements: {} bytes; launch: grid {} blocks x {} threads, no shared memory\n", p.elem_bytes,
                   k.grid, k.block);
  s += fmt::format("typedef {} elem_t;\n", vector_type(p.elem_bytes));
  s += fmt::format("extern \"C\" __global__ void __launch_bounds__({}) bmmc_kernel(const elem_t* __restrict__ in, "
                   "elem_t* __restrict__ out) {{\n",
                   k.block);
  s += fmt::format("  const {} x = ({})blockIdx.x * {}{} + threadIdx.x;\n", idx, idx, k.block, sfx);
  if (total % k.block) s += fmt::format("  if (x >= {}{}) return;\n", total, sfx);
  s += fmt::format("  {} y = {}{};\n", idx, hex(p.bmmc.complement()), sfx);
  s += matvec("y", "x", p.bmmc.matrix().col_list(), idx);
  s += "  out[y] = in[x];\n}\n";
  k.source = std::move(s);
  return k;
}

KernelSource generate_tile(const TilePass& p, const CodegenOptions& opt) {
  const int n = p.n(), k = p.vector_bits, s = p.segment_bits(), eb = p.elem_bytes;
  const int vec = 1 << k, vb = p.vector_bytes(), words_per_vec = vb >= 4 ? vb / 4 : 1;
  const int planes = p.planes(), iters = p.iters(), wb = p.warp_bits;
  const bool wide = needs_64bit_index(n);
  const char* idx = wide ? "unsigned long long" : "unsigned int";
  const char* sfx = wide ? "ull" : "u";
  if (p.blocks() > 0x7fffffffull) throw std::invalid_argument("codegen: more than 2^31-1 blocks; n is too large");
  KernelSource ks;
  ks.block = static_cast<unsigned>(p.threads_per_block());
  ks.grid = p.blocks();
  ks.shared_bytes = p.shared_bytes();

  std::string o;
  o += "// bmmc generated kernel (" + std::string(kCodegenVersion) + "): coset tile (docs/DESIGN.md §4)\n";
  o += matrix_comment(p.bmmc);
  o += fmt::format("// elements: {} bytes; each lane moves 2^{} element(s) = {} bytes per access, a warp 2^{} consecutive elements\n",
                   eb, k, vb, s);
  o += fmt::format("// tile V': {} segment bits + {} rows (q = {} from A, {} iters rows); swizzle {}\n", s, p.row_bits,
                   p.q, p.row_bits - p.q, p.swizzle ? "xor" : "off");
  o += fmt::format("// launch: grid {} blocks x {} threads ({} rows per warp, {} elements per thread), dynamic shared {} bytes\n",
                   ks.grid, ks.block, iters, p.elems_per_thread(), ks.shared_bytes);
  o += fmt::format("typedef {} vec_t;\n", vector_type(vb));
  o += fmt::format("extern \"C\" __global__ void __launch_bounds__({}) bmmc_kernel(const vec_t* __restrict__ in, "
                   "vec_t* __restrict__ out) {{\n",
                   ks.block);
  o += "  extern __shared__ unsigned int tile[];\n";
  o += fmt::format("  const unsigned lane = threadIdx.x & {}u;\n", (1 << kLaneBits) - 1);
  o += fmt::format("  const unsigned warp = threadIdx.x >> {};\n", kLaneBits);
  o += fmt::format("  const {} b = blockIdx.x;\n", idx);

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
  o += fmt::format("  // block origin x0: block bits deposited at positions W; z = A·x0 ^ c\n");
  o += fmt::format("  {} x0 = 0;\n", idx);
  for (size_t i = 0; i < W.size();) {
    size_t j = i;
    while (j + 1 < W.size() && W[j + 1] == W[j] + 1) ++j;
    const std::uint64_t mask = ((std::uint64_t{1} << (j - i + 1)) - 1) << i;
    o += fmt::format("  x0 |= (b & {}{}) << {};\n", hex(mask), sfx, W[i] - static_cast<int>(i));
    i = j + 1;
  }
  o += fmt::format("  {} z = {}{};\n", idx, hex(origin0.z), sfx);
  o += matvec("z", "b", z_cols, idx);

  // Phase 1.
  std::vector<BitVec> warp_rows(p.read_rows.begin(), p.read_rows.begin() + wb);
  std::vector<std::uint32_t> warp_store(p.store_row_cols.begin(), p.store_row_cols.begin() + wb);
  o += "  // phase 1: warp row rho = warp + i·2^warp_bits reads x = x0 ^ R·rho ^ (lane·2^k + e): one whole run per warp\n";
  o += fmt::format("  {} rx = x0;\n", idx);
  o += matvec("rx", "warp", warp_rows, idx);
  o += "  unsigned sx = lane;\n";
  o += matvec("sx", "warp", warp_store, "unsigned");
  const std::string ld = opt.streaming_hints ? "__ldcs(&in[{}])" : "in[{}]";
  for (int i = 0; i < iters; ++i) {
    const std::uint64_t rho = static_cast<std::uint64_t>(i) << wb;
    const std::string index = vector_index("rx", xor_of_columns(p.read_rows, rho), sfx, k);
    o += fmt::format("  const vec_t a{} = {};\n", i, fmt::format(fmt::runtime(ld), index));
  }
  for (int i = 0; i < iters; ++i) {
    const std::uint64_t rho = static_cast<std::uint64_t>(i) << wb;
    for (int e = 0; e < vec; ++e) {
      const std::uint32_t addr = xor_of_columns(p.store_row_cols, rho) ^ xor_of_columns(p.store_elem_cols, e);
      for (int pl = 0; pl < planes; ++pl) {
        std::string value;
        if (eb >= 4) {
          value = word_of(fmt::format("a{}", i), vb, e * planes + pl);
        } else {
          const int w = (e * eb) / 4, shift = 8 * ((e * eb) % 4);
          value = vec == 1 && vb < 4 ? fmt::format("(unsigned)a{}", i)
                                      : fmt::format("({} >> {}) & {}u", word_of(fmt::format("a{}", i), vb, w), shift,
                                                    eb == 1 ? "0xff" : "0xffff");
        }
        const std::string word = addr ? fmt::format("sx ^ {}u", hex(addr)) : std::string("sx");
        o += fmt::format("  tile[{}{}] = {};\n", pl ? fmt::format("{}u + ", pl * p.plane_words()) : "", word, value);
      }
    }
  }
  o += "  __syncthreads();\n";

  // Phase 2.
  const std::uint64_t low = (std::uint64_t{1} << s) - 1;
  std::vector<BitVec> warp_wrows(p.write_rows.begin(), p.write_rows.begin() + wb);
  std::vector<std::uint32_t> warp_load(p.load_row_cols.begin(), p.load_row_cols.begin() + wb);
  o += "  // phase 2: warp row sigma writes y = y0 ^ U·sigma ^ (lane·2^k + e) from tile word G·(sigma, (lane·2^k + e) ^ delta)\n";
  o += fmt::format("  const {} wy = (z & {}{});\n", idx, hex(~low & low_mask(n)), sfx);
  o += fmt::format("  const unsigned tau = (lane << {}) ^ (unsigned)(z & {}u);\n", k, hex(low));
  o += fmt::format("  {} ry = wy;\n", idx);
  o += matvec("ry", "warp", warp_wrows, idx);
  o += "  unsigned sy = 0;\n";
  o += matvec("sy", "warp", warp_load, "unsigned");
  o += matvec("sy", "tau", p.load_lane_cols, "unsigned");
  const std::string st = opt.streaming_hints ? "  __stcs(&out[{}], {});\n" : "  out[{}] = {};\n";
  for (int i = 0; i < iters; ++i) {
    const std::uint64_t sigma = static_cast<std::uint64_t>(i) << wb;
    std::vector<std::string> parts(words_per_vec);
    for (int e = 0; e < vec; ++e) {
      const std::uint32_t addr = xor_of_columns(p.load_row_cols, sigma) ^ xor_of_columns(p.load_lane_cols, e);
      for (int pl = 0; pl < planes; ++pl) {
        const std::string word = fmt::format("tile[{}{}]", pl ? fmt::format("{}u + ", pl * p.plane_words()) : "",
                                             addr ? fmt::format("(sy ^ {}u)", hex(addr)) : std::string("sy"));
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
    o += "  " + fmt::format(fmt::runtime(st), vector_index("ry", xor_of_columns(p.write_rows, sigma), sfx, k), "v");
    o += "  }\n";
  }
  o += "}\n";
  ks.source = std::move(o);
  return ks;
}

}  // namespace

KernelSource generate_cuda(const Pass& pass, const CodegenOptions& options) {
  return std::visit(
      [&](const auto& p) {
        if constexpr (std::is_same_v<std::decay_t<decltype(p)>, NaivePass>)
          return generate_naive(p, options);
        else
          return generate_tile(p, options);
      },
      pass);
}

std::vector<KernelSource> generate_cuda(const Plan& plan, const CodegenOptions& options) {
  std::vector<KernelSource> out;
  for (const Pass& p : plan.passes) out.push_back(generate_cuda(p, options));
  return out;
}

}  // namespace bmmc
