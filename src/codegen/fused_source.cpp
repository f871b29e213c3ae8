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

constexpr int kLanes = 5;  // a warp's 32 lanes read one line of 32 keys
constexpr int kMaxThreadBits = 10;  // 1024 threads per block
constexpr std::uint64_t kMaxSharedBytes = 227 * 1024;  // dynamic shared memory a block may opt into (sm_90)

// Adds unit vectors e_m, m in `order`, to `basis` (and `span`) while they are outside the span, until `want`
// vectors were added.
void add_units(Subspace& span, std::vector<BitVec>& basis, const std::vector<int>& order, int want) {
  for (int m : order) {
    if (want == 0) return;
    if (span.insert(BitVec{1} << m)) {
      basis.push_back(BitVec{1} << m);
      --want;
    }
  }
  if (want) throw std::logic_error("fused codegen: could not complete a layout basis");
}

// Unit positions 5 … T−1, then 0 … 4 (filler vectors prefer the non-lane coordinates).
std::vector<int> filler_order(int T) {
  std::vector<int> o;
  for (int m = kLanes; m < T; ++m) o.push_back(m);
  for (int m = 0; m < std::min(kLanes, T); ++m) o.push_back(m);
  return o;
}

// The plain load/store layout: lanes on tile coordinates 0 … 4, registers on `reg_support` (coordinates ≥ 5)
// and the lowest free coordinates, warps on the rest.
FusedLayout io_layout(int T, int R, BitVec reg_support) {
  FusedLayout l;
  Subspace span(T);
  for (int m = 0; m < kLanes; ++m) {
    l.threads.push_back(BitVec{1} << m);
    span.insert(BitVec{1} << m);
  }
  for (int m = kLanes; m < T; ++m)
    if ((reg_support >> m) & 1) {
      l.regs.push_back(BitVec{1} << m);
      span.insert(BitVec{1} << m);
    }
  add_units(span, l.regs, filler_order(T), R - static_cast<int>(l.regs.size()));
  add_units(span, l.threads, filler_order(T), T - R - kLanes);
  return l;
}

// A layout whose registers span D (docs/DESIGN.md §10, "register windows"): lanes u_l with low coordinates e_l
// and span(lanes) ∩ D = 0, so a warp's accesses to the tile stay on 32 distinct banks. With D's reduced basis
// (lowest-bit pivots): u_l = e_l when l is not a pivot of D; for the basis vector d with pivot l < 5,
// u_l = e_l ⊕ high(d) ⊕ e_m with m a fresh non-pivot position ≥ 5. A combination of lanes inside D would,
// after adding the d's, leave a non-zero combination of those e_m inside D, impossible at non-pivot positions.
// When D avoids coordinates 0 … 4 the lanes are e_0 … e_4: the layout can also load and store (whole runs).
FusedLayout window_layout(int T, int R, const Subspace& D) {
  FusedLayout l;
  std::vector<int> fresh;
  for (int m = kLanes; m < T; ++m)
    if (!((D.pivots() >> m) & 1)) fresh.push_back(m);
  std::size_t next = 0;
  Subspace span = D;
  for (int lane = 0; lane < kLanes; ++lane) {
    BitVec u = BitVec{1} << lane;
    if ((D.pivots() >> lane) & 1) {
      const BitVec d = *std::find_if(D.basis().begin(), D.basis().end(),
                                     [&](BitVec v) { return std::countr_zero(v) == lane; });
      if (next == fresh.size()) throw std::logic_error("fused codegen: no free coordinate for a lane");
      u ^= (d & ~low_mask(kLanes)) ^ (BitVec{1} << fresh[next++]);
    }
    if (!span.insert(u)) throw std::logic_error("fused codegen: lane vectors meet the window's directions");
    l.threads.push_back(u);
  }
  l.regs = D.basis();
  add_units(span, l.regs, filler_order(T), R - D.dim());
  add_units(span, l.threads, filler_order(T), T - R - kLanes);
  return l;
}

