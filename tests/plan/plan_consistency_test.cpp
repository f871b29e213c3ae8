// The algebraic consistency check of hand-made plans (plan_consistency.hpp) against the exhaustive plan checker
// (plan_check.hpp) as the oracle: every plan the planners make passes it (every variant, element size, launch
// order, in-place route), and over random single mutations of their tables it refuses exactly the plans the
// checker finds incorrect — neither a broken plan through nor a correct one refused.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

#include "bmmc/core/involution.hpp"
#include "bmmc/core/named.hpp"
#include "bmmc/plan/inplace_plan.hpp"
#include "bmmc/plan/plan_check.hpp"
#include "bmmc/plan/plan_consistency.hpp"
#include "bmmc/plan/planner.hpp"

namespace bmmc {
namespace {

// Whether the check accepts a Plan or an InPlacePlan.
template <class AnyPlan>
bool consistent(const AnyPlan& p) {
  try {
    require_consistent_plan(p, "test");
    return true;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

TEST(PlanConsistency, EveryPlannedPlanIsConsistent) {
  const Variant variants[] = {Variant::Naive,           Variant::Tiled,   Variant::TiledBanks,
                              Variant::TiledBanksIters, Variant::TwoPass, Variant::OnePass};
  int planned = 0;
  for (std::uint64_t seed = 1; seed <= 12; ++seed)
    for (int eb : {1, 2, 4, 8, 16}) {
      const int n = 8 + static_cast<int>(seed % 13);
      for (const Bmmc& f : {random_bmmc(n, seed), random_bpc(n, seed), bit_reverse(n), gray(n)})
        for (Variant v : variants) {
          PlanOptions o;
          o.variant = v;
          o.block_order = static_cast<BlockOrder>(seed % 4);
          Plan p;
          try {
            p = make_plan(f, eb, o);
          } catch (const std::invalid_argument&) {
            continue;  // the paper's tiled variants need a tiled BMMC
          }
          ++planned;
          EXPECT_NO_THROW(require_consistent_plan(p, "test")) << to_string(v) << " " << eb << " B\n" << describe(p);
        }
      // In place: every route (involution, BPC, unipotent, general) and the masked swap.
      for (const Bmmc& f : {random_bmmc(n, seed), random_bpc(n, seed), random_involution(n, seed), bit_reverse(n)}) {
        const InPlacePlan p = make_inplace_plan(f, eb);
        EXPECT_NO_THROW(require_consistent_plan(p, "test")) << p.route << "\n" << describe(p);
      }
      const InPlacePlan swap = make_swap_plan(n, {{0, n - 1}, {2, n - 2}}, eb, {}, BitVec{1} << (n - 3), 0);
      EXPECT_NO_THROW(require_consistent_plan(swap, "test")) << describe(swap);
    }
  EXPECT_GT(planned, 500);
}

// One random change to one table entry of a tile pass: a bit flipped in a row, block image or shared
// address column, a block image or read row copied over another, two block positions swapped.
void mutate(TilePass& t, std::mt19937_64& rng) {
  const BitVec bit = BitVec{1} << (rng() % static_cast<unsigned>(t.n()));
  const std::uint32_t address_bit = 1u << (rng() % 10);
  // Flips `b` in a random entry of `vec`; false when it has none.
  auto flip = [&](auto& vec, auto b) {
    if (vec.empty()) return false;
    vec[rng() % vec.size()] ^= b;
    return true;
  };
  // Copies entry 0 over entry 1; false when there are fewer than two.
  auto copy_first = [](auto& vec) {
    if (vec.size() < 2) return false;
    vec[1] = vec[0];
    return true;
  };
  for (;;) {
    bool done = false;
    switch (rng() % 9) {
      case 0: done = flip(t.read_rows, bit); break;
      case 1: done = flip(t.write_rows, bit); break;
      case 2: done = copy_first(t.block_images); break;
      case 3: done = flip(t.block_images, bit); break;
      case 4: done = flip(t.store_row_cols, address_bit); break;
      case 5: done = flip(t.load_lane_cols, address_bit); break;
      case 6: done = flip(t.load_row_cols, address_bit); break;
      case 7:
        done = t.block_positions.size() >= 2;
        if (done) std::swap(t.block_positions[0], t.block_positions[1]);
        break;
      case 8: done = copy_first(t.read_rows); break;
    }
    if (done) return;
  }
}

TEST(PlanConsistency, RefusesExactlyWhatTheCheckerFindsIncorrect) {
  std::mt19937_64 rng(20261127);
  int refused = 0, accepted = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const int n = 10 + static_cast<int>(rng() % 5), eb = 1 << (rng() % 5);
    const Bmmc f = trial % 2 ? random_bmmc(n, rng()) : random_bpc(n, rng());
    PlanOptions o;
    o.variant = Variant::OnePass;
    Plan p = make_plan(f, eb, o);
    auto& t = std::get<TilePass>(p.passes[0]);
    mutate(t, rng);
    const CheckReport r = check_plan(p);
    const bool ok = consistent(p);
    EXPECT_EQ(ok, r.correct) << "trial " << trial << ": consistency says " << ok << ", the checker " << r.correct
                             << " (" << r.first_error << ")\n"
                             << describe(p);
    (ok ? accepted : refused) += 1;
  }
  EXPECT_GT(refused, 200);  // most single changes break a plan; the rest must still pass
}

TEST(PlanConsistency, PassListsMustComposeToThePlan) {
  const Bmmc f = random_bmmc(12, 5);
  PlanOptions o;
  o.variant = Variant::TwoPass;
  Plan p = make_plan(f, 4, o);
  ASSERT_EQ(p.passes.size(), 2u);
  EXPECT_TRUE(consistent(p));
  std::swap(p.passes[0], p.passes[1]);
  EXPECT_FALSE(consistent(p));
  Plan naive{Variant::Naive, bit_reverse(10), 4, {NaivePass{identity(10), 4}}};
  try {
    require_consistent_plan(naive, "CpuPermuter");
    ADD_FAILURE() << "a naive identity pass under a bit-reverse plan was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("CpuPermuter: the passes compose to another permutation"), std::string::npos)
        << e.what();
  }
  Plan empty{Variant::OnePass, identity(6), 4, {}};
  EXPECT_FALSE(consistent(empty));
}

TEST(PlanConsistency, MessagesNameTheTable) {
  Plan p = make_plan(random_bmmc(14, 3), 4, {});
  auto& t = std::get<TilePass>(p.passes[0]);
  t.block_images[1] = t.block_images[0];
  try {
    require_consistent_plan(p, "execute_plan_cpu");
    ADD_FAILURE() << "a copied block image was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("execute_plan_cpu: pass 1 is inconsistent: block image 1 is"),
              std::string::npos)
        << e.what();
  }
  Plan q = make_plan(random_bmmc(14, 3), 4, {});
  std::get<TilePass>(q.passes[0]).read_rows[0] = BitVec{1} << 14;
  try {
    require_consistent_plan(q, "execute_plan_cpu");
    ADD_FAILURE() << "a read row beyond n was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("is not an index of 2^14 elements"), std::string::npos) << e.what();
  }
}

// In-place: the same single changes to an involution pass's tile, plus its partner map, masks and tile_fixed flag;
// the in-place checker (race freedom included) is the oracle for "refused", and whatever passes must be a plan the
// checker proves correct.
TEST(PlanConsistency, InPlaceRefusesBrokenPasses) {
  std::mt19937_64 rng(7);
  int refused = 0, tried = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 10 + static_cast<int>(rng() % 4), eb = 1 << (rng() % 5);
    InPlacePlan p = make_inplace_plan(random_involution(n, rng()), eb);
    auto* ip = p.passes.empty() ? nullptr : std::get_if<InvolutionPass>(&p.passes[0]);
    if (!ip) continue;
    ++tried;
    switch (rng() % 4) {
      case 0:
        mutate(ip->tile, rng);
        break;
      case 1:
        if (ip->partner_cols.empty()) continue;
        ip->partner_cols[rng() % ip->partner_cols.size()] ^= 1;
        break;
      case 2:
        ip->tile_fixed = !ip->tile_fixed;
        break;
      case 3:
        ip->mask_bits = BitVec{1} << (rng() % static_cast<unsigned>(n));
        break;
    }
    const bool ok = consistent(p);
    if (ok) {
      const CheckReport r = check_inplace_plan(p);
      EXPECT_TRUE(r.correct) << "trial " << trial << " accepted a plan the checker refuses: " << r.first_error << "\n"
                             << describe(p);
    }
    refused += !ok;
  }
  EXPECT_GT(tried, 100);
  EXPECT_GT(refused, tried / 3);
}

}  // namespace
}  // namespace bmmc
