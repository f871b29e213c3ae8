// The in-place plan checker (see inplace_plan.hpp, check_inplace_plan). The tile of an involution pass is the
// out-of-place tile kernel run on two origins, so check_pass proves its access pattern (every block reads its
// coset x0 ⊕ V' and writes f(x) for each x it read, coalesced and conflict-free); what is left to prove here
// is the schedule: which blocks run, what they own, and that nothing is written before it is read.
#include <fmt/format.h>

#include <stdexcept>
#include <vector>

#include "bmmc/core/involution.hpp"
#include "bmmc/plan/inplace_plan.hpp"

namespace bmmc {

namespace {

constexpr std::uint32_t kNobody = 0xffffffffu;

struct Schedule {
  explicit Schedule(int n) : owner(std::size_t{1} << n, kNobody) {}
  std::vector<std::uint32_t> owner;  // the block (or thread) that reads and writes each element
  CheckReport report;

  void fail(const std::string& what) {
    if (report.correct) report.first_error = what;
    report.correct = false;
  }
  // Block `who` reads x before its barrier; it must be the only one that ever does.
  bool take(std::uint64_t x, std::uint32_t who) {
    if (owner[x] != kNobody) {
      fail(fmt::format("element {} is read by block {} and by block {}: blocks race", x, owner[x], who));
      return false;
    }
    owner[x] = who;
    return true;
  }
  bool write(std::uint64_t y, std::uint32_t who) {
    if (owner[y] != who) {
      fail(fmt::format("block {} writes element {} that it has not read (owner {})", who, y,
                       owner[y] == kNobody ? std::string("nobody") : std::to_string(owner[y])));
      return false;
    }
    return true;
  }
};

bool masked(BitVec x, BitVec bits, BitVec value) { return (x & bits) == value; }

// The map a pass performs: f where the mask matches, the identity elsewhere.
BitVec moved_to(const Bmmc& f, BitVec bits, BitVec value, BitVec x) {
  return masked(x, bits, value) ? f.apply(x) : x;
}

void run(const NaiveInvolutionPass& p, Schedule& s) {
  const int k = p.vector_bits, carried = carried_low_bits(p.bmmc);
  // A thread moves 2^k consecutive elements as one vector: that is only the element-wise swap when f carries
  // the vector bits (and the mask names none of them); a warp's 32 vectors are runs on both sides when f also
  // carries the lane bits, which is what the planner asks of the direct pass.
  if (k > 0 && (carried < k || (p.mask_bits & low_mask(k)))) {
    s.fail(fmt::format("the pass moves vectors of 2^{} elements but f or the mask splits them", k));
    return;
  }
  s.report.coalesced = carried >= k + kLaneBits;  // otherwise the swaps scatter
  const std::uint64_t total = std::uint64_t{1} << p.n();
  for (std::uint64_t x = 0; x < total; ++x) {
    const BitVec y = moved_to(p.bmmc, p.mask_bits, p.mask_value, x);
    const auto who = static_cast<std::uint32_t>(x >> k);  // the thread of x's vector
    if (y <= x) {
      if (y < x && (y >> k) == who) {
        s.fail(fmt::format("element {} and its image {} share the vector of thread {}", x, y, who));
        return;
      }
      continue;  // fixed, or the partner thread swaps
    }
    if (moved_to(p.bmmc, p.mask_bits, p.mask_value, y) != x) {
      s.fail(fmt::format("thread {} swaps {} with {} but {} does not map back", who, x, y, y));
      return;
    }
    if (!s.take(x, who) || !s.take(y, who)) return;
  }
}

void run(const InvolutionPass& p, Schedule& s) {
  const CheckReport tile = check_pass(Pass{p.tile});
  if (!tile.correct) s.fail("the tile: " + tile.first_error);
  s.report.coalesced = s.report.coalesced && tile.coalesced;
  s.report.max_bank_conflict = std::max(s.report.max_bank_conflict, tile.max_bank_conflict);
  s.report.warp_accesses += tile.warp_accesses;
  const TilePass& t = p.tile;
  const Bmmc& f = t.bmmc;
  // V' as offsets from a coset's origin: the s lane directions and the row vectors.
  std::vector<BitVec> basis;
  for (int j = 0; j < t.segment_bits(); ++j) basis.push_back(BitVec{1} << j);
  basis.insert(basis.end(), t.read_rows.begin(), t.read_rows.end());
  const std::uint64_t tile_size = std::uint64_t{1} << basis.size();
  for (std::uint64_t b = 0; b < t.blocks(); ++b) {
    const std::uint64_t pb = p.partner(b);
    if (pb >= t.blocks() || p.partner(pb) != b) {
      s.fail(fmt::format("block {} has partner {}, which is out of range or does not pair back", b, pb));
      return;
    }
    const auto [x0, z] = block_origin(t, b);
    const BitVec px0 = block_origin(t, pb).x0;
    // f(coset of b) must be the coset of the partner: z and px0 differ by a vector of V'.
    bool inside = false;
    for (std::uint64_t i = 0; i < tile_size && !inside; ++i) inside = (z ^ xor_of_columns(basis, i)) == px0;
    if (!inside) {
      s.fail(fmt::format("block {}: f(x0) = {} is not in the coset of its partner {}", b, z, pb));
      return;
    }
    if (pb < b) continue;
    const bool fixed = (pb == b && p.tile_fixed && z == x0) || !masked(x0, p.mask_bits, p.mask_value);
    if (fixed) {
      for (std::uint64_t i = 0; i < tile_size; ++i) {
        const BitVec x = x0 ^ xor_of_columns(basis, i);
        if (moved_to(f, p.mask_bits, p.mask_value, x) != x) {
          s.fail(fmt::format("block {} returns early but element {} must move", b, x));
          return;
        }
      }
      continue;
    }
    const auto who = static_cast<std::uint32_t>(b);
    const int cosets = pb == b ? 1 : 2;  // the block's own, and its partner's when that is another
    const BitVec origins[2] = {x0, px0};
    for (int k = 0; k < cosets; ++k)
      for (std::uint64_t i = 0; i < tile_size; ++i)
        if (!s.take(origins[k] ^ xor_of_columns(basis, i), who)) return;
    for (int k = 0; k < cosets; ++k)
      for (std::uint64_t i = 0; i < tile_size; ++i)
        if (!s.write(f.apply(origins[k] ^ xor_of_columns(basis, i)), who)) return;
  }
}

}  // namespace

CheckReport check_inplace_plan(const InPlacePlan& plan) {
  if (plan.n() > 30)
    throw std::invalid_argument(
        fmt::format("the plan checker executes every element; n = {} is too large (at most 30)", plan.n()));
  CheckReport total;
  total.max_bank_conflict = 0;
  Bmmc composed(BitMatrix::identity(plan.n()));
  for (const InPlacePass& pass : plan.passes) {
    Schedule s(plan.n());
    s.report.max_bank_conflict = 0;
    const Bmmc& f = pass_bmmc(pass);
    if (!is_involution(f)) s.fail("a pass is not an involution");
    std::visit([&](const auto& p) { run(p, s); }, pass);
    // Everything that moves must belong to a block that ran.
    for (std::uint64_t x = 0; s.report.correct && x < s.owner.size(); ++x)
      if (s.owner[x] == kNobody && moved_to(f, plan.mask_bits, plan.mask_value, x) != x)
        s.fail(fmt::format("element {} must move but no block reads it", x));
    const CheckReport& r = s.report;
    if (!r.correct && total.correct) total.first_error = r.first_error;
    total.correct = total.correct && r.correct;
    total.coalesced = total.coalesced && r.coalesced;
    total.max_bank_conflict = std::max(total.max_bank_conflict, r.max_bank_conflict);
    total.warp_accesses += r.warp_accesses;
    composed = compose(f, composed);
  }
  if (!(composed == plan.bmmc)) {
    if (total.correct) total.first_error = "the passes do not compose to the plan's permutation";
    total.correct = false;
  }
  return total;
}

}  // namespace bmmc