// The tile's basis: the runs e_0 … e_(c−1) first (lanes 0 … c−1 read consecutive keys), then 5 − c lane
// coordinates, then the rest. When the first and last windows' directions (G) can avoid coordinates 0 … 4 —
// G ∩ runs = 0 and room for the lanes — coordinates 5 … hold a basis of G: those windows then have the lanes
// e_0 … e_4 and the block loads and stores straight into and out of their layouts (no re-layout). Else the
// same for the first window alone, then the last, else K's own reduced basis order.
std::vector<BitVec> tile_basis(const Subspace& k, const Subspace* first, const Subspace* last) {
  const std::vector<BitVec>& kb = k.basis();
  const int T = k.dim();
  int c = 0;
  while (c < std::min(kLanes, T) && kb[c] == BitVec{1} << c) ++c;
  std::vector<const Subspace*> tries;
  if (first && last) tries.push_back(nullptr);  // both
  if (first) tries.push_back(first);
  if (last && last != first) tries.push_back(last);
  for (const Subspace* only : tries) {
    Subspace g = only ? *only : *first + *last;
    Subspace runs = Subspace::low_bits(k.n(), c);
    if ((runs + g).dim() != c + g.dim() || g.dim() > T - kLanes) continue;
    std::vector<BitVec> b(kb.begin(), kb.begin() + c);
    Subspace span = runs + g;
    for (BitVec v : kb)  // the other lanes: outside runs + G
      if (static_cast<int>(b.size()) < std::min(kLanes, T) && span.insert(v)) b.push_back(v);
    if (static_cast<int>(b.size()) < std::min(kLanes, T)) continue;
    for (BitVec v : g.basis()) b.push_back(v);
    Subspace all = Subspace::span(k.n(), b);
    for (BitVec v : kb)
      if (all.insert(v)) b.push_back(v);
    return b;
  }
  return kb;
}

bool holds(const FusedLayout& l, BitVec delta, int T) {
  return Subspace::span(T, l.regs).contains(delta);
}

}  // namespace

const char* to_string(FusedKernelKind k) noexcept {
  switch (k) {
    case FusedKernelKind::Shared: return "shared";
    case FusedKernelKind::Registers: return "registers";
    case FusedKernelKind::Pipelined: return "pipelined";
  }
  return "?";
}

int FusedKernelPlan::threads_per_block() const noexcept {
  if (kind != FusedKernelKind::Shared) return 1 << (tile_dim - reg_bits);
  return tile_dim <= 1 ? 1 : 1 << std::min(tile_dim - 1, 8);
}

int FusedKernelPlan::transitions() const noexcept {
  if (kind == FusedKernelKind::Shared) return 1;  // the load and the store go through the tile
  // Pipelined: the first window reads the prefetched tile from shared memory.
  int t = kind == FusedKernelKind::Pipelined ? 1 : 0;
  const FusedLayout* cur = kind == FusedKernelKind::Pipelined ? &windows.front().layout : &load;
  for (const FusedWindow& w : windows) {
    if (!(w.layout == *cur)) ++t;
    cur = &w.layout;
  }
  if (!(store == *cur)) ++t;
  return t;
}

void check_fused_tile(const FusedTileSpec& s) {
  if (s.n < 1 || s.n > 40) throw std::invalid_argument(fmt::format("fused pass: n = {}; expected 1..40", s.n));
  if (s.columns.empty()) throw std::invalid_argument("fused pass: no columns");
  for (BitVec v : s.tile)
    if (v >> s.n) throw std::invalid_argument(fmt::format("fused pass: tile vector {:#x} has bits above n = {}", v, s.n));
  const Subspace tile = Subspace::span(s.n, s.tile);
  for (std::size_t j = 0; j < s.columns.size(); ++j) {
    const FusedColumn& c = s.columns[j];
    if (c.dir == 0 || (c.dir >> s.n) || !tile.contains(c.dir))
      throw std::invalid_argument(fmt::format(
          "fused pass: column {} compares along {:#x}, which is zero or outside the tile space (dimension {}); "
          "every pair must lie inside one tile",
          j, c.dir, tile.dim()));
    if (c.row >> s.n) throw std::invalid_argument(fmt::format("fused pass: column {}: row {:#x} has bits above n", j, c.row));
    if (parity(c.row & c.dir) != 1)
      throw std::invalid_argument(fmt::format(
          "fused pass: column {}: the two members of a pair along {:#x} have the same logical bit 0 (row {:#x})", j,
          c.dir, c.row));
    if (c.first_bit < 0 || c.first_bit >= s.n || !((c.dir >> c.first_bit) & 1))
      throw std::invalid_argument(fmt::format(
          "fused pass: column {}: first_bit {} does not tell the members of a pair along {:#x} apart", j, c.first_bit,
          c.dir));
    if (c.c0 != 0 && c.c0 != 1) throw std::invalid_argument(fmt::format("fused pass: column {}: c0 = {}", j, c.c0));
  }
}

