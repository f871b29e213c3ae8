// The fused pass's plan (see fused_plan.hpp): tile basis, block origins, register windows and their layouts.
#include "bmmc/codegen/fused_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <optional>
#include <random>
#include <stdexcept>

#include "bmmc/core/bit_matrix.hpp"
#include "bmmc/core/form_system.hpp"
#include "bmmc/core/subspace.hpp"
#include "tuning.hpp"

namespace bmmc {

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

// The plain load/store layout: lanes on tile coordinates 0 … 4, registers on the lowest coordinates ≥ 5, warps on
// the rest.
FusedLayout io_layout(int T, int R) {
  FusedLayout l;
  Subspace span(T);
  for (int m = 0; m < kLanes; ++m) {
    l.threads.push_back(BitVec{1} << m);
    span.insert(BitVec{1} << m);
  }
  add_units(span, l.regs, filler_order(T), R);
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

// A layout whose registers span D and whose thread vectors lie in the kernel of `forms` (forms on tile
// coordinates): then parity(form & i) depends on the register slot alone. Thread vectors are kernel vectors
// outside D (the round trips' swizzles, shared_swizzle, put any lanes on distinct banks); with `io` the lanes
// must be e_0 … e_4 (the block loads or stores straight from this layout: lane l reads tile coordinate l).
// Registers: D completed with unit vectors. Nothing when no such layout exists.
std::optional<FusedLayout> oriented_layout(int T, int R, const Subspace& D, const std::vector<BitVec>& forms, bool io) {
  FormSystem all(low_mask(T));
  for (BitVec f : forms) all.add(f);  // homogeneous: always consistent
  const std::vector<BitVec> ker = all.kernel();
  if ((D + Subspace::span(T, ker)).dim() != T) return std::nullopt;  // no complement of D inside the kernel
  FusedLayout l;
  Subspace span = D;
  if (io)
    for (int lane = 0; lane < kLanes; ++lane) {
      const BitVec e = BitVec{1} << lane;
      for (BitVec f : forms)
        if (parity(f & e)) return std::nullopt;
      if (!span.insert(e)) return std::nullopt;
      l.threads.push_back(e);
    }
  for (BitVec v : ker)
    if (static_cast<int>(l.threads.size()) < T - R && span.insert(v)) l.threads.push_back(v);
  if (static_cast<int>(l.threads.size()) != T - R) return std::nullopt;
  l.regs = D.basis();
  add_units(span, l.regs, filler_order(T), R - D.dim());
  return l;
}

// Whether the storage forms `rows` (bit k of the shared-memory index = parity(rows[k] & i)) put a warp's lanes
// of layout l on distinct banks: the 5 × 5 matrix rows[k](u_l) invertible (32 words), and its 4 × 4 corner for
// lanes 0 … 3 (a half-warp's 16 eight-byte slots).
bool banks_distinct(const std::vector<BitVec>& rows, const FusedLayout& l) {
  for (int m : {4, kLanes}) {
    const std::vector<BitVec> bank_rows(rows.begin(), rows.begin() + m);
    std::vector<BitVec> images;
    for (int lane = 0; lane < m; ++lane) images.push_back(apply_rows(bank_rows, l.threads[lane]));
    if (Subspace::span(m, images).dim() != m) return false;
  }
  return true;
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
  if (s.out_cols.empty() && s.out_xor != 0)
    throw std::invalid_argument("fused pass: out_xor is set but there is no folded permutation (out_cols is empty)");
  if (!s.out_cols.empty()) {
    bool inside = static_cast<int>(s.out_cols.size()) == s.n && (s.out_xor >> s.n) == 0;
    for (BitVec v : s.out_cols) inside = inside && (v >> s.n) == 0;
    if (!inside || Subspace::span(s.n, s.out_cols).dim() != s.n)
      throw std::invalid_argument(fmt::format(
          "fused pass: the folded permutation must be {} independent columns of {} bits (and out_xor below 2^{})", s.n,
          s.n, s.n));
  }
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
  int wide = k.dim();  // dim(V' + L_run_bits), where that tile still fits
  if (o.run_bits > 0) {
    const std::uint64_t tiles = o.kind == FusedKernelKind::Pipelined ? 2 : 1;
    const int cap = std::bit_width(kMaxSharedBytes / (tiles * static_cast<std::uint64_t>(std::max(o.key_bytes, 1)))) - 1;
    const int d = (k + Subspace::low_bits(s.n, std::min(o.run_bits, s.n))).dim();
    if (d <= std::min(cap, 20)) wide = d;
  }
  const int T = std::min(s.n, std::max({o.tile_bits, k.dim(), wide}));
  if (T > 20) throw std::invalid_argument(fmt::format("fused codegen: a tile of 2^{} keys is too large (at most 2^20)", T));
  // A folded permutation writes whole output runs when K holds the preimages of the low output bits.
  std::vector<BitVec> out_pre;  // A⁻¹·e_j, j = 0 … min(n, 5) − 1
  if (!s.out_cols.empty()) {
    const BitMatrix inv = BitMatrix::from_cols(s.n, s.out_cols).inverse();
    for (int j = 0; j < std::min(s.n, kLanes); ++j) out_pre.push_back(inv.col(j));
  }
  for (int m = 0; m < std::min(o.run_bits, s.n) && k.dim() < T; ++m) k.insert(BitVec{1} << m);
  for (BitVec v : out_pre) {
    Subspace t = k;
    if (t.insert(v) && t.dim() <= T) k = std::move(t);
  }
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
  if (p.kind == FusedKernelKind::Shared && !s.out_cols.empty())
    throw std::invalid_argument("fused codegen: a folded permutation (out_cols) needs the registers kernels, not the shared one");
  // Block origins: block[k] = e_outside[k] ⊕ K·z_k with every kept form vanishing on it, i.e. rho(z_k) =
  // parity(row & e_outside[k]) (phi(z_k) = bit first_bit of it), the forms taken first to last while all the
  // n − T systems agree. Worked example (the paper's sorting network, n = 24, first pass): the rows are
  // suffixes (0xffffff, 0xfffffe, …, all with the block positions 13 … 23), and block[k] = e_(13+k) ⊕ e_12
  // makes every one of them vanish, so no column's orientation depends on the block.
  FormSystem origin(low_mask(T));
  for (int pass = 0; pass < (o.floating_keys ? 2 : 1); ++pass)
    for (const FusedColumn& c : s.columns) {
      const ColumnForms f = column_forms(p, c);
      std::uint64_t rhs = 0;
      for (std::size_t k = 0; k < p.outside.size(); ++k) {
        const BitVec e = BitVec{1} << p.outside[k];
        rhs |= std::uint64_t(pass == 0 ? parity(c.row & e) : (e >> c.first_bit) & 1) << k;
      }
      if (o.fixed_orientation) origin.add(pass == 0 ? f.rho : f.phi, rhs);  // a form that disagrees is left out
    }
  for (std::size_t k = 0; k < p.outside.size(); ++k)
    p.block.push_back((BitVec{1} << p.outside[k]) ^ xor_of_columns(p.tile, origin.solution(static_cast<int>(k))));
  if (p.kind == FusedKernelKind::Shared) return p;
  p.reg_bits = R;
  for (Subspace& sp : spans) {  // to tile coordinates
    std::vector<BitVec> c;
    for (BitVec v : sp.basis()) c.push_back(*coordinates(p.tile, v));
    sp = Subspace::span(T, c);
  }
  p.plain = io_layout(T, R);
  auto io_form = [&](const FusedLayout& l) {
    return std::equal(l.threads.begin(), l.threads.begin() + kLanes, p.plain.threads.begin());
  };
  for (std::size_t w = 0; w < spans.size(); ++w) {
    FusedWindow win;
    win.first = starts[w];
    win.last = w + 1 < spans.size() ? starts[w + 1] : p.deltas.size();
    win.layout = window_layout(T, R, spans[w]);
    // The block loads into the first window (Registers) and stores from the last when their lanes are e_0 … e_4:
    // keep that, it saves a round trip through shared memory.
    const bool io = io_form(win.layout) && ((w == 0 && p.kind == FusedKernelKind::Registers) ||
                                            (w + 1 == spans.size() && s.out_cols.empty()));
    // Orientation forms of the window's columns, first to last (then the "first member" forms of floating
    // keys), each kept when a layout exists with the ones kept before.
    std::vector<BitVec> wanted, kept;
    for (int pass = 0; pass < (o.floating_keys ? 2 : 1); ++pass)
      for (std::size_t j = win.first; j < win.last; ++j) {
        const ColumnForms f = column_forms(p, s.columns[j]);
        const BitVec form = pass == 0 ? f.rho : f.phi;
        if (std::find(wanted.begin(), wanted.end(), form) == wanted.end()) wanted.push_back(form);
      }
    std::optional<FusedLayout> best;
    if (!o.fixed_orientation) wanted.clear();
    for (BitVec form : wanted) {
      kept.push_back(form);
      if (std::optional<FusedLayout> l = oriented_layout(T, R, spans[w], kept, io)) best = std::move(l);
      else kept.pop_back();
    }
    if (best) win.layout = std::move(*best);
    p.windows.push_back(std::move(win));
  }
  // Load straight into the first window's layout when its lanes are coordinates 0 … 4 (a warp then reads
  // whole runs), else into a plain layout and re-lay out; the same for the store.
  p.load = io_form(p.windows.front().layout) ? p.windows.front().layout : p.plain;
  p.store = io_form(p.windows.back().layout) && s.out_cols.empty() ? p.windows.back().layout : p.plain;
  if (!s.out_cols.empty()) {
    // Lanes on the output's low bits (their preimages, in tile coordinates) as far as K holds them, then plain
    // lanes; registers and warps on unit coordinates.
    FusedLayout l;
    Subspace span(T);
    for (BitVec v : out_pre) {
      const std::optional<BitVec> c = coordinates(p.tile, v);
      if (!c || !span.insert(*c)) break;
      l.threads.push_back(*c);
    }
    p.store_runs = static_cast<int>(l.threads.size());
    for (int m = 0; m < T && static_cast<int>(l.threads.size()) < kLanes; ++m)
      if (span.insert(BitVec{1} << m)) l.threads.push_back(BitVec{1} << m);
    add_units(span, l.regs, filler_order(T), R);
    add_units(span, l.threads, filler_order(T), T - R - kLanes);
    p.store = std::move(l);
  }
  for (const FusedWindow& w : p.windows)
    for (std::size_t j = w.first; j < w.last; ++j)
      if (!holds(w.layout, p.deltas[j], T)) throw std::logic_error("fused codegen: a window misses a direction");
  return p;
}

ColumnForms column_forms(const FusedKernelPlan& p, const FusedColumn& c) {
  ColumnForms f;
  for (int k = 0; k < p.tile_dim; ++k) {
    f.rho |= BitVec(parity(c.row & p.tile[k])) << k;
    f.phi |= ((p.tile[k] >> c.first_bit) & 1) << k;
  }
  return f;
}

BitVec restrict_form(BitVec form, const std::vector<BitVec>& vs) {
  BitVec r = 0;
  for (std::size_t m = 0; m < vs.size(); ++m) r |= BitVec(parity(form & vs[m])) << m;
  return r;
}

std::vector<BitVec> shared_swizzle(const FusedLayout& from, const FusedLayout& to, int T) {
  std::vector<BitVec> rows;
  for (int k = 0; k < T; ++k) rows.push_back(BitVec{1} << k);
  if (T < kLanes || (banks_distinct(rows, from) && banks_distinct(rows, to))) return rows;
  // Bank forms B_k = e_k* ⊕ c_k with c_k on coordinates ≥ 5 (S stays triangular, so invertible, and lanes with
  // no high coordinates keep their banks): c_k solving B_k(u_l) = [k = l] for the lanes u_l of one layout puts
  // that layout's lane l on bank l exactly (cheap addresses), and usually suits the other layout too.
  const BitVec high = low_mask(T) & ~low_mask(kLanes);
  for (const FusedLayout* l : {&to, &from}) {
    FormSystem c(high);
    bool solvable = true;
    for (int lane = 0; lane < kLanes && solvable; ++lane) {
      const BitVec u = l->threads[lane];
      solvable = c.add(u, ((u & low_mask(kLanes)) ^ (BitVec{1} << lane)));  // system k: c_k(u) = bit k of u ⊕ [k = lane]
    }
    if (!solvable) continue;
    for (int k = 0; k < kLanes; ++k) rows[k] = (BitVec{1} << k) | c.solution(k);
    if (banks_distinct(rows, from) && banks_distinct(rows, to)) return rows;
  }
  // Else any bank forms that suit both: two 5-dimensional lane spaces always have a common complement (the
  // forms' kernel), and about one random choice in 20 is one; the generator is seeded, so the kernel is
  // reproducible.
  std::mt19937_64 rng(0x5eed);
  for (int attempt = 0; attempt < 100000; ++attempt) {
    for (int k = 0; k < kLanes; ++k) rows[k] = rng() & low_mask(T);
    if (!banks_distinct(rows, from) || !banks_distinct(rows, to)) continue;
    Subspace span = Subspace::span(T, {rows.begin(), rows.begin() + kLanes});
    if (span.dim() != kLanes) continue;
    rows.resize(kLanes);
    for (int m = 0; m < T; ++m)
      if (span.insert(BitVec{1} << m)) rows.push_back(BitVec{1} << m);
    return rows;
  }
  throw std::logic_error("fused codegen: no bank swizzle found for a round trip");
}

BitVec apply_rows(const std::vector<BitVec>& rows, BitVec v) {
  return restrict_form(v, rows);  // the same parities: bit k = parity(rows[k] & v)
}

unsigned fused_registers_per_thread(const FusedKernelPlan& plan, int key_bytes) {
  using codegen_tuning::kFusedMinRegisters;
  if (plan.kind == FusedKernelKind::Shared) return kFusedMinRegisters;
  const unsigned words = static_cast<unsigned>(std::max(key_bytes / 4, 1));
  return std::clamp(codegen_tuning::kFusedRegistersPerWord * (1u << plan.reg_bits) * words, kFusedMinRegisters, 255u);
}

std::uint64_t fused_blocks_per_sm(unsigned threads, std::uint64_t shared_bytes, unsigned registers) {
  const std::uint64_t by_regs = 65536 / (std::uint64_t{std::max(registers, 1u)} * std::max(threads, 1u));
  const std::uint64_t by_smem = (228 * 1024) / std::max<std::uint64_t>(shared_bytes, 1);
  return std::max<std::uint64_t>(1, std::min({by_regs, by_smem, std::uint64_t{8}}));
}

}  // namespace bmmc
