#include "bmmc/plan/plan_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <stdexcept>
#include <vector>

#include "bmmc/plan/block_order.hpp"

namespace bmmc {

namespace {

constexpr int kLanes = 1 << kLaneBits;

// Distinct words per bank, worst bank, for one warp access (32 lanes, one word each).
int bank_degree(const std::array<std::uint32_t, kLanes>& words) {
  std::array<std::uint32_t, kLanes> w = words;
  std::sort(w.begin(), w.end());
  std::array<int, 32> per_bank{};
  int worst = 0;
  for (int i = 0; i < kLanes; ++i) {
    if (i > 0 && w[i] == w[i - 1]) continue;  // same word: a broadcast, not a conflict
    worst = std::max(worst, ++per_bank[w[i] % 32]);
  }
  return worst;
}

// The coalescing rule: lane ℓ element e at idx[ℓ·2^k + e]; the warp must cover one aligned run of
// 32·2^k elements and each lane a vector of 2^k consecutive elements starting at a multiple of 2^k.
bool coalesced_access(const std::vector<std::uint64_t>& idx, int k) {
  const std::uint64_t span = std::uint64_t{kLanes} << k;
  const std::uint64_t base = idx[0] & ~(span - 1);
  std::vector<bool> seen(span, false);
  for (int l = 0; l < kLanes; ++l) {
    const std::uint64_t first = idx[static_cast<size_t>(l) << k];
    if (first & ((std::uint64_t{1} << k) - 1)) return false;
    for (int e = 0; e < (1 << k); ++e) {
      const std::uint64_t x = idx[(static_cast<size_t>(l) << k) + e];
      if (x != first + e || (x & ~(span - 1)) != base || seen[x - base]) return false;
      seen[x - base] = true;
    }
  }
  return true;
}

class Checker {
 public:
  explicit Checker(int n) : written_(std::size_t{1} << n, false) {}
  CheckReport report;

  void fail(const std::string& what) {
    if (report.correct) report.first_error = what;
    report.correct = false;
  }
  void access(const std::vector<std::uint64_t>& idx, int k) {
    ++report.warp_accesses;
    if (!coalesced_access(idx, k)) report.coalesced = false;
  }
  void output(std::uint64_t y, std::uint64_t x, const Bmmc& b) {
    if (b.apply(x) != y) fail(fmt::format("element from input {} landed at {} but y = A·x ^ c = {}", x, y, b.apply(x)));
    if (written_[y]) fail(fmt::format("output {} written twice", y));
    written_[y] = true;
  }
  void finish() {
    for (std::size_t y = 0; y < written_.size(); ++y)
      if (!written_[y]) {
        fail(fmt::format("output {} never written", y));
        break;
      }
  }

