// The simulated distributed permutation against the global reference: 1, 2, 4, ..., 1024 ranks with small local
// sizes, every element size, random BMMCs and BPCs and the named maps, through the exchange path (input
// preserved, input destroyed, pipelined with odd piece counts, one all-to-all with counts) and the fused path; poisoned outputs, so an
// element never written cannot pass; the communicator's counts; bad buffers refused before anything is written.
#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "bmmc/cpu/reference.hpp"
#include "bmmc/dist/schedule.hpp"
#include "bmmc/dist/simulate.hpp"
#include "dist/error_message.hpp"
#include "dist_test_support.hpp"

namespace bmmc {
namespace {

constexpr unsigned char kPoison = 0xa5;

enum class Path { Preserved, Destroyed, AllToAll, Fused };

// Runs one path on the whole array split into rank slices (separate allocations per rank, as on GPUs) and
// compares with permute_reference on the whole array.
void expect_dist_matches(const Bmmc& b, int g, int eb, Path path, int pieces, std::uint64_t seed,
                         const std::string& what, int depth = 2) {
  const DistPlan plan = make_dist_plan(b, g, eb);
  const std::size_t slice = plan.local_elems() * eb, total = slice * plan.ranks();
  std::vector<unsigned char> whole(total), ref(total);
  test::fill_random(whole, seed);
  permute_reference(b, whole.data(), ref.data(), eb);
  std::vector<std::vector<unsigned char>> in(plan.ranks()), out(plan.ranks());
  std::vector<const void*> cin;
  std::vector<void*> vin, vout;
  for (BitVec r = 0; r < plan.ranks(); ++r) {
    in[r].assign(whole.begin() + r * slice, whole.begin() + (r + 1) * slice);
    out[r].assign(slice + 16, kPoison);  // +16: vectors of size 0 have no data()
    cin.push_back(in[r].data());
    vin.push_back(in[r].data());
    vout.push_back(out[r].data());
  }
  DistSimOptions o;
  o.pieces = pieces;
  o.depth = depth;
  o.cpu.threads = 1;
  if (path == Path::Preserved) {
    const DistSimReport rep = simulate_dist_permute(plan, cin, vout, o);
    EXPECT_EQ(rep.rounds, plan.rounds() * rep.pieces);
    // Pipelined, a kept chunk is packed straight into its receive slot: no message.
    const std::uint64_t kept = pieces == 1 ? 0 : dist_traffic(plan).ranks_keeping_a_chunk;
    EXPECT_EQ(rep.messages, (plan.ranks() * plan.rounds() - kept) * rep.pieces);
    EXPECT_EQ(rep.remote_bytes, dist_traffic(plan).total_remote_bytes);
    if (pieces != 1)
      EXPECT_EQ(rep.scratch_bytes_per_rank, make_piece_schedule(plan, pieces, depth).scratch_elems * eb);
    for (BitVec r = 0; r < plan.ranks(); ++r)  // the input is preserved
      ASSERT_EQ(std::memcmp(in[r].data(), whole.data() + r * slice, slice), 0) << what << ": input of rank " << r;
  } else if (path == Path::Destroyed) {
    EXPECT_EQ(simulate_dist_permute_destroying(plan, vin, vout, o).scratch_bytes_per_rank, 0u);
  } else if (path == Path::AllToAll) {
    const DistSimReport rep = simulate_dist_alltoall(plan, cin, vout, o);
    EXPECT_EQ(rep.messages, plan.ranks() * plan.rounds());
    EXPECT_EQ(rep.remote_bytes, dist_traffic(plan).total_remote_bytes);
    for (BitVec r = 0; r < plan.ranks(); ++r)
      ASSERT_EQ(std::memcmp(in[r].data(), whole.data() + r * slice, slice), 0) << what << ": input of rank " << r;
  } else {
    simulate_dist_fused(plan, cin, vout);
  }
  for (BitVec r = 0; r < plan.ranks(); ++r)
    ASSERT_EQ(std::memcmp(out[r].data(), ref.data() + r * slice, slice), 0)
        << what << ": rank " << r << " of " << plan.ranks() << ", m = " << plan.local_bits << ", k = " << plan.k
        << ", elem_bytes = " << eb << ", pieces = " << pieces << "\n"
        << describe(plan);
}

TEST(DistSimulate, AllMapsAllElementSizesUpTo64Ranks) {
  for (int g = 0; g <= 6; ++g)
    for (int m = 0; m <= 8; m += (m < 4 ? 1 : 2))
      for (int eb : {1, 2, 4, 8, 16})
        for (const auto& [name, b] : test::maps_for(m + g, 3 + g * 31 + m * 7 + eb)) {
          if (eb != 4 && name != "random-bmmc" && name != "random-bpc") continue;
          for (Path path : {Path::Preserved, Path::Destroyed, Path::AllToAll, Path::Fused})
            expect_dist_matches(b, g, eb, path, 1, g + m + eb, name);
        }
}

TEST(DistSimulate, RandomMapsUpTo1024Ranks) {
  for (int g = 7; g <= 10; ++g)
    for (int m : {0, 2, 5, 8})
      for (int eb : {1, 4, 16})
        for (const Bmmc& b : {random_bmmc(m + g, g * m + eb), random_bpc(m + g, g + m + eb)})
          for (Path path : {Path::Preserved, Path::Destroyed, Path::AllToAll, Path::Fused})
            expect_dist_matches(b, g, eb, path, 1, m + eb, "random, G = " + std::to_string(1 << g));
}

TEST(DistSimulate, NamedMapsOn1024Ranks) {
  for (const auto& [name, b] : test::maps_for(14, 9))
    for (Path path : {Path::Preserved, Path::AllToAll, Path::Fused}) expect_dist_matches(b, 10, 4, path, 1, 5, name);
}

TEST(DistSimulate, LargerLocalArrays) {
  for (int eb : {2, 8})
    for (int g : {1, 3}) {
      expect_dist_matches(random_bmmc(14 + g, eb + g), g, eb, Path::Preserved, 1, 1, "random, m = 14");
      expect_dist_matches(random_bmmc(14 + g, eb + g), g, eb, Path::Destroyed, 1, 1, "random, m = 14");
      expect_dist_matches(random_bpc(16 + g, eb + g), g, eb, Path::Fused, 1, 1, "random BPC, m = 16");
    }
}

TEST(DistSimulate, ExtremesKZeroAndKEqualsG) {
  for (int g : {0, 1, 3, 5})
    for (int m : {0, 3, 6})
      for (Path path : {Path::Preserved, Path::Destroyed, Path::AllToAll, Path::Fused}) {
        expect_dist_matches(test::block_triangular(m, g, 11 + m), g, 4, path, 1, 2, "k = 0");
        if (m >= g) expect_dist_matches(test::rank_local_swap_all(m, g, 4 + m), g, 4, path, 1, 2, "k = g");
      }
}

TEST(DistSimulate, PipelinedOddPieceCounts) {
  for (int pieces : {0, 1, 2, 3, 5, 7, 32, 1000})  // 0: the fewest within 1/8 scratch
    for (int g : {0, 1, 2, 4})
      for (int eb : {1, 4, 16}) {
        expect_dist_matches(random_bmmc(9 + g, pieces + g), g, eb, Path::Preserved, pieces, eb, "random, pieced");
        expect_dist_matches(test::one_bit_swap(9, g ? g : 1, 2, 0), g ? g : 1, eb, Path::Preserved, pieces, eb,
                            "one-bit swap, pieced");
        expect_dist_matches(test::block_triangular(9, g, pieces), g, eb, Path::Preserved, pieces, eb, "k = 0, pieced");
      }
}

// A deeper ring of buffers (the exchange running up to depth − 1 pieces ahead of the unpacks) moves the same data.
TEST(DistSimulate, PipelinedDeeperRings) {
  for (int depth : {3, 4, 7})
    for (int pieces : {5, 64})
      for (int g : {1, 2}) {
        const std::string what = "random, depth " + std::to_string(depth);
        expect_dist_matches(random_bmmc(10 + g, depth * pieces + g), g, 4, Path::Preserved, pieces, depth, what, depth);
        expect_dist_matches(test::one_bit_swap(10, g, 2, 0), g, 8, Path::Preserved, pieces, depth, "swap, " + what,
                            depth);
      }
}

// Where only some ranks keep a chunk (local bit 0 → rank bit 0 → rank bit 1 → local bit 0: ranks 0 and 3 keep), the
// send buffers keep a segment for every chunk and the keeping ranks pack theirs straight into their receive slot.
TEST(DistSimulate, PipelinedWhenOnlySomeRanksKeepAChunk) {
  const Bmmc cycle = test::bit_cycle_through_ranks(11);
  ASSERT_EQ(dist_traffic(make_dist_plan(cycle, 2, 4)).ranks_keeping_a_chunk, 2u);
  for (int pieces : {0, 3, 8})
    for (int eb : {1, 4, 16})
      expect_dist_matches(cycle, 2, eb, Path::Preserved, pieces, eb, "some ranks keep a chunk");
}

TEST(DistSimulate, PipelinedScratchIsAnEighthWith32Pieces) {
  const DistPlan plan = make_dist_plan(random_bmmc(16, 4), 4, 4);  // m = 12, k = 4, chunks of 256 elements
  std::vector<unsigned char> in(plan.local_elems() * 4 * plan.ranks()), out(in.size());
  test::fill_random(in, 1);
  DistSimOptions o;
  o.pieces = 32;
  const DistSimReport rep = simulate_dist_permute_array(plan, in.data(), out.data(), o);
  EXPECT_EQ(rep.pieces, 32);
  EXPECT_LE(rep.scratch_bytes_per_rank * 8, plan.local_elems() * 4);
  std::vector<unsigned char> ref(in.size());
  permute_reference(plan.bmmc, in.data(), ref.data(), 4);
  EXPECT_EQ(out, ref);
  o.pieces = 1;
  EXPECT_EQ(simulate_dist_permute_array(plan, in.data(), out.data(), o).scratch_bytes_per_rank, plan.local_elems() * 4);
}

// A DistPlan edited by hand (each field the sweep broke: the pre- and post-pass, the schedule, the complements,
// the geometry) is refused before anything is written, naming the field; the planner's own plan runs.
TEST(DistSimulate, HandEditedPlansAreRefusedBeforeWriting) {
  const DistPlan good = make_dist_plan(random_bmmc(12, 7), 2, 4);  // 4 ranks of 1024 int32
  std::vector<std::vector<std::uint32_t>> in(4, std::vector<std::uint32_t>(1024, 1)),
      out(4, std::vector<std::uint32_t>(1024, 7));
  std::vector<const void*> cin;
  std::vector<void*> vout;
  for (int r = 0; r < 4; ++r) {
    cin.push_back(in[r].data());
    vout.push_back(out[r].data());
  }
  struct Edit {
    const char* field;
    void (*apply)(DistPlan&);
  };
  const Edit edits[] = {
      {"post", [](DistPlan& p) { p.post = random_bmmc(p.local_bits, 3); }},
      {"pre", [](DistPlan& p) { p.pre = random_bmmc(p.local_bits, 3); }},
      {"round_cols", [](DistPlan& p) { p.round_cols.assign(static_cast<std::size_t>(p.k), 0xFFFF); }},
      {"sender_rep_complement", [](DistPlan& p) { p.sender_rep_complement = 0xFF; }},
      {"dest_complement", [](DistPlan& p) { p.dest_complement ^= 1; }},
      {"k", [](DistPlan& p) { p.k = 11; }},
      {"local_bits", [](DistPlan& p) { p.local_bits = 9; }},
      {"the DistPlan's", [](DistPlan& p) { p.bmmc = random_bmmc(12, 8); }},  // the tables of another map
      {"rank bits g = 64", [](DistPlan& p) { p.rank_bits = 64; }},
  };
  for (const Edit& e : edits) {
    DistPlan p = good;
    e.apply(p);
    const std::string m1 = test::error_message([&] { simulate_dist_permute(p, cin, vout); });
    const std::string m2 = test::error_message([&] { simulate_dist_alltoall(p, cin, vout); });
    EXPECT_NE(m1.find("simulate_dist_permute: "), std::string::npos) << e.field << ": " << m1;
    EXPECT_NE(m1.find(e.field), std::string::npos) << e.field << ": " << m1;
    EXPECT_NE(m2.find("simulate_dist_alltoall: "), std::string::npos) << e.field << ": " << m2;
    for (const auto& o : out)
      for (std::uint32_t v : o) ASSERT_EQ(v, 7u) << e.field << ": output written before the error";
  }
  EXPECT_NO_THROW(simulate_dist_permute(good, cin, vout));
}

TEST(DistSimulate, BadBuffersAreRefusedBeforeWriting) {
  const DistPlan plan = make_dist_plan(random_bmmc(6, 1), 2, 4);  // 4 ranks of 16 elements
  std::vector<std::vector<std::uint32_t>> in(4, std::vector<std::uint32_t>(16, 1)), out(4, std::vector<std::uint32_t>(16, 7));
  std::vector<const void*> cin;
  std::vector<void*> vout, vin;
  for (int r = 0; r < 4; ++r) {
    cin.push_back(in[r].data());
    vin.push_back(in[r].data());
    vout.push_back(out[r].data());
  }
  const auto untouched = [&] {
    for (const auto& o : out)
      for (std::uint32_t v : o) ASSERT_EQ(v, 7u);
  };
  const auto msg = [](auto&& f) { return test::error_message(f); };
  // World size not matching the plan.
  EXPECT_NE(msg([&] { simulate_dist_permute(plan, {cin[0], cin[1]}, {vout[0], vout[1]}); }).find("plan is for 4 ranks"),
            std::string::npos);
  // Overlapping buffers of two ranks.
  auto overlap = vout;
  overlap[2] = static_cast<std::uint32_t*>(vout[1]) + 8;
  EXPECT_NE(msg([&] { simulate_dist_permute(plan, cin, overlap); }).find("overlaps"), std::string::npos);
  // A null buffer, a misaligned buffer.
  auto null_out = vout;
  null_out[3] = nullptr;
  EXPECT_NE(msg([&] { simulate_dist_fused(plan, cin, null_out); }).find("rank 3"), std::string::npos);
  auto odd = vout;
  odd[0] = reinterpret_cast<unsigned char*>(vout[0]) + 1;
  EXPECT_NE(msg([&] { simulate_dist_permute(plan, cin, odd); }).find("rank 0"), std::string::npos);
  // Pieces: negative, or several in the destroying mode.
  DistSimOptions o;
  o.pieces = -1;
  EXPECT_NE(msg([&] { simulate_dist_permute(plan, cin, vout, o); }).find("at least one piece"), std::string::npos);
  o.pieces = 3;
  EXPECT_NE(msg([&] { simulate_dist_permute_destroying(plan, vin, vout, o); }).find("input-destroyed"), std::string::npos);
  // A negative CPU thread count, also on the pieces path (which runs no CpuPermuter).
  for (int pieces : {1, 4}) {
    DistSimOptions t;
    t.pieces = pieces;
    t.cpu.threads = -1;
    EXPECT_NE(msg([&] { simulate_dist_permute(plan, cin, vout, t); }).find("CPU threads = -1"), std::string::npos);
  }
  // Depth: below 2, or deeper than the most pieces there can be (it only took memory: 10^6 took 2.8 GB).
  for (int depth : {1, (1 << kPieceBits) + 1, 1000000}) {
    DistSimOptions d;
    d.pieces = 4;
    d.depth = depth;
    EXPECT_NE(msg([&] { simulate_dist_permute(plan, cin, vout, d); }).find("depth = " + std::to_string(depth)),
              std::string::npos);
  }
  untouched();
}

}  // namespace
}  // namespace bmmc