FusedKernelPlan plan_fused_kernel(const FusedTileSpec& s, const FusedCodegenOptions& o) {
  check_fused_tile(s);
  if (o.reg_bits < 1 || o.reg_bits > 6 || o.tile_bits < 1 || o.tile_bits > 20)
    throw std::invalid_argument(fmt::format(
        "fused codegen: tile_bits {} and reg_bits {}; expected 1 <= tile_bits <= 20, 1 <= reg_bits <= 6", o.tile_bits,
        o.reg_bits));
  FusedKernelPlan p;
  p.n = s.n;
  // K: V' widened with the lowest unit vectors it lacks (so a run of consecutive keys only grows).
  Subspace k = Subspace::span(s.n, s.tile);
  const int T = std::min(s.n, std::max(o.tile_bits, k.dim()));
  if (T > 20) throw std::invalid_argument(fmt::format("fused codegen: a tile of 2^{} keys is too large (at most 2^20)", T));
  for (int m = 0; m < s.n && k.dim() < T; ++m) k.insert(BitVec{1} << m);
  p.tile_dim = T;
  p.outside = k.coordinate_complement();
  // A block has at most 1024 threads: a large tile raises R to T − 10 (more keys per thread), and a tile that
  // would need more than 2^6 keys per thread, or has fewer than 2^(R+5) keys, runs on the shared kernel.
  const int R = std::max(o.reg_bits, T - kMaxThreadBits);
  // Pipelined needs two tiles of shared memory; where they do not fit, the registers kernel runs instead.
  const bool registers = o.kind != FusedKernelKind::Shared && T >= R + kLanes && R <= 6;
  const bool two_tiles = (std::uint64_t{2} << T) * static_cast<std::uint64_t>(o.key_bytes) <= kMaxSharedBytes;
  p.kind = !registers ? FusedKernelKind::Shared
           : o.kind == FusedKernelKind::Pipelined && two_tiles ? FusedKernelKind::Pipelined
                                                               : FusedKernelKind::Registers;
  // Greedy windows (Registers): a window grows while its directions span at most R dimensions (the same
  // monotone feasibility as the pass cut of schedule.hpp, so the greedy count is the fewest for this column
  // order). Spans are taken of the global directions: they do not depend on the tile basis chosen below.
  std::vector<Subspace> spans;
  std::vector<std::size_t> starts;
  if (p.kind != FusedKernelKind::Shared)
    for (std::size_t j = 0; j < s.columns.size(); ++j) {
      if (!spans.empty()) {
        Subspace t = spans.back();
        t.insert(s.columns[j].dir);
        if (t.dim() <= R) {
          spans.back() = std::move(t);
          continue;
        }
      }
      spans.push_back(Subspace::span(s.n, {s.columns[j].dir}));
      starts.push_back(j);
    }
  p.tile = tile_basis(k, spans.empty() ? nullptr : &spans.front(), spans.empty() ? nullptr : &spans.back());
  for (const FusedColumn& c : s.columns) {
    const std::optional<BitVec> delta = coordinates(p.tile, c.dir);
    if (!delta) throw std::logic_error("fused codegen: a direction left the tile");
    p.deltas.push_back(*delta);
  }
  if (p.kind == FusedKernelKind::Shared) return p;
  p.reg_bits = R;
  for (Subspace& sp : spans) {  // to tile coordinates
    std::vector<BitVec> c;
    for (BitVec v : sp.basis()) c.push_back(*coordinates(p.tile, v));
    sp = Subspace::span(T, c);
  }
  for (std::size_t w = 0; w < spans.size(); ++w) {
    FusedWindow win;
    win.first = starts[w];
    win.last = w + 1 < spans.size() ? starts[w + 1] : p.deltas.size();
    win.layout = window_layout(T, R, spans[w]);
    p.windows.push_back(std::move(win));
  }
  // Load straight into the first window's layout when its lanes are coordinates 0 … 4 (a warp then reads
  // whole runs), else into a plain layout and re-lay out; the same for the store.
  const FusedLayout plain = io_layout(T, R, 0);
  auto io_form = [&](const FusedLayout& l) {
    return std::equal(l.threads.begin(), l.threads.begin() + kLanes, plain.threads.begin());
  };
  p.load = io_form(p.windows.front().layout) ? p.windows.front().layout : plain;
  p.store = io_form(p.windows.back().layout) ? p.windows.back().layout : plain;
  for (const FusedWindow& w : p.windows)
    for (std::size_t j = w.first; j < w.last; ++j)
      if (!holds(w.layout, p.deltas[j], T)) throw std::logic_error("fused codegen: a window misses a direction");
  return p;
}

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