 private:
  std::vector<bool> written_;
};

void run(const NaivePass& p, Checker& c) {
  const std::uint64_t total = std::uint64_t{1} << p.n();
  c.report.max_bank_conflict = 0;
  std::vector<std::uint64_t> xs(kLanes), ys(kLanes);
  for (std::uint64_t warp = 0; warp * kLanes < total; ++warp) {
    const int lanes = static_cast<int>(std::min<std::uint64_t>(kLanes, total - warp * kLanes));
    for (int l = 0; l < lanes; ++l) {
      xs[l] = warp * kLanes + l;
      ys[l] = p.bmmc.apply(xs[l]);
      c.output(ys[l], xs[l], p.bmmc);
    }
    if (lanes == kLanes) {
      c.access(xs, 0);
      c.access(ys, 0);
    } else {
      c.report.coalesced = false;  // fewer than 32 elements: no whole warp access exists
    }
  }
}

void run(const TilePass& p, Checker& c) {
  const int k = p.vector_bits, s = p.segment_bits(), m = p.row_bits;
  const int vec = 1 << k;
  const std::uint32_t words = p.plane_words();
  const std::uint64_t low = (std::uint64_t{1} << s) - 1;
  if (p.read_rows.size() != static_cast<size_t>(m) || p.write_rows.size() != static_cast<size_t>(m) ||
      p.store_row_cols.size() != static_cast<size_t>(m) || p.load_row_cols.size() != static_cast<size_t>(m) ||
      p.store_elem_cols.size() != static_cast<size_t>(k) || p.load_lane_cols.size() != static_cast<size_t>(s) ||
      p.block_images.size() != p.block_positions.size()) {
    c.fail("tile pass tables have inconsistent sizes");
    return;
  }
  if (!p.packing_valid()) {
    c.fail(fmt::format("packed_bytes with {}-byte elements and 2^{} per lane: packing needs 1-byte elements, at "
                       "least 4 per lane", p.elem_bytes, p.vector_bits));
    return;
  }
  if (!is_block_order(p.block_order, static_cast<int>(p.block_positions.size()))) {
    c.fail(fmt::format("launch order M ({} columns) is not a bijection of the {} block bits", p.block_order.size(),
                       p.block_positions.size()));
    return;
  }
  std::vector<std::int64_t> tile(words);
  std::vector<std::uint64_t> idx(static_cast<size_t>(kLanes) << k);
  std::array<std::uint32_t, kLanes> banks{};
  const int warps = 1 << p.warp_bits, iters = p.iters();
  for (std::uint64_t launch = 0; launch < p.blocks(); ++launch) {
    const std::uint64_t b = launched_block(p, launch);
    const auto [x0, z] = block_origin(p, b);
    const std::uint64_t y0 = z & ~low, delta = z & low;
    std::fill(tile.begin(), tile.end(), -1);
    // Phase 1: read lines, store to the tile.
    for (int w = 0; w < warps; ++w)
      for (int it = 0; it < iters; ++it) {
        const std::uint64_t rho = static_cast<std::uint64_t>(w) | (static_cast<std::uint64_t>(it) << p.warp_bits);
        const std::uint64_t row = x0 ^ xor_of_columns(p.read_rows, rho);
        for (int l = 0; l < kLanes; ++l)
          for (int e = 0; e < vec; ++e) idx[(static_cast<size_t>(l) << k) + e] = row ^ ((std::uint64_t(l) << k) | e);
        c.access(idx, k);
        for (int e = 0; e < vec; ++e) {
          for (int l = 0; l < kLanes; ++l) {
            const std::uint32_t a =
                xor_of_columns(p.store_row_cols, rho) ^ xor_of_columns(p.store_elem_cols, e) ^ p.lane_address(l);
            banks[l] = p.word_of(a);
            if (a >= words) { c.fail(fmt::format("shared store address {} outside the tile ({} addresses)", a, words)); return; }
            if (tile[a] >= 0) { c.fail(fmt::format("block {}: shared word {} stored twice", b, a)); return; }
            tile[a] = static_cast<std::int64_t>(idx[(static_cast<size_t>(l) << k) + e]);
          }
          c.report.max_bank_conflict = std::max(c.report.max_bank_conflict, bank_degree(banks));
        }
      }
    // Phase 2: load from the tile, write lines.
    for (int w = 0; w < warps; ++w)
      for (int it = 0; it < iters; ++it) {
        const std::uint64_t sigma = static_cast<std::uint64_t>(w) | (static_cast<std::uint64_t>(it) << p.warp_bits);
        const std::uint64_t row = y0 ^ xor_of_columns(p.write_rows, sigma);
        for (int l = 0; l < kLanes; ++l)
          for (int e = 0; e < vec; ++e) idx[(static_cast<size_t>(l) << k) + e] = row ^ ((std::uint64_t(l) << k) | e);
        c.access(idx, k);
        for (int e = 0; e < vec; ++e) {
          for (int l = 0; l < kLanes; ++l) {
            const std::uint64_t tau = ((std::uint64_t(l) << k) | e) ^ delta;
            const std::uint32_t a = xor_of_columns(p.load_row_cols, sigma) ^ xor_of_columns(p.load_lane_cols, tau);
            banks[l] = p.word_of(a);
            if (a >= words || tile[a] < 0) {
              c.fail(fmt::format("block {}: shared word {} read but never stored", b, a));
              return;
            }
            c.output(idx[(static_cast<size_t>(l) << k) + e], static_cast<std::uint64_t>(tile[a]), p.bmmc);
          }
          c.report.max_bank_conflict = std::max(c.report.max_bank_conflict, bank_degree(banks));
        }
      }
  }
}

}  // namespace

CheckReport check_pass(const Pass& pass) {
  const int n = std::visit([](const auto& p) { return p.n(); }, pass);
  if (n > 30) throw std::invalid_argument(fmt::format("the plan checker executes every element; n = {} is too large (at most 30)", n));
  Checker c(n);
  std::visit([&](const auto& p) { run(p, c); }, pass);
  c.finish();
  return c.report;
}

CheckReport check_plan(const Plan& plan) {
  CheckReport total;
  total.max_bank_conflict = 0;
  Bmmc composed = Bmmc(BitMatrix::identity(plan.n()));
  for (const Pass& pass : plan.passes) {
    const CheckReport r = check_pass(pass);
    if (!r.correct && total.correct) total.first_error = r.first_error;
    total.correct = total.correct && r.correct;
    total.coalesced = total.coalesced && r.coalesced;
    total.max_bank_conflict = std::max(total.max_bank_conflict, r.max_bank_conflict);
    total.warp_accesses += r.warp_accesses;
    composed = compose(std::visit([](const auto& p) -> const Bmmc& { return p.bmmc; }, pass), composed);
  }
  if (!(composed == plan.bmmc)) {
    if (total.correct) total.first_error = "the passes do not compose to the plan's permutation";
    total.correct = false;
  }
  return total;
}

}  // namespace bmmc
