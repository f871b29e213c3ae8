// The fused compare-swap pass → CUDA source (see fused_source.hpp). The plan (tile, windows, layouts) is
// pure data computed first; the emitter only prints it.
#include "bmmc/codegen/fused_source.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <optional>
#include <stdexcept>

#include "bmmc/core/subspace.hpp"
#include "tile_emit.hpp"

namespace bmmc {

using namespace codegen;

namespace {

struct KeyInfo {
  const char* type;
  int bytes;
  bool floating;
};

KeyInfo key_info(const std::string& t) {
  static const KeyInfo keys[] = {{"int", 4, false},        {"unsigned int", 4, false},       {"float", 4, true},
                                 {"long long", 8, false},  {"unsigned long long", 8, false}, {"double", 8, true}};
  for (const KeyInfo& k : keys)
    if (t == k.type) return k;
  throw std::invalid_argument(fmt::format(
      "fused codegen: key type '{}'; expected int, unsigned int, float, long long, unsigned long long or double", t));
}

std::string popc(const char* idx, const std::string& e) {
  return fmt::format("{}({})", std::string(idx) == "unsigned int" ? "__popc" : "__popcll", e);
}

// The compare-swap helper: cs(p, q, pmin, pfirst) with pmin = "p takes the min", pfirst = "p is the member a".
std::string emit_cs(const KeyInfo& k) {
  std::string o;
  if (k.floating) {
    o += "// a = the member with bit first_bit clear, b the other; they swap iff (b < a) == (a takes the min), as the\n"
         "// CPU executor's compare_swap(a, b, low_first) does: a pair that does not compare (NaN) keeps its order when\n"
         "// a takes the min and swaps otherwise\n";
    // That rule, (pfirst ? q < p : p < q) == (pfirst == pmin), is (q < p) == pmin except where neither key is
    // below the other (equal or NaN): there it is pfirst != pmin, i.e. (q < p) == pmin flipped when !pfirst.
    // Written so, ptxas makes a pair two compares, one predicate op and two selects (5 SASS instructions;
    // the select between two compares took 8).
    o += "// swap iff (q < p) == pmin, flipped where neither is below the other (equal or NaN) and q is a\n";
    o += "static __device__ __forceinline__ void cs(fkey_t& p, fkey_t& q, bool pmin, bool pfirst) {\n"
         "  const bool neither = !(q < p) && !(p < q);\n"
         "  const bool sw = ((q < p) == pmin) != (neither && !pfirst);\n"
         "  const fkey_t a = p, b = q;\n"
         "  p = sw ? b : a;\n"
         "  q = sw ? a : b;\n"
         "}\n";
  } else {
    // One compare with pmin folded into it (ISETP.LT.XOR) and two selects: 3 instructions a pair on a runtime pmin,
    // where min, max and two selects on pmin took 4 (64-bit keys: 7 against 12); ptxas still makes a pmin known
    // when the kernel is generated into one min and one max (sm_90 SASS, checked with cuobjdump).
    o += "// integers: equal keys are identical, so which member is 'first' does not matter; swap iff (q < p) == pmin\n";
    o += "static __device__ __forceinline__ void cs(fkey_t& p, fkey_t& q, bool pmin) {\n"
         "  const bool sw = (q < p) == pmin;\n"
         "  const fkey_t a = p, b = q;\n"
         "  p = sw ? b : a;\n"
         "  q = sw ? a : b;\n"
         "}\n";
  }
  return o;
}

// S·v for each v (shared_swizzle's storage map).
std::vector<BitVec> swizzled(const std::vector<BitVec>& rows, const std::vector<BitVec>& vs) {
  std::vector<BitVec> out;
  for (BitVec v : vs) out.push_back(apply_rows(rows, v));
  return out;
}

// `var` = the coset origin of block `b`: block index bit k deposited at global position outside[k] (runs of
// consecutive positions in one shift), then the tile parts of the block vectors (block[k] ⊕ e_outside[k]).
std::string emit_x0(const FusedKernelPlan& p, const std::string& b, const std::string& var, const char* idx,
                    const char* sfx) {
  std::string o = fmt::format("  {} {} = 0{};\n", idx, var, sfx);
  const auto& out = p.outside;
  for (std::size_t k = 0; k < out.size();) {
    std::size_t e = k + 1;
    while (e < out.size() && out[e] == out[e - 1] + 1) ++e;
    const int len = static_cast<int>(e - k), shift = out[k] - static_cast<int>(k);
    o += fmt::format("  {} |= (({}) & {}{}) << {};\n", var, b, hex(low_mask(len) << k), sfx, shift);
    k = e;
  }
  std::vector<BitVec> inside;
  for (std::size_t k = 0; k < out.size(); ++k) inside.push_back(p.block[k] ^ (BitVec{1} << out[k]));
  return o + matvec(var, "(" + b + ")", inside, idx);
}

std::string column_comment(const FusedTileSpec& s, const FusedKernelPlan& p, std::size_t j) {
  const FusedColumn& c = s.columns[j];
  return fmt::format("  // column {}: pairs x, x ^ {:#x} (tile coordinates ^ {:#x}); logical bit 0 = parity(x & {:#x}) ^ {}; {}\n",
                     j, c.dir, p.deltas[j], c.row, c.c0, c.descending ? "descending" : "ascending");
}

// Per-column bits of a thread: m<j> = "register slot 0 takes the min" and, for floats, f<j> = "the key in slot 0
// is the pair's first member" (its bit first_bit is 0). A term appears only where its form does not vanish
// on the block vectors (x0) or the layout's thread vectors (th): with neither, the bit is a constant.
std::string emit_column_bits(const FusedKernelPlan& p, const FusedColumn& c, const ColumnForms& f,
                             const std::vector<BitVec>& threads, std::size_t j, bool floating, const char* idx) {
  std::string o;
  const BitVec on_blocks = restrict_form(c.row, p.block), first_on_blocks = restrict_form(BitVec{1} << c.first_bit, p.block);
  const BitVec tmask = restrict_form(f.rho, threads);
  std::string e = std::to_string(c.c0 ^ (c.descending ? 1 : 0));
  if (on_blocks) e += " ^ " + popc(idx, fmt::format("x0 & {:#x}", c.row));
  if (tmask) e += fmt::format(" ^ __popc(th & {:#x}u)", tmask);
  // pmin for slot 0: logical bit 0 equals `descending`  ⇔  (bit0 ^ desc) == 0
  o += fmt::format("  const bool m{} = (({}) & 1) == 0;\n", j, e);
  if (floating) {
    const BitVec fmask = restrict_form(f.phi, threads);
    std::string g = first_on_blocks ? fmt::format("(x0 >> {})", c.first_bit) : "0";
    if (fmask) g += fmt::format(" ^ __popc(th & {:#x}u)", fmask);
    o += fmt::format("  const bool f{} = (({}) & 1) == 0;\n", j, g);
  }
  return o;
}

std::string generate_registers(const FusedTileSpec& s, const FusedKernelPlan& p, const KeyInfo& k,
                               const char* idx, const char* sfx) {
  const int R = p.reg_bits, slots = 1 << R;
  const bool pipelined = p.kind == FusedKernelKind::Pipelined;
  std::string o = "  const unsigned th = threadIdx.x;\n";
  auto global_cols = [&](const std::vector<BitVec>& vs) {
    std::vector<BitVec> g;
    for (BitVec v : vs) g.push_back(xor_of_columns(p.tile, v));
    return g;
  };
  auto slot_offsets = [&](const FusedLayout& l) {
    std::vector<BitVec> r;
    for (int i = 0; i < slots; ++i) r.push_back(xor_of_columns(l.regs, static_cast<std::uint64_t>(i)));
    return r;
  };
  const FusedLayout* cur = &p.load;
  if (!pipelined) {
    o += fmt::format("  const {} b = blockIdx.x;\n", idx);
    o += emit_x0(p, "b", "x0", idx, sfx);
    // Load: lanes read consecutive keys of one line per slot.
    o += "  // load: register slot r of thread th holds the key at x0 ^ K·(U·th ^ W·r); lanes = tile coordinates 0..4\n";
    o += fmt::format("  {} g = x0;\n", idx);
    o += matvec("g", "th", global_cols(p.load.threads), idx);
    const std::vector<BitVec> offs = slot_offsets(p.load);
    for (int r = 0; r < slots; ++r)
      o += fmt::format("  fkey_t v{} = src[g ^ {}{}];\n", r, hex(xor_of_columns(p.tile, offs[r])), sfx);
  } else {
    // Persistent blocks: tile b + gridDim.x is copied into `next` (cp.async, no registers) while tile b is
    // worked on; the copy lands at index S·i (S: shared_swizzle between the plain layout and the first window's),
    // so the first window reads it like a re-layout.
    const std::uint64_t tiles = p.blocks(), size = std::uint64_t{1} << p.tile_dim;
    const FusedLayout& io = p.plain;
    const FusedLayout& first = p.windows.front().layout;
    const std::vector<BitVec> S = shared_swizzle(io, first, p.tile_dim);  // `next` holds tile coordinate i at S·i
    auto prefetch = [&](const std::string& origin) {
      std::string e = fmt::format("    unsigned c = 0u;\n{}    {} g = {};\n",
                                  matvec("c", "th", swizzled(S, io.threads), "unsigned int", "    "), idx, origin);
      e += matvec("g", "th", global_cols(io.threads), idx, "    ");
      const std::vector<BitVec> offs = slot_offsets(io);
      for (int r = 0; r < slots; ++r)
        e += fmt::format("    cp_async(&next[c ^ {}u], &src[g ^ {}{}]);\n", hex(apply_rows(S, offs[r])),
                         hex(xor_of_columns(p.tile, offs[r])), sfx);
      return e;
    };
    o += fmt::format("  fkey_t* const next = tile + {};  // the prefetched tile (the re-layouts use tile[0 .. {}))\n", size, size);
    o += "  {  // prologue: this block's first tile\n";
    o += emit_x0(p, "blockIdx.x", "xn", idx, sfx);
    o += prefetch("xn");
    o += "  }\n";
    o += fmt::format("  for ({} b = blockIdx.x; b < {}{}; b += gridDim.x) {{\n", idx, tiles, sfx);
    o += emit_x0(p, "b", "x0", idx, sfx);
    o += "  cp_async_wait_all();\n  __syncthreads();\n";
    o += "  unsigned f = 0u;\n" + matvec("f", "th", swizzled(S, first.threads), "unsigned int");
    const std::vector<BitVec> fo = swizzled(S, slot_offsets(first));
    for (int r = 0; r < slots; ++r) o += fmt::format("  fkey_t v{} = next[f ^ {}u];\n", r, hex(fo[r]));
    o += "  __syncthreads();  // every thread has read `next`: the next tile may land there\n";
    o += fmt::format("  if (b + gridDim.x < {}{}) {{\n", tiles, sfx);
    o += emit_x0(p, "b + gridDim.x", "xn", idx, sfx);
    o += prefetch("xn");
    o += "  }\n";
    cur = &first;
  }
  bool smem_read = false;  // a later store to the tile must wait for every thread's reads
  int tr = 0;
  auto transition = [&](const FusedLayout& from, const FusedLayout& to) {
    const std::string a = fmt::format("s{}", tr), b = fmt::format("t{}", tr);
    ++tr;
    const std::vector<BitVec> S = shared_swizzle(from, to, p.tile_dim);
    bool plain_index = true;  // S the identity
    for (std::size_t k = 0; k < S.size(); ++k) plain_index = plain_index && S[k] == BitVec{1} << k;
    o += fmt::format("  // re-layout {} through shared memory (index = {}; lanes on 32 banks)\n", tr,
                     plain_index ? "tile coordinate" : "S · tile coordinate, S a bank swizzle");
    if (smem_read) o += "  __syncthreads();\n";
    o += fmt::format("  {{\n  unsigned {} = 0u;\n", a);
    o += matvec(a, "th", swizzled(S, from.threads), "unsigned int");
    const std::vector<BitVec> fo = swizzled(S, slot_offsets(from)), to_offs = swizzled(S, slot_offsets(to));
    for (int r = 0; r < slots; ++r) o += fmt::format("  tile[{} ^ {}u] = v{};\n", a, hex(fo[r]), r);
    o += "  }\n  __syncthreads();\n";
    o += fmt::format("  {{\n  unsigned {} = 0u;\n", b);
    o += matvec(b, "th", swizzled(S, to.threads), "unsigned int");
    for (int r = 0; r < slots; ++r) o += fmt::format("  v{} = tile[{} ^ {}u];\n", r, b, hex(to_offs[r]));
    o += "  }\n";
    smem_read = true;
  };
  for (std::size_t w = 0; w < p.windows.size(); ++w) {
    const FusedWindow& win = p.windows[w];
    o += fmt::format("  // ---- window {}: columns {}..{} on registers\n", w, win.first, win.last - 1);
    if (!(win.layout == *cur)) transition(*cur, win.layout);
    cur = &win.layout;
    for (std::size_t j = win.first; j < win.last; ++j) {
      const FusedColumn& c = s.columns[j];
      const ColumnForms f = column_forms(p, c);
      o += column_comment(s, p, j);
      o += emit_column_bits(p, c, f, win.layout.threads, j, k.floating, idx);
      const BitVec rho = *coordinates(win.layout.regs, p.deltas[j]);
      const int hb = 63 - std::countl_zero(rho);
      const BitVec mr = restrict_form(f.rho, win.layout.regs), fr = restrict_form(f.phi, win.layout.regs);
      for (int r = 0; r < slots; ++r) {
        if ((r >> hb) & 1) continue;
        const int q = r ^ static_cast<int>(rho);
        const bool flip_m = parity(mr & static_cast<BitVec>(r)), flip_f = parity(fr & static_cast<BitVec>(r));
        if (k.floating)
          o += fmt::format("  cs(v{}, v{}, {}m{}, {}f{});\n", r, q, flip_m ? "!" : "", j, flip_f ? "!" : "", j);
        else
          o += fmt::format("  cs(v{}, v{}, {}m{});\n", r, q, flip_m ? "!" : "", j);
      }
    }
  }
  if (!(p.store == *cur)) transition(*cur, p.store);
  // The store: x = x0 ⊕ K·i goes to out(x) = x, or A·x ⊕ out_xor with a folded permutation (all linear but the
  // constant, so out(x0) per block, then per thread and per slot as for the load).
  const bool folded = !s.out_cols.empty();
  auto out = [&](BitVec v) { return folded ? xor_of_columns(s.out_cols, v) : v; };
  std::vector<BitVec> store_threads;
  for (BitVec v : global_cols(p.store.threads)) store_threads.push_back(out(v));
  if (folded) {
    o += fmt::format("  // store: the key at x goes to A·x ^ {:#x} (a folded permutation; lanes on output runs of 2^{})\n",
                     s.out_xor, p.store_runs);
    std::vector<BitVec> blocks;
    for (BitVec v : p.block) blocks.push_back(out(v));
    o += fmt::format("  {} h = {}{};\n", idx, hex(s.out_xor), sfx) + matvec("h", "b", blocks, idx);
  } else {
    o += "  // store: the same lines the keys came from\n";
    o += fmt::format("  {} h = x0;\n", idx);
  }
  o += matvec("h", "th", store_threads, idx);
  const std::vector<BitVec> offs = slot_offsets(p.store);
  for (int r = 0; r < slots; ++r)
    o += fmt::format("  data[h ^ {}{}] = v{};\n", hex(out(xor_of_columns(p.tile, offs[r]))), sfx, r);
  if (pipelined) o += "  }\n";
  return o;
}

std::string generate_shared(const FusedTileSpec& s, const FusedKernelPlan& p, const KeyInfo& k, const char* idx,
                            const char* sfx) {
  const int T = p.tile_dim, threads = p.threads_per_block();
  const std::uint64_t size = std::uint64_t{1} << T;
  std::string o = fmt::format("  const {} b = blockIdx.x;\n", idx);
  o += emit_x0(p, "b", "x0", idx, sfx);
  o += "  const unsigned th = threadIdx.x;\n";
  const std::vector<BitVec> cols(p.tile.begin(), p.tile.end());
  auto global_of = [&](const std::string& var) {
    std::string e = fmt::format("    {} g = x0;\n", idx);
    return e + matvec("g", var, cols, idx, "    ");
  };
  o += "  // load: tile index i holds the key at x0 ^ K·i (consecutive i: whole lines)\n";
  o += fmt::format("  for (unsigned i = th; i < {}u; i += {}u) {{\n", size, threads);
  o += global_of("i");
  o += "    tile[i] = src[g];\n  }\n  __syncthreads();\n";
  for (std::size_t j = 0; j < s.columns.size(); ++j) {
    const FusedColumn& c = s.columns[j];
    const ColumnForms f = column_forms(p, c);
    const BitVec delta = p.deltas[j];
    const int hb = 63 - std::countl_zero(delta);
    o += column_comment(s, p, j);
    o += emit_column_bits(p, c, f, {}, j, k.floating, idx);
    o += fmt::format("  for (unsigned h = th; h < {}u; h += {}u) {{\n", size / 2, threads);
    o += fmt::format("    const unsigned i = (h & {}u) | ((h >> {}) << {}), l = i ^ {}u;\n", hex(low_mask(hb)), hb, hb + 1,
                     hex(delta));
    const std::string pm = f.rho ? fmt::format("(m{} ^ (__popc(i & {}u) & 1)) != 0", j, hex(f.rho)) : fmt::format("m{}", j);
    if (k.floating) {
      const std::string pf = f.phi ? fmt::format("(f{} ^ (__popc(i & {}u) & 1)) != 0", j, hex(f.phi)) : fmt::format("f{}", j);
      o += fmt::format("    cs(tile[i], tile[l], {}, {});\n", pm, pf);
    } else {
      o += fmt::format("    cs(tile[i], tile[l], {});\n", pm);
    }
    o += "  }\n  __syncthreads();\n";
  }
  o += fmt::format("  for (unsigned i = th; i < {}u; i += {}u) {{\n", size, threads);
  o += global_of("i");
  o += "    data[g] = tile[i];\n  }\n";
  return o;
}

}  // namespace

KernelSource generate_fused(const FusedTileSpec& s, const std::string& key_type, const FusedCodegenOptions& options) {
  const KeyInfo k = key_info(key_type);
  FusedCodegenOptions opt = options;
  opt.key_bytes = k.bytes;
  opt.floating_keys = k.floating;
  if (!s.out_cols.empty() && !options.out_of_place)
    throw std::invalid_argument("fused codegen: a pass with a folded permutation (out_cols) runs out of place; set out_of_place");
  const FusedKernelPlan p = plan_fused_kernel(s, opt);
  const auto [idx, sfx] = index_type(p.n);
  KernelSource ks;
  ks.kernel_name = "bmmc_fused";
  ks.block = static_cast<unsigned>(p.threads_per_block());
  ks.grid = p.blocks();
  ks.shared_bytes = (std::uint64_t{p.kind == FusedKernelKind::Pipelined ? 2u : 1u} << p.tile_dim) * static_cast<std::uint64_t>(k.bytes);
  if (ks.grid > 0x7fffffffull) throw std::invalid_argument("fused codegen: more than 2^31-1 blocks; n is too large");
  std::string o;
  o += "// bmmc generated kernel (" + std::string(kCodegenVersion) + "): fused compare-swap pass (docs/DESIGN.md §10)\n";
  o += fmt::format("// 2^{} keys of {} ({} bytes), {}; {} columns; block b owns the coset x0(b) ^ K of 2^{} keys,\n",
                   p.n, k.type, k.bytes, !s.out_cols.empty()     ? "from src into data at A·x ^ out_xor (a folded permutation)"
                   : options.out_of_place ? "from src into data (same positions)"
                                          : "in place",
                   s.columns.size(), p.tile_dim);
  o += "// K (global vectors):";
  for (BitVec v : p.tile) o += fmt::format(" {:#x}", v);
  o += "\n";
  if (p.kind != FusedKernelKind::Shared)
    o += fmt::format("// kernel: {}, {} keys per thread, {} windows, {} shared-memory round trips{}\n", to_string(p.kind),
                     1 << p.reg_bits, p.windows.size(), p.transitions(),
                     p.kind == FusedKernelKind::Pipelined
                         ? "; persistent blocks (tiles b, b + gridDim.x, ...: any grid up to the one below), the next "
                           "tile copied into shared memory with cp.async while this one is worked on"
                         : "");
  else
    o += fmt::format("// kernel: shared memory, one __syncthreads() per column\n");
  o += fmt::format("// launch: grid {} blocks x {} threads, dynamic shared {} bytes\n", ks.grid, ks.block, ks.shared_bytes);
  o += fmt::format("typedef {} fkey_t;\n", k.type);
  o += emit_cs(k);
  if (p.kind == FusedKernelKind::Pipelined) {
    const std::string size = std::to_string(k.bytes);
    o += "static __device__ __forceinline__ void cp_async(fkey_t* s, const fkey_t* g) {\n"
         "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n"
         "  asm volatile(\"cp.async.ca.shared.global [%0], [%1], " + size + ";\\n\" :: \"r\"((unsigned)__cvta_generic_to_shared(s)), \"l\"(g) : \"memory\");\n"
         "#else\n"
         "  *s = *g;\n"
         "#endif\n"
         "}\n"
         "static __device__ __forceinline__ void cp_async_wait_all() {\n"
         "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n"
         "  asm volatile(\"cp.async.wait_all;\\n\" ::: \"memory\");\n"
         "#endif\n"
         "}\n";
  }
  const std::uint64_t min_blocks = fused_blocks_per_sm(ks.block, ks.shared_bytes, fused_registers_per_thread(p, k.bytes));
  if (options.out_of_place)
    o += fmt::format("extern \"C\" __global__ void __launch_bounds__({}, {}) bmmc_fused(const fkey_t* __restrict__ src, "
                     "fkey_t* __restrict__ data) {{\n", ks.block, min_blocks);
  else
    o += fmt::format("extern \"C\" __global__ void __launch_bounds__({}, {}) bmmc_fused(fkey_t* __restrict__ data) {{\n"
                     "  const fkey_t* const src = data;\n", ks.block, min_blocks);
  o += "  extern __shared__ unsigned long long tile_words[];\n  fkey_t* const tile = (fkey_t*)tile_words;\n";
  o += p.kind != FusedKernelKind::Shared ? generate_registers(s, p, k, idx, sfx) : generate_shared(s, p, k, idx, sfx);
  o += "}\n";
  ks.source = std::move(o);
  return ks;
}

}  // namespace bmmc
