// The distributed plan's algebra, proved on every element: A_hl = B·T and [S; T] invertible by reconstruction;
// the post-pass (Π, c_post ⊕ C·d) against the element each receive position really holds; the claims of
// docs/DESIGN.md §9 as properties (2^(m−k) elements to each of 2^k ranks, 2^k senders per receiver, 2^(g−k)
// groups, every round a perfect matching); the k = 0 and k = g extremes; the fused map and its line bits;
// the piece schedule; the plan hash; the errors.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <stdexcept>
#include <string>

#include "bmmc/core/subspace.hpp"
#include "bmmc/dist/dist_plan.hpp"
#include "bmmc/dist/schedule.hpp"
#include "dist/error_message.hpp"
#include "dist_test_support.hpp"

namespace bmmc {
namespace {

using test::maps_for;

// A_hl as a g×m matrix.
BitMatrix a_hl(const DistPlan& p) {
  std::vector<BitVec> rows;
  for (int i = 0; i < p.rank_bits; ++i) rows.push_back(p.bmmc.matrix().row(p.local_bits + i) & low_mask(p.local_bits));
  return BitMatrix::from_rows(p.local_bits, rows);
}

// Every structural claim of the plan, exhaustively over ranks and elements (keep m + g small).
void check_plan(const DistPlan& p, const std::string& what) {
  SCOPED_TRACE(what + ": m = " + std::to_string(p.local_bits) + ", g = " + std::to_string(p.rank_bits) +
               ", k = " + std::to_string(p.k));
  const int m = p.local_bits, g = p.rank_bits, k = p.k, cb = p.chunk_bits();
  const BitMatrix hl = a_hl(p);
  // Decomposition: k = rank(A_hl), A_hl = B·T, B injective, [S; T] invertible and equal to the pre-pass.
  ASSERT_EQ(k, hl.rank());
  ASSERT_EQ(p.chunk_rows.size(), static_cast<std::size_t>(k));
  ASSERT_EQ(p.spread_rows.size(), static_cast<std::size_t>(m - k));
  const BitMatrix t = BitMatrix::from_rows(m, p.chunk_rows), b = BitMatrix::from_cols(g, p.dest_chunk_cols);
  if (g > 0) {
    EXPECT_EQ(b * t, hl);
    EXPECT_EQ(b.rank(), k);
  }
  std::vector<BitVec> st = p.spread_rows;
  st.insert(st.end(), p.chunk_rows.begin(), p.chunk_rows.end());
  EXPECT_TRUE(BitMatrix::from_rows(m, st).invertible());
  EXPECT_EQ(p.pre, Bmmc(BitMatrix::from_rows(m, st)));
  for (int i = 0; i < k; ++i)  // B⁺·B = I
    EXPECT_EQ(xor_of_columns(p.chunk_of_dest_cols, p.dest_chunk_cols[i]), BitVec{1} << i);
  EXPECT_EQ(p.sender_basis.size(), static_cast<std::size_t>(k));

  // §9: on rank r each destination gets exactly 2^(m−k) elements, 2^k destinations, and chunk t = T·x_l goes
  // where the schedule says.
  std::map<BitVec, std::set<BitVec>> senders_of;
  std::map<std::uint64_t, std::set<BitVec>> send_groups, recv_groups;
  for (BitVec r = 0; r < p.ranks(); ++r) {
    std::map<BitVec, std::uint64_t> count;
    const auto sends = send_schedule(p, r);
    ASSERT_EQ(sends.size(), p.destinations_per_rank());
    for (BitVec x = 0; x < p.local_elems(); ++x) {
      const BitVec y = p.bmmc.apply(x | (r << m));
      const BitVec d = y >> m, chunk = p.pre.apply(x) >> cb;
      ++count[d];
      ASSERT_EQ(sends[chunk ^ sender_slot(p, r) ^ xor_of_columns(p.round_cols, sender_slot(p, r))].dest, d);
    }
    ASSERT_EQ(count.size(), p.destinations_per_rank());
    for (const auto& [d, c] : count) {
      EXPECT_EQ(c, p.chunk_elems());
      senders_of[d].insert(r);
      EXPECT_EQ(send_group(p, r), recv_group(p, d)) << "rank " << r << " sends outside its group to " << d;
    }
    send_groups[send_group(p, r)].insert(r);
    recv_groups[recv_group(p, r)].insert(r);
  }
  for (const auto& [d, s] : senders_of) EXPECT_EQ(s.size(), p.destinations_per_rank()) << "receiver " << d;
  EXPECT_EQ(send_groups.size(), p.groups());
  EXPECT_EQ(recv_groups.size(), p.groups());
  for (const auto& [gid, s] : send_groups) EXPECT_EQ(s.size(), p.destinations_per_rank());
  for (const auto& [gid, s] : recv_groups) EXPECT_EQ(s.size(), p.destinations_per_rank());

  // Rounds: every round is a perfect matching and both sides agree on it.
  for (std::uint64_t rho = 0; rho < p.rounds(); ++rho) {
    std::set<BitVec> dests;
    for (BitVec r = 0; r < p.ranks(); ++r) {
      const SendStep s = send_step(p, r, rho);
      dests.insert(s.dest);
      const RecvStep rv = recv_step(p, s.dest, rho);
      ASSERT_EQ(rv.source, r) << "round " << rho;
      ASSERT_EQ(rv.slot, s.slot);
      ASSERT_EQ(rv.source_chunk, s.chunk);
      ASSERT_EQ(s.offset, s.chunk * p.chunk_elems());
      ASSERT_EQ(rv.offset, rv.slot * p.chunk_elems());
    }
    EXPECT_EQ(dests.size(), p.ranks()) << "round " << rho << " is not a permutation of the ranks";
  }

  // The post-pass: receive position q = (u, j) of rank d holds the element that source r = recv slot j put at
  // pre-pass position (u, t); it must belong at (post_for_rank(d)·q, d). Every position of every rank.
  const Bmmc pre_inv = p.pre.inverse();
  for (BitVec d = 0; d < p.ranks(); ++d) {
    const Bmmc post = post_for_rank(p, d);
    std::map<BitVec, RecvStep> by_slot;
    for (const RecvStep& s : recv_schedule(p, d)) by_slot[s.slot] = s;
    ASSERT_EQ(by_slot.size(), p.destinations_per_rank());
    for (BitVec q = 0; q < p.local_elems(); ++q) {
      const BitVec u = q & low_mask(cb), j = q >> cb;
      const RecvStep& s = by_slot.at(j);
      const BitVec x_l = pre_inv.apply(u | (s.source_chunk << cb));
      ASSERT_EQ(p.bmmc.apply(x_l | (s.source << m)), post.apply(q) | (d << m)) << "rank " << d << " position " << q;
    }
  }

  // Fused lines: every aligned output run of 2^fused_line_bits comes from one rank, and the next size does not.
  const BitMatrix ainv = p.bmmc.matrix().inverse();
  for (int j = 0; j < p.fused_line_bits; ++j) EXPECT_EQ(ainv.col(j) >> m, 0u);
  if (p.fused_line_bits < m) EXPECT_NE(ainv.col(p.fused_line_bits) >> m, 0u);
}

TEST(DistPlan, AlgebraForAllMapsRanksAndSizes) {
  int plans = 0;
  for (int g = 0; g <= 6; ++g)
    for (int m = 0; m <= 6; ++m)
      for (std::uint64_t seed : {1u, 2u})
        for (const auto& [name, b] : maps_for(m + g, seed + 10 * m + 100 * g)) {
          check_plan(make_dist_plan(b, g, 4), name);
          ++plans;
        }
  EXPECT_GT(plans, 700);
}

TEST(DistPlan, AlgebraUpTo1024Ranks) {
  for (int g = 7; g <= 10; ++g)
    for (int m : {0, 1, 3, 5})
      for (const auto& [name, b] : maps_for(m + g, 7 + g))
        if (name == "random-bmmc" || name == "random-bpc" || name == "bit-reverse") check_plan(make_dist_plan(b, g, 8), name);
}

TEST(DistPlan, KZeroHasNoExchange) {
  for (int g = 0; g <= 6; ++g)
    for (int m = 0; m <= 5; ++m) {
      const DistPlan p = make_dist_plan(test::block_triangular(m, g, 3 + m + g), g, 4);
      EXPECT_EQ(p.k, 0);
      EXPECT_EQ(p.destinations_per_rank(), 1u);
      EXPECT_EQ(p.groups(), p.ranks());
      EXPECT_EQ(p.chunk_elems(), p.local_elems());
      check_plan(p, "k = 0");
    }
  // Identity on the rank bits: nothing leaves a rank.
  const DistPlan local = make_dist_plan(from_rows({0b0010, 0b0001, 0b0100, 0b1000}), 2, 4);
  EXPECT_EQ(local.k, 0);
  EXPECT_EQ(dist_traffic(local).total_remote_bytes, 0u);
  // reverse complements the rank bits: every rank moves its whole buffer to one other rank.
  const DistPlan moved = make_dist_plan(reverse(6), 2, 4);
  EXPECT_EQ(moved.k, 0);
  EXPECT_EQ(dist_traffic(moved).max_remote_bytes, 16u * 4u);
  EXPECT_EQ(dist_traffic(moved).ranks_keeping_a_chunk, 0u);
}

TEST(DistPlan, KEqualsGIsAllToAll) {
  for (int g = 1; g <= 6; ++g)
    for (int m = g; m <= g + 3; ++m) {
      const DistPlan p = make_dist_plan(test::rank_local_swap_all(m, g, 5 + m), g, 2);
      EXPECT_EQ(p.k, g);
      EXPECT_EQ(p.groups(), 1u);
      EXPECT_EQ(p.destinations_per_rank(), p.ranks());
      check_plan(p, "k = g");
    }
}

TEST(DistPlan, OneBitSwapHalvesTraffic) {
  // cuStateVec's index-bit swap of a rank bit and a local bit: k = 1, pairs of ranks swap half their data.
  const DistPlan p = make_dist_plan(test::one_bit_swap(10, 3, 4, 1), 3, 8);
  EXPECT_EQ(p.k, 1);
  EXPECT_EQ(p.groups(), 4u);
  const DistTraffic t = dist_traffic(p);
  EXPECT_EQ(t.max_remote_bytes, 512u * 8u);
  EXPECT_EQ(t.min_remote_bytes, 512u * 8u);
  EXPECT_EQ(t.ranks_keeping_a_chunk, 8u);
  check_plan(p, "one-bit swap");
}

TEST(DistPlan, WorkedExampleOfTheHeader) {
  // N = 3, g = 1, A swaps bits 0 and 2 (dist_plan.hpp).
  const DistPlan p = make_dist_plan(bit_permutation({2, 1, 0}), 1, 4);
  EXPECT_EQ(p.k, 1);
  EXPECT_EQ(p.chunk_rows, std::vector<BitVec>{0b01});
  EXPECT_EQ(p.dest_chunk_cols, std::vector<BitVec>{1});
  EXPECT_EQ(p.spread_rows, std::vector<BitVec>{0b10});
  EXPECT_EQ(p.pre.matrix().row_list(), (std::vector<BitVec>{0b10, 0b01}));
  EXPECT_EQ(p.sender_basis, std::vector<BitVec>{1});
  EXPECT_EQ(p.post, Bmmc(BitMatrix::from_rows(2, {0b10, 0b01})));
  EXPECT_EQ(p.post_rank_cols, std::vector<BitVec>{0});
  EXPECT_EQ(p.fused_line_bits, 0);  // output bit 0 comes from the rank bit
  check_plan(p, "worked example");
}

TEST(DistPlan, PieceScheduleOddCountsAndScratchBound) {
  const DistPlan p = make_dist_plan(random_bmmc(14, 3), 3, 4);  // k = 3, chunks of 2^11 elements, 128 atoms
  ASSERT_EQ(p.piece_bits, kPieceBits);
  const std::uint64_t atoms = std::uint64_t{1} << kPieceBits;
  const bool every_rank_keeps = dist_traffic(p).ranks_keeping_a_chunk == p.ranks();
  for (int pieces : {1, 3, 5, 7, 32, 64, 128}) {
    const PieceSchedule s = make_piece_schedule(p, pieces);
    ASSERT_EQ(s.pieces, pieces);
    ASSERT_EQ(s.bounds.size(), static_cast<std::size_t>(pieces + 1));
    EXPECT_EQ(s.atom_elems, p.chunk_elems() >> kPieceBits);
    EXPECT_EQ(s.bounds.front(), 0u);
    EXPECT_EQ(s.bounds.back(), p.chunk_elems());
    for (int i = 0; i < pieces; ++i) {
      EXPECT_GT(s.bounds[i + 1], s.bounds[i]);
      EXPECT_EQ(s.bounds[i] % s.atom_elems, 0u) << "a piece boundary cuts an atom";
    }
    EXPECT_EQ(s.max_piece_elems, (atoms + pieces - 1) / pieces * s.atom_elems);
    EXPECT_EQ(s.send_segments, p.destinations_per_rank() - (every_rank_keeps ? 1 : 0));
    EXPECT_EQ(s.scratch_elems, 2 * (s.send_segments + p.destinations_per_rank()) * s.max_piece_elems);
  }
  EXPECT_EQ(make_piece_schedule(p, 1000).pieces, 128);  // more pieces than atoms: one atom per piece
  // 1/8 of the local array for P ≥ 32 whenever chunks have at least 128 elements (m − k ≥ 7), any P; and
  // pieces = 0 takes the fewest pieces that fit 1/8 (one fewer does not, unless every atom is a piece already).
  for (int g = 0; g <= 6; ++g)
    for (int m = g + 7; m <= g + 10; ++m) {
      const DistPlan q = make_dist_plan(random_bmmc(m + g, m * g + 1), g, 4);
      ASSERT_GE(q.chunk_bits(), 7);
      for (int pieces : {32, 33, 47, 64, 255, 1 << 20})
        EXPECT_LE(make_piece_schedule(q, pieces).scratch_elems * 8, q.local_elems()) << pieces << " pieces";
      const PieceSchedule fewest = make_piece_schedule(q, 0);
      EXPECT_EQ(fewest.pieces, pieces_within(q, 2, q.local_elems() / 8));
      EXPECT_LE(fewest.scratch_elems * 8, q.local_elems());
      if (fewest.pieces > 1 && fewest.pieces < (1 << q.piece_bits))
        EXPECT_GT(make_piece_schedule(q, fewest.pieces - 1).scratch_elems * 8, q.local_elems()) << g << " " << m;
    }
  // Two ranks (k = 1, each keeps a chunk): send buffers of one segment, so 26 pieces of at most 5 atoms fit —
  // 2·(1 + 2)·5/128 of a chunk, 15/128 of the local array.
  const DistPlan two = make_dist_plan(random_bmmc(20, 5), 1, 8);
  ASSERT_EQ(two.k, 1);
  EXPECT_EQ(make_piece_schedule(two, 0).pieces, 26);
  EXPECT_EQ(make_piece_schedule(two, 0).send_segments, 1u);
  EXPECT_EQ(make_piece_schedule(two, 0).scratch_elems * 128, 15 * two.local_elems());
  EXPECT_EQ(make_piece_schedule(two, 25).scratch_elems * 128, 18 * two.local_elems());  // 6 atoms: over 1/8
  // Chunks of 2 elements: one atom bit, so at most 2 pieces.
  const DistPlan small = make_dist_plan(random_bmmc(4, 1), 2, 4);
  EXPECT_EQ(make_piece_schedule(small, 9).pieces, 1 << small.piece_bits);
  EXPECT_THROW(make_piece_schedule(p, -1), std::invalid_argument);
  // A ring of depth D holds D send and D receive buffers: depth 4 with 64 pieces is the same scratch as depth 2
  // with 32.
  EXPECT_EQ(make_piece_schedule(p, 64, 4).scratch_elems,
            4 * (make_piece_schedule(p, 64, 4).send_segments + p.destinations_per_rank()) * (p.chunk_elems() >> 6));
  EXPECT_EQ(make_piece_schedule(p, 64, 4).scratch_elems, make_piece_schedule(p, 32).scratch_elems);
  EXPECT_EQ(make_piece_schedule(p, 64, 4).depth, 4);
  EXPECT_THROW(make_piece_schedule(p, 32, 1), std::invalid_argument);
  EXPECT_THROW(pieces_within(p, 1, 0), std::invalid_argument);
}

// The scratch layout of the pipelined engines: in every ring buffer the packed chunks that leave the rank and the
// receive slots are disjoint segments inside the scratch, a kept chunk is packed into its own receive slot, and a
// send buffer skips the kept chunk exactly where the schedule counted it out — also for maps where some ranks keep
// no chunk (a complemented rank bit) and for every rank of a random BMMC.
TEST(DistPlan, PieceLayoutSegmentsAreDisjointAndKeptChunksSkipTheExchange) {
  const int m = 12;
  const std::vector<std::pair<std::string, DistPlan>> plans = {
      {"random k=2", make_dist_plan(random_bmmc(m + 2, 17), 2, 4)},
      {"random k=3 of 8 ranks", make_dist_plan(random_bmmc(m + 3, 18), 3, 8)},
      {"bit swap, 2 ranks", make_dist_plan(test::one_bit_swap(m, 1, 0, 0), 1, 2)},
      // local bit 0 ↔ rank bit 0 with the top rank bit complemented: every destination differs from its sender
      {"complemented rank bit", make_dist_plan(test::swaps(m + 2, {{0, m}}, BitVec{1} << (m + 1)), 2, 4)},
      // local bit 0 → rank bit 0 → rank bit 1 → local bit 0: ranks 0 and 3 keep a chunk, ranks 1 and 2 do not
      {"some ranks keep", make_dist_plan(test::bit_cycle_through_ranks(m), 2, 4)},
  };
  for (const auto& [what, plan] : plans)
    for (int depth : {2, 3}) {
      const PieceSchedule ps = make_piece_schedule(plan, 7, depth);
      const std::uint64_t seg = ps.max_piece_elems, chunks = plan.destinations_per_rank();
      const std::uint64_t send_buf = ps.send_segments * seg;
      for (BitVec r = 0; r < plan.ranks(); ++r) {
        const PieceLayout l = piece_layout(plan, ps, r);
        // A sender writes into its receivers' slots at its own offsets: the receive layout is every rank's.
        EXPECT_EQ(l.recv_at, piece_layout(plan, ps, 0).recv_at) << what << " rank " << r;
        ASSERT_EQ(l.pack_at.size(), static_cast<std::size_t>(depth)) << what;
        bool keeps = false;
        for (const SendStep& st : send_schedule(plan, r)) keeps |= st.dest == r;
        EXPECT_EQ(l.keeps, keeps) << what << " rank " << r;
        EXPECT_EQ(leaving_sends(plan, r).size(), chunks - (keeps ? 1 : 0)) << what << " rank " << r;
        std::set<std::uint64_t> starts;
        for (int b = 0; b < depth; ++b) {
          for (BitVec j = 0; j < chunks; ++j) {
            EXPECT_GE(l.recv_at[b][j], static_cast<std::uint64_t>(depth) * send_buf + b * chunks * seg) << what;
            EXPECT_LE(l.recv_at[b][j] + seg, static_cast<std::uint64_t>(depth) * send_buf + (b + 1) * chunks * seg)
                << what;
            EXPECT_LE(l.recv_at[b][j] + seg, ps.scratch_elems) << what;
            EXPECT_TRUE(starts.insert(l.recv_at[b][j]).second) << what << ": slot " << j << " overlaps";
          }
          for (BitVec t = 0; t < chunks; ++t) {
            if (keeps && t == l.kept_chunk) {
              EXPECT_EQ(l.pack_at[b][t], l.recv_at[b][sender_slot(plan, r)]) << what;
              continue;
            }
            // Inside send buffer b (buffers b and b' never alias: a chunk of piece i + D must not land on piece i's).
            EXPECT_GE(l.pack_at[b][t], static_cast<std::uint64_t>(b) * send_buf) << what;
            EXPECT_LE(l.pack_at[b][t] + seg, static_cast<std::uint64_t>(b + 1) * send_buf) << what;
            EXPECT_TRUE(starts.insert(l.pack_at[b][t]).second) << what << ": chunk " << t << " overlaps";
          }
        }
        for (auto it = starts.begin(); std::next(it) != starts.end(); ++it)
          EXPECT_GE(*std::next(it) - *it, seg) << what << ": segments closer than a piece";
      }
      if (what == "complemented rank bit") {
        EXPECT_EQ(dist_traffic(plan).ranks_keeping_a_chunk, 0u);
        EXPECT_EQ(ps.send_segments, chunks);
      } else if (what == "some ranks keep") {
        EXPECT_EQ(dist_traffic(plan).ranks_keeping_a_chunk, 2u);
        EXPECT_EQ(ps.send_segments, chunks);  // the keeping ranks leave their kept segment unused
      } else {
        EXPECT_EQ(ps.send_segments, chunks - 1) << what;
      }
    }
}

// The piece rows φ at the sizes the GPUs run: kPieceBits rows, independent of the chunk rows, vanishing on the low
// input bits and on the local parts of the preimages of the low output bits — so no tile of the pre- or post-pass
// straddles two atoms.
TEST(DistPlan, PieceRowsAvoidTheLinesOfBothSides) {
  check_plan(make_dist_plan(random_bmmc(16, 2), 2, 4), "piece rows at m = 14");
  for (std::uint64_t seed = 1; seed <= 12; ++seed)
    for (int g : {1, 2, 3}) {
      const Bmmc b = seed % 3 == 0 ? random_bpc(31 + g, seed) : random_bmmc(31 + g, seed);
      const DistPlan p = make_dist_plan(b, g, 8);
      ASSERT_EQ(p.piece_bits, kPieceBits) << b.to_string();
      const int m = p.local_bits;
      const BitMatrix ainv = b.matrix().inverse();
      std::vector<BitVec> rows = p.chunk_rows;
      for (int i = 0; i < p.piece_bits; ++i) {
        const BitVec phi = p.spread_rows[p.spread_rows.size() - p.piece_bits + i];
        rows.push_back(phi);
        for (int j = 0; j < 8; ++j) {
          EXPECT_EQ(__builtin_popcountll(phi & (BitVec{1} << j)) & 1, 0) << "φ reads input bit " << j;
          EXPECT_EQ(__builtin_popcountll(phi & ainv.col(j) & low_mask(m)) & 1, 0) << "φ moves output bit " << j;
        }
      }
      EXPECT_EQ(Subspace::span(m, rows).dim(), p.k + p.piece_bits);  // [S; T] invertible: check_plan below
    }
}

TEST(DistPlan, HashSeparatesWhatDefinesThePlan) {
  const DistPlan base = make_dist_plan(random_bmmc(12, 1), 3, 4);
  const std::uint64_t h = dist_plan_hash(base);
  EXPECT_EQ(h, dist_plan_hash(make_dist_plan(random_bmmc(12, 1), 3, 4)));
  EXPECT_NE(h, dist_plan_hash(make_dist_plan(random_bmmc(12, 2), 3, 4)));                   // permutation
  EXPECT_NE(h, dist_plan_hash(make_dist_plan(Bmmc(random_bmmc(12, 1).matrix(), 1), 3, 4)));  // complement only
  EXPECT_NE(h, dist_plan_hash(make_dist_plan(random_bmmc(13, 1), 3, 4)));                   // n
  EXPECT_NE(h, dist_plan_hash(make_dist_plan(random_bmmc(12, 1), 2, 4)));                   // g
  EXPECT_NE(h, dist_plan_hash(make_dist_plan(random_bmmc(12, 1), 3, 8)));                   // element size
  // Stable across processes and machines: a fixed value, not std::hash (it changes with kDistPlanVersion).
  EXPECT_EQ(dist_plan_hash(make_dist_plan(identity(4), 1, 4)), 0xa67c78c9b2c06543ULL) << std::hex
      << dist_plan_hash(make_dist_plan(identity(4), 1, 4));
}

TEST(DistPlan, Errors) {
  const auto msg = [](auto&& f) { return test::error_message(f); };
  EXPECT_NE(msg([] { make_dist_plan(identity(3), 4, 4); }).find("0..min(n, 16) = 0..3"), std::string::npos);
  EXPECT_NE(msg([] { make_dist_plan(identity(20), 17, 4); }).find("0..min(n, 16)"), std::string::npos);
  EXPECT_NE(msg([] { make_dist_plan(identity(4), -1, 4); }).find("rank bits"), std::string::npos);
  EXPECT_NE(msg([] { make_dist_plan(identity(4), 1, 3); }).find("element size"), std::string::npos);
  EXPECT_NE(msg([] { dist_rank_bits(3, 8); }).find("power of two"), std::string::npos);
  EXPECT_NE(msg([] { dist_rank_bits(0, 8); }).find("power of two"), std::string::npos);
  EXPECT_NE(msg([] { dist_rank_bits(512, 8); }).find("at least 9 index bits"), std::string::npos);
  EXPECT_NE(msg([] { dist_rank_bits(std::uint64_t{1} << 17, 40); }).find("at most 2^16"), std::string::npos);
  EXPECT_EQ(dist_rank_bits(256, 8), 8);
  const DistPlan p = make_dist_plan(identity(4), 1, 4);
  EXPECT_THROW(post_for_rank(p, 2), std::invalid_argument);
  EXPECT_THROW(send_schedule(p, 2), std::invalid_argument);
  EXPECT_THROW(send_step(p, 0, 1), std::invalid_argument);  // k = 0: one round
}

TEST(DistPlan, DescribeNamesTheParts) {
  const std::string s = describe(make_dist_plan(random_bmmc(10, 2), 2, 4));
  for (const char* part : {"k = rank(A_hl) = 2", "pre-pass", "post-pass", "send:", "receive:", "fused", "hash 0x"})
    EXPECT_NE(s.find(part), std::string::npos) << part << " missing from\n" << s;
  EXPECT_NE(describe_schedule(make_dist_plan(random_bmmc(10, 2), 2, 4), 1).find("round 3: send chunk"), std::string::npos);
}

}  // namespace
}  // namespace bmmc
