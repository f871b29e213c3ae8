// The planner (see planner.hpp). Construction of a TilePass follows docs/DESIGN.md §4 step by step.
#include "bmmc/plan/planner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "bmmc/core/buffers.hpp"
#include "bmmc/core/factorize.hpp"
#include "bmmc/core/subspace.hpp"
#include "bmmc/plan/block_order.hpp"

namespace bmmc {

Subspace forced_tile_space(const Bmmc& bmmc, int s) {
  Subspace v = Subspace::low_bits(bmmc.n(), s);
  const BitMatrix ainv = bmmc.matrix().inverse();
  for (int j = 0; j < s; ++j) v.insert(ainv.col(j));
  return v;
}

namespace {

int log2_exact(int v, const char* what) {
  if (v <= 0 || (v & (v - 1)))
    throw std::invalid_argument(fmt::format("{} must be a power of two, got {}", what, v));
  return __builtin_ctz(static_cast<unsigned>(v));
}

struct TileOptions {
  int vector_bits;
  int target_row_bits;  // tile rows wanted (more than q adds "iters" directions)
  int warp_bits;        // log2 warps wanted; -1: one row per warp (no iters), up to 32 warps
  bool swizzle;
  RunSide longer_runs;  // which side the rows beyond q lengthen
};

// Coordinates (ρ, t) of v ∈ V' in the basis (e_0..e_{s-1}, R), where R is in reduced echelon form with
// pivots `pivot[i]` (the lowest set bit of R[i], all ≥ s): ρ_i is bit pivot[i] of v.
struct TileCoord {
  std::uint32_t rho;  // m bits
  std::uint32_t t;    // s bits
};

TileCoord tile_coord(BitVec v, const std::vector<BitVec>& rows, int s) {
  TileCoord c{0, 0};
  BitVec rest = v;
  for (size_t i = 0; i < rows.size(); ++i) {
    const BitVec pivot = rows[i] & -rows[i];
    if (v & pivot) {
      c.rho |= std::uint32_t{1} << i;
      rest ^= rows[i];
    }
  }
  if (rest >> s)
    throw std::logic_error("planner: a vector expected inside the tile space V' is outside it");
  c.t = static_cast<std::uint32_t>(rest);
  return c;
}

// Swizzle F: F2^{m+k} → F2^5 such that P_t ⊕ F·P_o is invertible (docs/DESIGN.md §4 step 5). P_t[l] and P_o[l]
// are the lane-part and the other part (element bits, then row bits) of lane basis vector l in phase 2.
// On ker P_o the map is P_t, injective; on a complement K' of the kernel we send P_o·b to P_t·b ⊕ w with
// w running over a complement of P_t(ker P_o), which makes the whole map invertible.
std::vector<std::uint32_t> choose_swizzle(const std::vector<std::uint32_t>& pt,
                                          const std::vector<std::uint32_t>& po, int other_bits) {
  // Split the 5 lane directions into kernel vectors of P_o and vectors with independent P_o images.
  std::vector<std::uint32_t> kernel_pt;            // P_t of a kernel basis
  std::vector<std::pair<BitVec, BitVec>> free_dirs;  // (P_o b, P_t b) for b in K'
  {
    // Eliminate on the P_o part, carrying P_t along.
    std::vector<std::pair<BitVec, BitVec>> rows;  // (po, pt), po reduced echelon by lowest bit
    for (int l = 0; l < kLaneBits; ++l) {
      BitVec o = po[l], t = pt[l];
      for (auto& [ro, rt] : rows)
        if (o & (ro & -ro)) { o ^= ro; t ^= rt; }
      if (o == 0)
        kernel_pt.push_back(static_cast<std::uint32_t>(t));
      else
        rows.emplace_back(o, t);
    }
    free_dirs = rows;
  }
  Subspace pt_kernel = Subspace::span(kLaneBits, {kernel_pt.begin(), kernel_pt.end()});
  if (pt_kernel.dim() != static_cast<int>(kernel_pt.size()))
    throw std::logic_error("planner: phase-2 lane map is not injective (tile map not invertible)");
  // Complement vectors w_i of P_t(ker P_o) in F2^5.
  std::vector<BitVec> w;
  for (int j : pt_kernel.coordinate_complement()) w.push_back(BitVec{1} << j);
  // F on the basis (P_o b_i …, completed by coordinate vectors) with targets (P_t b_i ⊕ w_i …, 0).
  std::vector<BitVec> basis, target;
  for (size_t i = 0; i < free_dirs.size(); ++i) {
    basis.push_back(free_dirs[i].first);
    target.push_back(free_dirs[i].second ^ w[i]);
  }
  Subspace spanned = Subspace::span(other_bits, basis);
  for (int c = 0; c < other_bits; ++c)
    if (spanned.insert(BitVec{1} << c)) {
      basis.push_back(BitVec{1} << c);
      target.push_back(0);
    }
  std::vector<std::uint32_t> f(other_bits);
  for (int c = 0; c < other_bits; ++c) {
    const BitVec k = *coordinates(basis, BitVec{1} << c);
    f[c] = static_cast<std::uint32_t>(xor_of_columns(target, k));
  }
  return f;
}

TilePass make_tile_pass(const Bmmc& bmmc, int eb, const TileOptions& o) {
  const int n = bmmc.n();
  const int s = o.vector_bits + kLaneBits;
  if (n < s) throw std::logic_error("planner: tile pass needs n >= vector bits + 5");
  // 1. V = L + A⁻¹L, then directions that lengthen the read runs (e_j) or the write runs (A⁻¹e_j) up to the
  //    wanted number of rows: each side's next candidate is its lowest j ≥ s not yet covered.
  Subspace v = forced_tile_space(bmmc, s);
  const BitMatrix ainv = bmmc.matrix().inverse();
  const int q = v.dim() - s;
  const int want = std::min(std::max(o.target_row_bits, q), n - s);
  int next_read = s, next_write = s;
  auto add = [&](bool write) {  // false when that side has no new direction left
    int& j = write ? next_write : next_read;
    for (; j < n; ++j)
      if (v.insert(write ? ainv.col(j) : BitVec{1} << j)) return true;
    return false;
  };
  bool write_turn = o.longer_runs != RunSide::Read;
  while (v.dim() - s < want) {
    if (!add(write_turn)) throw std::logic_error("planner: no direction left to lengthen the runs (V' is whole)");
    if (o.longer_runs == RunSide::Both) write_turn = !write_turn;
  }
  return make_tile_pass_on(bmmc, eb, o.vector_bits, v, q, o.warp_bits, o.swizzle);
}

// The largest r with e_0 … e_(r−1) inside `space`.
int low_run_bits(const Subspace& space) {
  int r = 0;
  while (r < space.n() && space.contains(BitVec{1} << r)) ++r;
  return r;
}

}  // namespace

Subspace tile_space(const TilePass& p) {
  std::vector<BitVec> basis(p.read_rows);
  for (int j = 0; j < p.segment_bits(); ++j) basis.push_back(BitVec{1} << j);
  return Subspace::span(p.n(), basis);
}

int read_run_bits(const TilePass& p) { return low_run_bits(tile_space(p)); }
int write_run_bits(const TilePass& p) { return low_run_bits(tile_space(p).image(p.bmmc.matrix())); }

TilePass make_tile_pass_on(const Bmmc& bmmc, int eb, int k, const Subspace& v, int q, int warp_bits, bool swizzle) {
  const int n = bmmc.n();
  const int s = k + kLaneBits;
  const BitMatrix& a = bmmc.matrix();
  const BitMatrix ainv = a.inverse();
  if (n < s || v.n() != n || !(Subspace::low_bits(n, s) + v == v))
    throw std::logic_error("planner: the tile space must contain the low vector bits + 5 directions");
  struct {
    int warp_bits;
    bool swizzle;
  } o{warp_bits, swizzle};
  TilePass p{bmmc};
  p.elem_bytes = eb;
  p.vector_bits = k;
  p.swizzle = o.swizzle;
  p.q = q;
  const int m = v.dim() - s;
  p.row_bits = m;
  p.warp_bits = o.warp_bits < 0 ? std::min(m, 5) : std::min(o.warp_bits, m);

  // 2. Basis of V' (e_0..e_{s-1} then R) and the coordinate complement W for the block index.
  const std::vector<BitVec>& vb = v.basis();
  p.read_rows.assign(vb.begin() + s, vb.end());
  p.block_positions = v.coordinate_complement();
  for (int w : p.block_positions) p.block_images.push_back(a.col(w));

  // 3. A·V' ⊇ L: its reduced basis is e_0..e_{s-1} then U.
  const Subspace av = v.image(a);
  p.write_rows.assign(av.basis().begin() + s, av.basis().end());

  // 4. T: (σ, τ') ↦ tile coordinates of A⁻¹(U·σ ⊕ τ').
  std::vector<TileCoord> t_sigma(m), t_tau(s);
  for (int i = 0; i < m; ++i) t_sigma[i] = tile_coord(ainv.apply(p.write_rows[i]), p.read_rows, s);
  for (int b = 0; b < s; ++b) t_tau[b] = tile_coord(ainv.apply(BitVec{1} << b), p.read_rows, s);

  // 5. Shared layout Λ(ρ, t) = ρ·2^s | e_t·2^5 | (ℓ_t ⊕ F(e_t, ρ)), with "other" bits o = e_t | ρ << k.
  const int other_bits = k + m;
  auto other_of = [&](const TileCoord& c) -> std::uint32_t {
    return (c.t & ((1u << k) - 1)) | (c.rho << k);
  };
  std::vector<std::uint32_t> f(other_bits, 0);
  if (o.swizzle) {
    std::vector<std::uint32_t> pt(kLaneBits), po(kLaneBits);
    for (int l = 0; l < kLaneBits; ++l) {
      pt[l] = t_tau[k + l].t >> k;
      po[l] = other_of(t_tau[k + l]);
    }
    f = choose_swizzle(pt, po, other_bits);
  }
  auto layout = [&](const TileCoord& c) -> std::uint32_t {
    const std::uint32_t other = other_of(c);
    return (c.rho << s) | ((c.t & ((1u << k) - 1)) << kLaneBits) | ((c.t >> k) ^ xor_of_columns(f, other));
  };
  for (int i = 0; i < m; ++i) p.store_row_cols.push_back(layout({1u << i, 0}));
  for (int e = 0; e < k; ++e) p.store_elem_cols.push_back(layout({0, 1u << e}));
  for (int i = 0; i < m; ++i) p.load_row_cols.push_back(layout(t_sigma[i]));
  for (int b = 0; b < s; ++b) p.load_lane_cols.push_back(layout(t_tau[b]));
  return p;
}

TilePass packed_bytes(const TilePass& pass) {
  if (pass.elem_bytes != 1 || pass.vector_bits < 2 || pass.packed_bytes)
    throw std::invalid_argument(fmt::format(
        "packed_bytes: needs an unpacked pass of 1-byte elements whose lanes move at least 4 (got {}-byte elements, "
        "2^{} per lane{})",
        pass.elem_bytes, pass.vector_bits, pass.packed_bytes ? ", already packed" : ""));
  auto pi = [](std::uint32_t w) -> std::uint32_t {
    return ((w >> 5) & 3u) | ((w & 31u) << 2) | (w & ~127u);
  };
  TilePass p = pass;
  p.packed_bytes = true;
  for (auto* cols : {&p.store_row_cols, &p.store_elem_cols, &p.load_row_cols, &p.load_lane_cols})
    for (std::uint32_t& c : *cols) c = pi(c);
  return p;
}

// 8-byte lane accesses: measured on an H100 (BENCHMARKS.md), n = 30 int32 one-pass went from 86–88% of
// cudaMemcpy with 4-byte accesses to 93–94% with 8- or 16-byte ones; 16-byte kernels JIT in ~350 ms against
// ~130 ms, so 8 bytes is the default. The planner narrows it when the tile would not fit in shared memory.
int default_vector_bits(int eb) { return eb >= 8 ? 0 : log2_exact(8 / eb, "vector"); }

const char* to_string(Variant v) noexcept {
  switch (v) {
    case Variant::Naive: return "naive";
    case Variant::Tiled: return "tiled";
    case Variant::TiledBanks: return "tiled-banks";
    case Variant::TiledBanksIters: return "tiled-banks-iters";
    case Variant::TwoPass: return "two-pass";
    case Variant::OnePass: return "one-pass";
    case Variant::Auto: return "auto";
  }
  return "auto";
}

const char* to_string(RunSide s) noexcept {
  switch (s) {
    case RunSide::Read: return "read";
    case RunSide::Write: return "write";
    case RunSide::Both: return "both";
  }
  return "read";
}

RunSide parse_run_side(std::string_view name) {
  for (RunSide s : {RunSide::Read, RunSide::Write, RunSide::Both})
    if (name == to_string(s)) return s;
  throw std::invalid_argument(fmt::format("unknown run side '{}': expected read, write or both", name));
}

Variant parse_variant(std::string_view name) {
  for (Variant v : {Variant::Naive, Variant::Tiled, Variant::TiledBanks, Variant::TiledBanksIters,
                    Variant::TwoPass, Variant::OnePass, Variant::Auto})
    if (name == to_string(v)) return v;
  throw std::invalid_argument(fmt::format(
      "unknown variant '{}': expected one of naive, tiled, tiled-banks, tiled-banks-iters, two-pass, "
      "one-pass, auto",
      name));
}

Variant resolve_variant(Variant requested, int n) noexcept {
  if (requested != Variant::Auto) return requested;
  return n < kLaneBits ? Variant::Naive : Variant::OnePass;
}

void check_plan_options(const PlanOptions& opt) {
  // Filled from integers (a binding, a configuration file), a value outside an enumeration would otherwise fall
  // through to some default.
  if (static_cast<unsigned>(opt.variant) > static_cast<unsigned>(Variant::Auto))
    throw std::invalid_argument(fmt::format("PlanOptions::variant holds {}, which names no variant; expected "
                                            "naive, tiled, tiled-banks, tiled-banks-iters, two-pass, one-pass or auto",
                                            static_cast<int>(opt.variant)));
  if (static_cast<unsigned>(opt.block_order) > static_cast<unsigned>(BlockOrder::Balanced))
    throw std::invalid_argument(fmt::format("PlanOptions::block_order holds {}, which names no launch order; "
                                            "expected coordinate, input, output or balanced",
                                            static_cast<int>(opt.block_order)));
  if (static_cast<unsigned>(opt.longer_runs) > static_cast<unsigned>(RunSide::Both))
    throw std::invalid_argument(fmt::format("PlanOptions::longer_runs holds {}, which names no side; expected "
                                            "read, write or both",
                                            static_cast<int>(opt.longer_runs)));
}

Plan make_plan(const Bmmc& bmmc, int eb, const PlanOptions& opt) {
  check_elem_bytes(eb);
  check_plan_options(opt);
  const int n = bmmc.n();
  Plan plan{resolve_variant(opt.variant, n), bmmc, eb, {}};
  // vector_bits > 4 first: eb << vector_bits overflows an int from 29 on
  if (opt.vector_bits < -1 || opt.vector_bits > 4 || (opt.vector_bits >= 0 && (eb << opt.vector_bits) > 16))
    throw std::invalid_argument(fmt::format(
        "vector bits {} with {}-byte elements: a lane access must be at most 16 bytes", opt.vector_bits, eb));
  if (opt.tile_bits < -1 || opt.tile_bits > 40)
    throw std::invalid_argument(fmt::format("tile bits must be -1 (rows forced by the permutation only) or 0..40, got {}",
                                            opt.tile_bits));
  if (opt.warp_bits < -1 || opt.warp_bits > 5)
    throw std::invalid_argument(fmt::format(
        "warp bits must be -1 (one warp per row) or 0..5 (at most 32 warps of 32 lanes), got {}", opt.warp_bits));
  if (opt.max_tile_bytes <= 0)
    throw std::invalid_argument(fmt::format("max tile bytes must be positive, got {}", opt.max_tile_bytes));

  const bool tiled_family = plan.variant == Variant::Tiled || plan.variant == Variant::TiledBanks ||
                            plan.variant == Variant::TiledBanksIters;
  if ((tiled_family || plan.variant == Variant::OnePass || plan.variant == Variant::TwoPass) &&
      n < kLaneBits)
    throw std::invalid_argument(fmt::format(
        "variant {} needs at least 32 elements (n >= 5); n = {} only supports naive (or auto)",
        to_string(plan.variant), n));
  if (tiled_family && !bmmc.is_tiled(kLaneBits))
    throw std::invalid_argument(fmt::format(
        "variant {} needs a tiled BMMC (paper §5.1: 5 columns whose top 5x5 block is invertible and whose "
        "lower rows are zero); this one is {}: use one-pass or two-pass",
        to_string(plan.variant), to_string(bmmc.classify())));

  if (plan.variant == Variant::Naive) {
    const int warp_bits = opt.warp_bits >= 0 ? opt.warp_bits : 3;  // 256 threads, fewer for tiny arrays
    plan.passes.push_back(NaivePass{bmmc, eb, std::min(32 << warp_bits, 1 << std::max(n, kLaneBits))});
    return plan;
  }

  auto fit = [&](const Bmmc& b, TileOptions o) {
    for (;;) {
      TilePass p = make_tile_pass(b, eb, o);
      if (opt.pack_bytes && eb == 1 && o.vector_bits >= 2) p = packed_bytes(p);
      if (static_cast<std::int64_t>(p.shared_bytes()) <= opt.max_tile_bytes) {
        p.block_order = block_order_columns(b.matrix(), tile_space(p), opt.block_order);
        return p;
      }
      if (o.target_row_bits > p.q) {
        o.target_row_bits = p.q;  // drop the "iters" directions first
      } else if (o.vector_bits > 0) {
        --o.vector_bits;          // then narrow the lane accesses (shrinks L and q)
      } else {
        throw std::invalid_argument(fmt::format(
            "the tile needs {} bytes but at most {} are allowed (max_tile_bytes; on a GPU the shared memory "
            "a block may use)",
            p.shared_bytes(), opt.max_tile_bytes));
      }
    }
  };
  // Rows wanted beyond those the permutation forces: the tile holds 2^tile_bits elements in rows of 2^s.
  auto target_rows = [&](int k) { return opt.tile_bits < 0 ? 0 : std::max(0, opt.tile_bits - (k + kLaneBits)); };

  if (tiled_family || plan.variant == Variant::TwoPass) {
    // The paper's kernels: one element per lane access (32-element tile rows).
    TileOptions o{0, target_rows(0), opt.warp_bits, opt.swizzle.value_or(plan.variant != Variant::Tiled),
                  opt.longer_runs};
    if (plan.variant == Variant::TwoPass) {
      const TiledSplit split = tiled_split(bmmc, kLaneBits);
      plan.passes.push_back(fit(split.first, o));
      plan.passes.push_back(fit(split.second, o));
    } else {
      plan.passes.push_back(fit(bmmc, o));
    }
    return plan;
  }

  // One-pass.
  const int k = std::min(opt.vector_bits >= 0 ? opt.vector_bits : default_vector_bits(eb), n - kLaneBits);
  TileOptions o{k, target_rows(k), opt.warp_bits, opt.swizzle.value_or(true), opt.longer_runs};
  plan.passes.push_back(fit(bmmc, o));
  return plan;
}

}  // namespace bmmc