// Per column, the linear functionals of the tile coordinate i that the kernel evaluates: logical bit 0 of the
// key at x0 ⊕ K·i is parity(row_x0) ⊕ c0 ⊕ parity(rho & i), and its bit first_bit is bit first_bit of x0 ⊕
// parity(phi & i).
struct ColumnForms {
  BitVec rho = 0, phi = 0;
};

ColumnForms forms(const FusedKernelPlan& p, const FusedColumn& c) {
  ColumnForms f;
  for (int k = 0; k < p.tile_dim; ++k) {
    f.rho |= BitVec(parity(c.row & p.tile[k])) << k;
    f.phi |= ((p.tile[k] >> c.first_bit) & 1) << k;
  }
  return f;
}

// Restriction of the functional `form` (on tile coordinates) to a family of vectors: bit m = form(v_m).
BitVec restrict_form(BitVec form, const std::vector<BitVec>& vs) {
  BitVec r = 0;
  for (std::size_t m = 0; m < vs.size(); ++m) r |= BitVec(parity(form & vs[m])) << m;
  return r;
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

// `var` = the coset origin of block `b`: block index bit k deposited at global position outside[k]; runs of
// consecutive positions in one shift.
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
  return o;
}

std::string column_comment(const FusedTileSpec& s, const FusedKernelPlan& p, std::size_t j) {
  const FusedColumn& c = s.columns[j];
  return fmt::format("  // column {}: pairs x, x ^ {:#x} (tile coordinates ^ {:#x}); logical bit 0 = parity(x & {:#x}) ^ {}; {}\n",
                     j, c.dir, p.deltas[j], c.row, c.c0, c.descending ? "descending" : "ascending");
}

