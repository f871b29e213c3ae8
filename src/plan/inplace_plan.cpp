// The in-place planner (see inplace_plan.hpp): docs/DESIGN.md §8 step by step.
#include "bmmc/plan/inplace_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <stdexcept>

#include "bmmc/core/buffers.hpp"
#include "bmmc/core/involution.hpp"
#include "bmmc/core/subspace.hpp"

namespace bmmc {

// The mask may only name bits that f leaves alone on every index: row i of A is e_i and c_i = 0, so
// (f(x))_i = x_i and a masked swap stays an involution that never crosses between matching and other indices.
void check_inplace_mask(const Bmmc& f, BitVec mask_bits, BitVec mask_value) {
  if (mask_bits & ~low_mask(f.n()))
    throw std::invalid_argument(fmt::format("mask bits {:#x} reach beyond the {} index bits", mask_bits, f.n()));
  if (mask_value & ~mask_bits)
    throw std::invalid_argument(
        fmt::format("mask value {:#x} sets bits outside the mask bits {:#x}", mask_value, mask_bits));
  for (int i = 0; i < f.n(); ++i)
    if (((mask_bits >> i) & 1) && (f.matrix().row(i) != (BitVec{1} << i) || ((f.complement() >> i) & 1)))
      throw std::invalid_argument(fmt::format(
          "mask bit {} is moved by the permutation; a mask may only name bits the permutation leaves in place", i));
}

namespace {

// Block index of the coset y ⊕ V': reduce y modulo V' (its pivot bits cleared), then gather the bits at the
// block positions W (W = the non-pivot positions, so the reduced vector lives on W).
std::uint64_t coset_index(const Subspace& v, const std::vector<int>& w, BitVec y) {
  const BitVec r = v.reduce(y);
  std::uint64_t b = 0;
  for (size_t i = 0; i < w.size(); ++i) b |= ((r >> w[i]) & 1) << i;
  return b;
}

// V' for an involution: V = L + A·L (A = A⁻¹, so this is the forced space of §4 and A·V = V), then extra
// directions e_j (with A·e_j, which keeps V' A-invariant: A maps span(e_j, A·e_j) onto itself) up to the
// wanted rows. Never a direction touching the mask. Returns false when V itself touches the mask.
bool involution_tile_space(const Bmmc& f, int s, int want_rows, BitVec mask_bits, Subspace& v, int& q) {
  const int n = f.n();
  const BitMatrix& a = f.matrix();
  v = Subspace::low_bits(n, s);
  for (int j = 0; j < s; ++j) v.insert(a.col(j));
  q = v.dim() - s;
  for (BitVec b : v.basis())
    if (b & mask_bits) return false;
  const int want = std::min(std::max(want_rows, q), n - s);
  // Fixed directions first (one dimension each), then pairs: long runs of low bits either way.
  for (int round = 0; round < 2; ++round)
    for (int j = s; j < n && v.dim() - s < want; ++j) {
      const BitVec e = BitVec{1} << j, ae = a.col(j);
      if ((mask_bits >> j) & 1 || v.contains(e)) continue;
      Subspace t = v;
      t.insert(e);
      const bool one = t.contains(ae);
      if (round == 0 && !one) continue;
      if (!one && v.dim() - s + 2 > want) continue;
      t.insert(ae);
      v = t;
    }
  return true;
}

InvolutionPass make_tile_involution(const Bmmc& f, int eb, int k, const Subspace& v, int q, const PlanOptions& opt,
                                    BitVec mask_bits, BitVec mask_value) {
  InvolutionPass p;
  p.tile = make_tile_pass_on(f, eb, k, v, q, opt.warp_bits, opt.swizzle.value_or(true));
  const BitMatrix& a = f.matrix();
  const std::vector<int>& w = p.tile.block_positions;
  p.partner_base = coset_index(v, w, f.complement());
  for (int pos : w) p.partner_cols.push_back(coset_index(v, w, a.col(pos)));
  p.tile_fixed = true;
  for (BitVec b : v.basis()) {
    if (!v.contains(a.apply(b))) throw std::logic_error("in-place planner: the tile space is not A-invariant");
    if (a.apply(b) != b) p.tile_fixed = false;
  }
  p.mask_bits = mask_bits;
  p.mask_value = mask_value;
  return p;
}

int target_rows(const PlanOptions& opt, int k) {
  return opt.tile_bits < 0 ? 0 : std::max(0, opt.tile_bits - (k + kLaneBits));
}

}  // namespace

std::uint64_t NaiveInvolutionPass::blocks() const {
  const std::uint64_t total = std::uint64_t{1} << (n() - vector_bits);
  return (total + threads_per_block - 1) / threads_per_block;
}

const Bmmc& pass_bmmc(const InPlacePass& p) {
  if (const auto* t = std::get_if<InvolutionPass>(&p)) return t->bmmc();
  return std::get<NaiveInvolutionPass>(p).bmmc;
}

InPlacePass make_involution_pass(const Bmmc& f, int eb, const PlanOptions& opt, BitVec mask_bits,
                                 BitVec mask_value) {
  check_elem_bytes(eb);
  check_plan_options(opt);
  if (!is_involution(f))
    throw std::invalid_argument(fmt::format(
        "the permutation is not an involution (A·A ≠ I or A·c ≠ c), so one in-place pass cannot run it; "
        "plan it with make_inplace_plan (several passes), or out of place. It is {}",
        f.to_string()));
  check_inplace_mask(f, mask_bits, mask_value);
  // The caller's value, before any clamping (vector_bits > 4 first: eb << vector_bits overflows from 29 on).
  if (opt.vector_bits < -1 || opt.vector_bits > 4 || (opt.vector_bits >= 0 && (eb << opt.vector_bits) > 16))
    throw std::invalid_argument(fmt::format(
        "vector bits {} with {}-byte elements: a lane access must be at most 16 bytes", opt.vector_bits, eb));
  const int n = f.n();
  auto naive = [&] {
    const int warp_bits = opt.warp_bits >= 0 ? opt.warp_bits : 3;
    return NaiveInvolutionPass{f, eb, std::min(32 << warp_bits, 1 << std::max(n, kLaneBits)), mask_bits, mask_value};
  };
  if (opt.variant == Variant::Naive || n < kLaneBits) return naive();
  int k = std::min(opt.vector_bits >= 0 ? opt.vector_bits : default_vector_bits(eb), n - kLaneBits);
  // Swaps among high bits (and masks on them) carry the low bits: a tile would be fixed pointwise and only
  // copied through shared memory, so each thread swaps whole vectors instead (warp runs of 32 vectors).
  // With no shared memory there are no bank conflicts to avoid, so the lanes move 16 bytes unless told otherwise.
  const int carried = carried_low_bits(f);
  int direct_k = opt.vector_bits >= 0 ? k : std::countr_zero(static_cast<unsigned>(16 / eb));
  direct_k = std::min(direct_k, carried - kLaneBits);
  if (mask_bits) direct_k = std::min(direct_k, std::countr_zero(mask_bits));
  if (carried >= k + kLaneBits && direct_k >= 0 && (mask_bits & low_mask(direct_k)) == 0) {
    const int warp_bits = opt.warp_bits >= 0 ? opt.warp_bits : 3;
    return NaiveInvolutionPass{f, eb, 1 << std::min(kLaneBits + warp_bits, n - direct_k), mask_bits, mask_value,
                               direct_k};
  }
  int want = target_rows(opt, k);
  for (;;) {
    Subspace v(n);
    int q = 0;
    if (!involution_tile_space(f, k + kLaneBits, want, mask_bits, v, q)) return naive();
    InvolutionPass p = make_tile_involution(f, eb, k, v, q, opt, mask_bits, mask_value);
    if (static_cast<std::int64_t>(p.shared_bytes()) <= opt.max_tile_bytes) return p;
    if (want > q && v.dim() - (k + kLaneBits) > q) {
      want = std::min(want, v.dim() - (k + kLaneBits)) - 1;  // drop extra rows first
    } else if (k > 0) {
      --k;  // then narrow the lane accesses
      want = std::min(want, target_rows(opt, k));
    } else {
      throw std::invalid_argument(fmt::format(
          "the two tiles of an in-place block need {} bytes but at most {} are allowed (max_tile_bytes; on a GPU "
          "the shared memory a block may use)",
          p.shared_bytes(), opt.max_tile_bytes));
    }
  }
}

InPlacePlan make_inplace_plan(const Bmmc& f, int eb, const PlanOptions& opt) {
  check_elem_bytes(eb);
  check_plan_options(opt);  // also for the identity, which has no factors
  const InvolutionFactorization fac = factor_involutions_explained(f);
  InPlacePlan plan{f, eb, fac.route, {}};
  for (const Bmmc& g : fac.factors) plan.passes.push_back(make_involution_pass(g, eb, opt));
  return plan;
}

InPlacePlan make_swap_plan(int n, const std::vector<std::pair<int, int>>& pairs, int eb, const PlanOptions& opt,
                           BitVec mask_bits, BitVec mask_value) {
  check_elem_bytes(eb);
  check_plan_options(opt);  // also when the swaps are the identity and no pass is planned
  const Bmmc f = swap_index_bits(n, pairs);
  check_inplace_mask(f, mask_bits, mask_value);
  InPlacePlan plan{f, eb, f.is_identity() ? "identity" : "involution", {}, mask_bits, mask_value};
  if (!f.is_identity()) plan.passes.push_back(make_involution_pass(f, eb, opt, mask_bits, mask_value));
  return plan;
}

std::string describe(const InPlacePlan& plan) {
  std::string s = fmt::format("in place: n = {}, {}-byte elements, {} pass(es) ({})", plan.n(), plan.elem_bytes,
                              plan.passes.size(), plan.route);
  if (plan.mask_bits) s += fmt::format(", mask bits {:#x} = {:#x}", plan.mask_bits, plan.mask_value);
  s += "\n";
  for (size_t i = 0; i < plan.passes.size(); ++i) {
    s += fmt::format("pass {}: involution {}\n", i + 1, to_string(pass_bmmc(plan.passes[i]).classify()));
    if (const auto* t = std::get_if<InvolutionPass>(&plan.passes[i])) {
      const Plan one{Variant::OnePass, t->bmmc(), plan.elem_bytes, {t->tile}};
      std::string d = describe(one);
      for (size_t at = 0; (at = d.find('\n', at)) != std::string::npos && at + 1 < d.size(); at += 3)
        d.replace(at, 1, "\n  ");
      s += "  " + d;
      if (!d.empty() && d.back() != '\n') s += "\n";
      s += fmt::format("  in place: two tiles per block ({} shared bytes), partner(b) = {:#x} ^ M·b, tile {}\n",
                       t->shared_bytes(), t->partner_base, t->tile_fixed ? "fixed by A (pointwise-fixed cosets skip)"
                                                                         : "moved by A");
    } else {
      const auto& nv = std::get<NaiveInvolutionPass>(plan.passes[i]);
      if (nv.vector_bits > 0)
        s += fmt::format("  direct: each thread swaps a vector of {} elements ({} bytes) with its image, no tile; "
                         "{} blocks x {} threads\n",
                         1 << nv.vector_bits, nv.elem_bytes << nv.vector_bits, nv.blocks(), nv.threads_per_block);
      else
        s += fmt::format("  naive: one element per thread swaps with its image, {} blocks x {} threads\n",
                         nv.blocks(), nv.threads_per_block);
    }
  }
  return s;
}

}  // namespace bmmc
