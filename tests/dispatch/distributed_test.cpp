// The distributed front door (bmmc/distributed.hpp) on simulated ranks: every map kind, every engine, out of place
// and in place, reconstructed against the one-array reference; the engine it reports; and every bad input refused
// before any byte is written. (The GPU groups run through the same door in tests/peer and tests/nccl.)
#include "bmmc/distributed.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bmmc/core/buffers.hpp"
#include "bmmc/core/named.hpp"
#include "bmmc/cpu/reference.hpp"
#include "../../src/dispatch/distributed_engine.hpp"  // internal
#include "bmmc/dist/agreement.hpp"
#include "dist/dist_test_support.hpp"
#include "dist/error_message.hpp"

namespace bmmc {
namespace {

using Bytes = std::vector<unsigned char>;

// Runs p over the whole array `global` split into its ranks' slices; returns the output array.
Bytes run_door(const DistributedPermuter& p, const Bytes& global) {
  const std::size_t local = p.local_bytes();
  Bytes out(global.size(), 0);
  std::vector<const void*> in_ptrs;
  std::vector<void*> out_ptrs;
  for (int r = 0; r < p.ranks(); ++r) {
    in_ptrs.push_back(global.data() + r * local);
    out_ptrs.push_back(out.data() + r * local);
  }
  p(in_ptrs, out_ptrs);
  return out;
}

Bytes run_door_in_place(const DistributedPermuter& p, Bytes data) {
  std::vector<void*> ptrs;
  for (int r = 0; r < p.ranks(); ++r) ptrs.push_back(data.data() + r * p.local_bytes());
  p.permute_in_place(ptrs);
  return data;
}

Bytes reference(const Bmmc& b, const Bytes& in, int eb) {
  Bytes out(in.size());
  permute_reference(b, in.data(), out.data(), eb);
  return out;
}

TEST(DistributedDoor, EveryMapEveryEngineOutOfPlaceMatchesTheReference) {
  int checked = 0;
  for (std::uint64_t seed = 1; seed <= 3; ++seed)
    for (int g : {1, 2, 3})
      for (int eb : {1, 4, 8}) {
        const int m = 11, n = m + g;
        auto maps = test::maps_for(n, seed);
        maps.emplace_back("k=0", test::block_triangular(m, g, seed));
        maps.emplace_back("k=g", test::rank_local_swap_all(m, g, seed));
        maps.emplace_back("swap 0<->rank 0", test::one_bit_swap(m, g, 0, 0));
        Bytes in(array_bytes(n, eb));
        test::fill_random(in, seed * 31 + g);
        for (const auto& [name, b] : maps) {
          const Bytes want = reference(b, in, eb);
          for (DistEngine e : {DistEngine::Auto, DistEngine::Exchange, DistEngine::Pieces, DistEngine::Push}) {
            DistributedOptions o;
            o.engine = e;
            const DistributedPermuter p(b, eb, SimulatedRanks{1u << g}, o);
            ASSERT_NE(p.engine(), DistEngine::Auto);
            if (e != DistEngine::Auto) ASSERT_EQ(p.engine(), e);
            EXPECT_EQ(p.local_ranks(), 1 << g);
            EXPECT_EQ(p.local_bytes(), array_bytes(m, eb));
            EXPECT_EQ(run_door(p, in), want) << name << " g=" << g << " eb=" << eb << " " << p.describe();
            ++checked;
          }
        }
      }
  EXPECT_EQ(checked, 3 * 3 * 3 * 11 * 4);
}

TEST(DistributedDoor, PushWithTheCallersScratchOrItsOwn) {
  const Bmmc b = random_bmmc(14, 5);  // two-pass push: needs scratch
  DistributedOptions o;
  o.engine = DistEngine::Push;
  const DistributedPermuter p(b, 4, SimulatedRanks{4}, o);
  ASSERT_GT(p.scratch_bytes(), 0u);
  Bytes in(array_bytes(14, 4)), out(in.size()), scratch(4 * p.scratch_bytes());
  test::fill_random(in, 9);
  std::vector<const void*> ip;
  std::vector<void*> op, sp;
  for (int r = 0; r < 4; ++r) {
    ip.push_back(in.data() + r * p.local_bytes());
    op.push_back(out.data() + r * p.local_bytes());
    sp.push_back(scratch.data() + r * p.scratch_bytes());
  }
  p(ip, op, sp);
  EXPECT_EQ(out, reference(b, in, 4));
  EXPECT_EQ(run_door(p, in), reference(b, in, 4));
}

TEST(DistributedDoor, InPlaceInvolutionsMatchTheReference) {
  int checked = 0;
  for (int g : {1, 2}) {
    const int m = 12, n = m + g;
    // rank bits with low bits (staged: f fixes the top local bits), with the top local bits (three passes), a
    // local-only swap, and a complement on a pair.
    const std::vector<Bmmc> maps = {test::swaps(n, {{0, m}}), test::swaps(n, {{m - 1, m}, {0, 3}}),
                                    test::swaps(n, {{1, 5}}), test::swaps(n, {{2, n - 1}}, (BitVec{1} << 2) | (BitVec{1} << (n - 1)))};
    for (const Bmmc& b : maps)
      for (int eb : {2, 8}) {
        Bytes in(array_bytes(n, eb));
        test::fill_random(in, 77 + g + eb);
        const Bytes want = reference(b, in, eb);
        for (DistEngine e : {DistEngine::Auto, DistEngine::Swap}) {
          for (DistEngine staged : {DistEngine::Exchange, DistEngine::Push}) {
            DistributedOptions o;
            o.in_place = true;
            o.engine = e;
            o.staged_engine = staged;
            o.max_staging_chunk = array_bytes(m - 2, eb);  // several chunks
            const DistributedPermuter p(b, eb, SimulatedRanks{1u << g}, o);
            ASSERT_TRUE(p.engine() == DistEngine::Swap || p.engine() == DistEngine::StagedSwap);
            if (e == DistEngine::Swap) EXPECT_EQ(p.engine(), DistEngine::Swap);
            EXPECT_TRUE(p.in_place());
            EXPECT_EQ(run_door_in_place(p, in), want) << p.describe();
            ++checked;
          }
        }
      }
  }
  EXPECT_EQ(checked, 2 * 4 * 2 * 2 * 2);
  // The staged engine runs where the map moves low bits and fixes the top local bits.
  DistributedOptions o;
  o.in_place = true;
  o.max_staging_chunk = array_bytes(10, 4);
  EXPECT_EQ(DistributedPermuter(test::swaps(14, {{0, 12}}), 4, SimulatedRanks{4}, o).engine(), DistEngine::StagedSwap);
  EXPECT_EQ(DistributedPermuter(test::swaps(14, {{11, 12}}), 4, SimulatedRanks{4}, o).engine(), DistEngine::Swap);
}

TEST(DistributedDoor, DestroyingTheInputReceivesIntoItAndNeedsNoScratch) {
  int checked = 0;
  for (int g : {1, 2, 3})
    for (const Bmmc& b : {random_bmmc(13, g), bit_reverse(13), test::one_bit_swap(13 - g, g, 0, 0)}) {
      DistributedOptions o;
      o.destroy_input = true;
      const DistributedPermuter p(b, 8, SimulatedRanks{1u << g}, o);
      EXPECT_EQ(p.engine(), DistEngine::Exchange);
      EXPECT_EQ(p.scratch_bytes(), 0u);
      Bytes in(array_bytes(13, 8));
      test::fill_random(in, 5 * g);
      const Bytes want = reference(b, in, 8);
      Bytes scratch_in = in;  // the input the call may destroy
      EXPECT_EQ(run_door(p, scratch_in), want);
      ++checked;
    }
  EXPECT_EQ(checked, 9);
  using Change = void (*)(DistributedOptions&);
  for (Change bad : {Change([](DistributedOptions& o) { o.pieces = 4; }),
                     Change([](DistributedOptions& o) { o.engine = DistEngine::Push; }),
                     Change([](DistributedOptions& o) { o.in_place = true; })}) {
    DistributedOptions o;
    o.destroy_input = true;
    bad(o);
    EXPECT_NE(test::error_message([&] { DistributedPermuter(test::swaps(12, {{0, 11}}), 4, SimulatedRanks{2}, o); })
                  .find("destroy_input receives the exchange into the input"),
              std::string::npos);
  }
}

// A bad call writes nothing: the outputs keep their poison.
void expect_refused_untouched(const DistributedPermuter& p, const std::vector<const void*>& in,
                              const std::vector<void*>& out, const std::vector<void*>& scratch, const Bytes& out_array,
                              const std::string& says) {
  const Bytes before = out_array;
  const std::string msg = test::error_message([&] { p(in, out, scratch); });
  EXPECT_NE(msg.find(says), std::string::npos) << msg;
  EXPECT_EQ(out_array, before) << says;
}

TEST(DistributedDoor, BadBuffersAreRefusedBeforeAnyWrite) {
  const Bmmc b = random_bmmc(12, 3);
  const DistributedPermuter p(b, 4, SimulatedRanks{4});
  const std::size_t local = p.local_bytes();
  Bytes in(4 * local, 1), out(4 * local, 0xAB);
  std::vector<const void*> ip;
  std::vector<void*> op;
  for (int r = 0; r < 4; ++r) {
    ip.push_back(in.data() + r * local);
    op.push_back(out.data() + r * local);
  }
  // wrong counts
  expect_refused_untouched(p, {ip.begin(), ip.end() - 1}, op, {}, out, "3 input buffers for 4 local rank(s)");
  expect_refused_untouched(p, ip, {op.begin(), op.begin() + 2}, {}, out, "2 output buffers");
  // null, overlapping, misaligned
  auto nul = op;
  nul[2] = nullptr;
  expect_refused_untouched(p, ip, nul, {}, out, "rank 2");
  auto overlap = op;
  overlap[3] = out.data() + 2 * local + 4;  // rank 3's output overlaps rank 2's
  expect_refused_untouched(p, ip, overlap, {}, out, "overlap");
  auto in_is_out = ip;
  in_is_out[1] = op[1];
  expect_refused_untouched(p, in_is_out, op, {}, out, "rank 1");
  auto misaligned = op;
  misaligned[0] = out.data() + 1;
  expect_refused_untouched(p, ip, misaligned, {}, out, "rank 0");
  // scratch to an engine that takes none; the wrong call for the mode
  std::vector<void*> sp(4, out.data());
  expect_refused_untouched(p, ip, op, sp, out, "takes no scratch");
  EXPECT_NE(test::error_message([&] { p.permute_in_place(op); }).find("out of place"), std::string::npos);
  EXPECT_EQ(out, Bytes(4 * local, 0xAB));
  DistributedOptions io;
  io.in_place = true;
  const DistributedPermuter q(test::swaps(12, {{0, 11}}), 4, SimulatedRanks{4}, io);
  EXPECT_NE(test::error_message([&] { q(ip, op); }).find("in place"), std::string::npos);
  auto dup = op;
  dup[1] = dup[0];
  EXPECT_NE(test::error_message([&] { q.permute_in_place(dup); }).find("overlap"), std::string::npos);
  EXPECT_EQ(out, Bytes(4 * local, 0xAB));
}

TEST(DistributedDoor, BadGroupsAndOptionsAreRefused) {
  const Bmmc b = random_bmmc(10, 1);
  auto says = [&](const Bmmc& map, std::uint64_t ranks, const DistributedOptions& o, const std::string& what) {
    const std::string msg = test::error_message([&] { DistributedPermuter(map, 4, SimulatedRanks{ranks}, o); });
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
  };
  says(b, 3, {}, "power of two");
  says(b, 2048, {}, "");  // more ranks than elements
  EXPECT_NE(test::error_message([&] { DistributedPermuter(b, 4, SimulatedRanks{2048}); }), "no error");
  DistributedOptions o;
  o.engine = DistEngine::Swap;
  says(b, 2, o, "in place");
  o = {};
  o.in_place = true;
  says(b, 2, o, "involution");
  o.engine = DistEngine::Push;
  says(test::swaps(10, {{0, 9}}), 2, o, "in place runs the swap or staged-swap engine");
  o = {};
  o.engine = DistEngine::Exchange;
  o.pieces = 4;
  says(b, 2, o, "pieces = 4 with the exchange engine");
  o = {};
  o.engine = DistEngine::Pieces;
  o.pieces = 1;
  says(b, 2, o, "pieces = 1");
  o = {};
  o.pieces = -1;
  says(b, 2, o, "pieces = -1");
  o = {};
  o.depth = 1;
  says(b, 2, o, "depth");
  o = {};
  o.engine = static_cast<DistEngine>(42);
  says(b, 2, o, "outside the enumeration");
  o = {};
  o.in_place = true;
  o.engine = DistEngine::StagedSwap;
  says(test::swaps(10, {{8, 9}}), 2, o, "staged-swap engine needs");
#if !BMMC_HAS_CUDA
  EXPECT_NE(test::error_message([&] { DistributedPermuter(b, 4, DeviceGroup{{0, 1}}); }).find("no CUDA"),
            std::string::npos);
#endif
}

// Every option a group cannot honour is refused by name, with the group and what would honour it — never ignored.
TEST(DistributedDoor, OptionsAGroupCannotHonourAreRefusedByName) {
  const Bmmc b = random_bmmc(10, 1);
  const Bmmc swap = test::swaps(10, {{0, 9}});
  int checked = 0;
  // The message of a refusal: "DistributedOptions::<option> cannot be honoured by <group>: <what would>".
  auto refused = [&](const std::string& msg, const std::string& option, const std::string& group,
                     const std::string& remedy) {
    EXPECT_NE(msg.find("DistributedOptions::" + option + " cannot be honoured by " + group), std::string::npos)
        << msg;
    EXPECT_NE(msg.find(remedy), std::string::npos) << msg;
    ++checked;
  };
  auto simulated = [&](const Bmmc& map, const DistributedOptions& o, const std::string& option,
                       const std::string& remedy) {
    refused(test::error_message([&] { DistributedPermuter(map, 4, SimulatedRanks{2}, o); }), option,
            "SimulatedRanks", remedy);
  };
  DistributedOptions o;
  o.exchange_comms = 2;
  simulated(b, o, "exchange_comms", "only an NCCL communicator");
  o = {};
  o.check_agreement = false;
  simulated(b, o, "check_agreement", "leave it true");
  o = {};
  o.gpu.device = 0;
  simulated(b, o, "gpu.device", "the group names the devices");
  o = {};
  o.gpu.jit = false;
  simulated(b, o, "gpu", "only gpu.policy.vector_bits");
  o = {};
  o.staged_engine = DistEngine::Push;  // out of place: no staged path
  simulated(b, o, "staged_engine", "set in_place");
  o = {};
  o.max_staging_chunk = 4096;
  simulated(b, o, "max_staging_chunk", "set in_place");
  o = {};
  o.in_place = true;
  o.pieces = 4;  // in place the chunks are bounded in bytes here
  simulated(swap, o, "pieces", "max_staging_chunk bounds");
  o = {};
  o.in_place = true;
  o.depth = 3;
  simulated(swap, o, "depth", "depth applies out of place");

  // A device group refuses before it touches CUDA (a build without CUDA refuses these, not the missing runtime).
  auto devices = [&](const DistributedOptions& opts, const std::string& option, const std::string& remedy) {
    refused(test::error_message([&] { DistributedPermuter(b, 4, DeviceGroup{{0, 0}}, opts); }), option,
            "a DeviceGroup", remedy);
  };
  o = {};
  o.cpu.threads = 2;
  devices(o, "cpu", "SimulatedRanks only");
  o = {};
  o.depth = 4;
  devices(o, "depth", "an NCCL communicator or SimulatedRanks take a depth");
  o = {};
  o.destroy_input = true;
  devices(o, "destroy_input", "keep their input");
  o = {};
  o.exchange_comms = 2;
  devices(o, "exchange_comms", "only an NCCL communicator");
  o = {};
  o.check_agreement = false;
  devices(o, "check_agreement", "agree by construction");

  // An NCCL communicator: the door's check, which its constructor (bmmc::nccl) runs first.
  auto nccl = [&](const DistributedOptions& opts, const std::string& option, const std::string& remedy) {
    refused(test::error_message([&] { check_distributed_options(opts, DistributedGroup::Nccl); }), option,
            "an NCCL communicator", remedy);
  };
  o = {};
  o.cpu.tile_bits = 8;
  nccl(o, "cpu", "SimulatedRanks only");
  o = {};
  o.in_place = true;
  o.max_staging_chunk = 1 << 20;
  nccl(o, "max_staging_chunk", "give pieces instead");
  o = {};
  o.in_place = true;
  o.staged_engine = DistEngine::Push;
  nccl(o, "staged_engine", "ask for auto or exchange");
  o = {};
  o.gpu.device = 1;
  nccl(o, "gpu.device", "leave it -1");

  // The push engine moves no pieces on the GPUs of one process or simulated ranks.
  o = {};
  o.engine = DistEngine::Push;
  o.pieces = 4;
  devices(o, "pieces", "the push engine stores whole runs");
  simulated(b, o, "pieces", "the push engine stores whole runs");
  // depth where the exchange that runs has no ring: a named exchange or push, one piece, the input received whole.
  o = {};
  o.engine = DistEngine::Exchange;
  o.depth = 3;
  simulated(b, o, "depth", "the exchange engine moves no pieces");
  nccl(o, "depth", "the exchange engine moves no pieces");
  o.engine = DistEngine::Push;
  simulated(b, o, "depth", "the push engine moves no pieces");
  o = {};
  o.pieces = 1;
  o.depth = 3;
  simulated(b, o, "depth", "pieces = 1 moves it whole");
  o = {};
  o.destroy_input = true;
  o.depth = 3;
  nccl(o, "depth", "destroy_input receives it whole");
  // A named engine that resolves to one without a ring (the NCCL push engine where its push needs no second pass).
  DistributedInfo runs;
  runs.engine = DistEngine::Push;
  o = {};
  o.engine = DistEngine::Push;
  o.depth = 3;
  refused(test::error_message([&] { check_engine_honours(o, runs, DistributedGroup::Nccl); }), "depth",
          "an NCCL communicator", "the push engine asked for runs as push");
  EXPECT_EQ(checked, 25);
  runs.engine = DistEngine::Pieces;  // the NCCL push engine's copy-engine pieces read the depth
  EXPECT_NO_THROW(check_engine_honours(o, runs, DistributedGroup::Nccl));
  o.engine = DistEngine::Auto;  // Auto's exchange for a map that keeps every chunk leaves it unread
  runs.engine = DistEngine::Exchange;
  EXPECT_NO_THROW(check_engine_honours(o, runs, DistributedGroup::Simulated));
  EXPECT_NO_THROW(DistributedPermuter(test::block_triangular(9, 1, 1), 4, SimulatedRanks{2}, o));

  // What each group does honour passes the check.
  o = {};
  o.exchange_comms = 2;
  o.check_agreement = false;
  o.depth = 3;
  o.pieces = 4;
  EXPECT_NO_THROW(check_distributed_options(o, DistributedGroup::Nccl));
  o.engine = DistEngine::Push;  // NCCL's push engine cuts its copy-engine pieces by these
  EXPECT_NO_THROW(check_distributed_options(o, DistributedGroup::Nccl));
  o = {};
  o.destroy_input = true;
  EXPECT_NO_THROW(check_distributed_options(o, DistributedGroup::Nccl));
  o = {};
  o.in_place = true;
  o.pieces = 4;
  o.staged_engine = DistEngine::Exchange;
  EXPECT_NO_THROW(check_distributed_options(o, DistributedGroup::Nccl));
  o = {};
  o.in_place = true;
  o.staged_engine = DistEngine::Push;
  o.max_staging_chunk = 1 << 20;
  EXPECT_NO_THROW(check_distributed_options(o, DistributedGroup::Devices));
  o.cpu.threads = 1;
  EXPECT_NO_THROW(check_distributed_options(o, DistributedGroup::Simulated));
  o = {};
  o.depth = 3;
  EXPECT_NO_THROW(check_distributed_options(o, DistributedGroup::Simulated));
  o.engine = DistEngine::Pieces;
  EXPECT_NO_THROW(check_distributed_options(o, DistributedGroup::Simulated));
  o = {};
  o.destroy_input = true;
  EXPECT_NO_THROW(check_distributed_options(o, DistributedGroup::Simulated));
  o = {};
  o.engine = DistEngine::Push;
  o.pieces = 1;
  EXPECT_NO_THROW(check_distributed_options(o, DistributedGroup::Simulated));
  o = {};
  o.engine = DistEngine::Push;
  o.gpu.policy.vector_bits = 1;  // the push plan's lanes
  EXPECT_NO_THROW(check_distributed_options(o, DistributedGroup::Simulated));
  o.gpu.jit = false;
  EXPECT_NO_THROW(check_distributed_options(o, DistributedGroup::Devices));
}

// A moved-from permuter: neutral accessors, calls refused with std::logic_error.
TEST(DistributedDoor, AMovedFromPermuterIsNeutralAndRefusesCalls) {
  DistributedPermuter p(random_bmmc(10, 2), 4, SimulatedRanks{2});
  DistributedPermuter q(std::move(p));
  EXPECT_EQ(q.ranks(), 2);
  // NOLINTBEGIN(bugprone-use-after-move): what a moved-from permuter does is the point
  EXPECT_EQ(p.engine(), DistEngine::Auto);
  EXPECT_EQ(p.fallback_reason(), "");
  EXPECT_FALSE(p.in_place());
  EXPECT_EQ(p.n(), 0);
  EXPECT_EQ(p.elem_bytes(), 0);
  EXPECT_EQ(p.ranks(), 0);
  EXPECT_EQ(p.local_ranks(), 0);
  EXPECT_EQ(p.first_rank(), 0);
  EXPECT_EQ(p.local_bytes(), 0u);
  EXPECT_EQ(p.scratch_bytes(), 0u);
  EXPECT_EQ(p.alignment(), 1u);
  EXPECT_EQ(p.pieces(), 0);
  EXPECT_NE(p.describe().find("moved-from DistributedPermuter"), std::string::npos) << p.describe();
  auto logic = [](auto&& call) {
    try {
      call();
    } catch (const std::logic_error& e) {
      if (dynamic_cast<const std::invalid_argument*>(&e) == nullptr) return std::string(e.what());
      return std::string("std::invalid_argument: ") + e.what();
    } catch (...) {
      return std::string("another exception");
    }
    return std::string("no error");
  };
  std::vector<unsigned char> buf(16);
  const std::vector<const void*> in{buf.data(), buf.data()};
  const std::vector<void*> out{buf.data(), buf.data()};
  EXPECT_NE(logic([&] { p(in, out); }).find("moved-from DistributedPermuter"), std::string::npos);
  EXPECT_NE(logic([&] { p.permute_in_place(out); }).find("moved-from DistributedPermuter"), std::string::npos);
  // and assigning a built one makes it usable again
  p = std::move(q);
  EXPECT_EQ(p.ranks(), 2);
  EXPECT_NE(p.engine(), DistEngine::Auto);
  // NOLINTEND(bugprone-use-after-move)
}

TEST(DistributedDoor, EngineNamesRoundTrip) {
  for (std::string_view name : dist_engine_names()) EXPECT_EQ(to_string(parse_dist_engine(name)), name);
  EXPECT_NE(test::error_message([] { parse_dist_engine("fused"); }).find("auto, exchange"), std::string::npos);
  EXPECT_STREQ(to_string(static_cast<DistEngine>(99)), "?");
}

// The agreement's comparison, as every rank runs it on the gathered records (NCCL, torch.distributed).
TEST(DistributedAgreement, EqualRecordsPassAndAnyDifferingWordIsNamed) {
  Agreement a;
  a.hash = 0x1234;
  a.n = 20;
  a.elem_bytes = 4;
  a.engine = DistEngine::Pieces;
  a.pieces = 26;
  a.comms = 1;
  EXPECT_EQ(Agreement::from_words(a.words()), a);
  std::vector<std::uint64_t> every;
  const auto words = a.words();  // one array: begin() and end() of two temporaries would not be one range
  for (int r = 0; r < 4; ++r) every.insert(every.end(), words.begin(), words.end());
  EXPECT_NO_THROW(compare_agreements(every, 2, "do alike"));
  // Agreement's fields in the order of its words
  const char* const kFields[Agreement::kWords] = {"hash", "n", "elem_bytes", "engine",
                                                  "pieces", "comms", "registered", "detail"};
  for (int word = 0; word < Agreement::kWords; ++word) {
    auto other = every;
    other[3 * Agreement::kWords + word] ^= 1;
    const std::string msg = test::error_message([&] { compare_agreements(other, 2, "do alike"); });
    EXPECT_NE(msg.find("this is rank 2"), std::string::npos) << msg;
    EXPECT_NE(msg.find("do alike"), std::string::npos) << msg;
    EXPECT_NE(msg.find("rank 3:"), std::string::npos) << msg;
    // the differing word by its field's exact name, and no other field
    const std::string named = fmt::format("differing: {} (rank 0: {}, rank 3: {})", kFields[word], words[word],
                                          words[word] ^ 1);
    EXPECT_NE(msg.find(named), std::string::npos) << named << " in " << msg;
    for (int other = 0; other < Agreement::kWords; ++other)
      if (other != word)
        EXPECT_EQ(msg.find(fmt::format("{} (rank 0:", kFields[other])), std::string::npos) << msg;
  }
  auto refused = every;
  const auto r = refused_agreement().words();
  std::copy(r.begin(), r.end(), refused.begin() + Agreement::kWords);
  const std::string refusal = test::error_message([&] { compare_agreements(refused, 0, "x"); });
  EXPECT_NE(refusal.find("rank(s) 1 refused their own arguments"), std::string::npos) << refusal;
  EXPECT_NE(refusal.find("rank 1: refused its own arguments"), std::string::npos) << refusal;
  EXPECT_EQ(refusal.find("differing"), std::string::npos) << refusal;  // the refusal, not its zero words
  EXPECT_NE(test::error_message([&] { compare_agreements(std::vector<std::uint64_t>(7), 0, "x"); }).find("7 words"),
            std::string::npos);
}

}  // namespace
}  // namespace bmmc