// Per-column runtime bits of a thread: o<j> = logical bit 0 of the key with tile coordinate U·θ (register slot 0)
// and, for floats, f<j> = its bit first_bit.
std::string emit_column_bits(const FusedKernelPlan& p, const FusedColumn& c, const ColumnForms& f,
                             const std::vector<BitVec>& threads, std::size_t j, bool floating, const char* idx) {
  std::string o;
  BitVec outside = 0;  // x0 has bits at the outside positions only
  for (int m : p.outside) outside |= BitVec{1} << m;
  const BitVec xrow = c.row & outside;
  const BitVec tmask = restrict_form(f.rho, threads);
  std::string e = std::to_string(c.c0 ^ (c.descending ? 1 : 0));
  if (xrow) e += " ^ " + popc(idx, fmt::format("x0 & {:#x}", xrow));
  if (tmask) e += fmt::format(" ^ __popc(th & {:#x}u)", tmask);
  // pmin for slot 0: logical bit 0 equals `descending`  ⇔  (bit0 ^ desc) == 0
  o += fmt::format("  const bool m{} = (({}) & 1) == 0;\n", j, e);
  if (floating) {
    const BitVec fmask = restrict_form(f.phi, threads);
    std::string g = fmt::format("(x0 >> {})", c.first_bit);
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
    // worked on; the copy lands at index = tile coordinate, so the first window reads it like a re-layout.
    const std::uint64_t tiles = p.blocks(), size = std::uint64_t{1} << p.tile_dim;
    const FusedLayout io = io_layout(p.tile_dim, R, 0);
    auto prefetch = [&](const std::string& origin) {
      std::string e = fmt::format("    unsigned c = 0u;\n{}    {} g = {};\n", matvec("c", "th", io.threads, "unsigned int", "    "),
                                  idx, origin);
      e += matvec("g", "th", global_cols(io.threads), idx, "    ");
      const std::vector<BitVec> offs = slot_offsets(io);
      for (int r = 0; r < slots; ++r)
        e += fmt::format("    cp_async(&next[c ^ {}u], &src[g ^ {}{}]);\n", hex(offs[r]), hex(xor_of_columns(p.tile, offs[r])), sfx);
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
    const FusedLayout& first = p.windows.front().layout;
    o += "  unsigned f = 0u;\n" + matvec("f", "th", first.threads, "unsigned int");
    const std::vector<BitVec> fo = slot_offsets(first);
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
    o += fmt::format("  // re-layout {} through shared memory (tile index = tile coordinate; lanes on 32 banks)\n", tr);
    if (smem_read) o += "  __syncthreads();\n";
    o += fmt::format("  {{\n  unsigned {} = 0u;\n", a);
    o += matvec(a, "th", from.threads, "unsigned int");
    const std::vector<BitVec> fo = slot_offsets(from), to_offs = slot_offsets(to);
    for (int r = 0; r < slots; ++r) o += fmt::format("  tile[{} ^ {}u] = v{};\n", a, hex(fo[r]), r);
    o += "  }\n  __syncthreads();\n";
    o += fmt::format("  {{\n  unsigned {} = 0u;\n", b);
    o += matvec(b, "th", to.threads, "unsigned int");
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
      const ColumnForms f = forms(p, c);
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
  o += "  // store: the same lines the keys came from\n";
  o += fmt::format("  {} h = x0;\n", idx);
  o += matvec("h", "th", global_cols(p.store.threads), idx);
  const std::vector<BitVec> offs = slot_offsets(p.store);
  for (int r = 0; r < slots; ++r) o += fmt::format("  data[h ^ {}{}] = v{};\n", hex(xor_of_columns(p.tile, offs[r])), sfx, r);
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
    const ColumnForms f = forms(p, c);
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

unsigned fused_registers_per_thread(const FusedKernelPlan& plan, int key_bytes) {
  if (plan.kind == FusedKernelKind::Shared) return 64;
  const unsigned words = static_cast<unsigned>(std::max(key_bytes / 4, 1));
  return std::clamp(4u * (1u << plan.reg_bits) * words, 64u, 255u);
}

std::uint64_t fused_blocks_per_sm(unsigned threads, std::uint64_t shared_bytes, unsigned registers) {
  const std::uint64_t by_regs = 65536 / (std::uint64_t{std::max(registers, 1u)} * std::max(threads, 1u));
  const std::uint64_t by_smem = (228 * 1024) / std::max<std::uint64_t>(shared_bytes, 1);
  return std::max<std::uint64_t>(1, std::min({by_regs, by_smem, std::uint64_t{8}}));
}

KernelSource generate_fused(const FusedTileSpec& s, const std::string& key_type, const FusedCodegenOptions& options) {
  const KeyInfo k = key_info(key_type);
  FusedCodegenOptions opt = options;
  opt.key_bytes = k.bytes;
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
                   p.n, k.type, k.bytes, options.out_of_place ? "from src into data (same positions)" : "in place",
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
