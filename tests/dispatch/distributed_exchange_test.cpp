// The distributed front door over the caller's collectives (bmmc/distributed.hpp, ExchangeGroup): G ranks as threads
// of this process over an in-process transport (an all-gather and an all-to-all that meet at a rendezvous with a
// timeout, so that a rank left waiting fails the test instead of hanging it), reconstructed against the one-array
// reference over random maps, element sizes and rank counts; the counts of collectives each call makes; every
// refusal — bad groups and options, a rank whose own arguments are bad at construction or at the call, ranks that
// disagree — making every rank throw with nothing written.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bmmc/core/buffers.hpp"
#include "bmmc/core/named.hpp"
#include "bmmc/cpu/reference.hpp"
#include "bmmc/distributed.hpp"
#include "dist/dist_test_support.hpp"
#include "dist/error_message.hpp"
#include "dispatch/fake_exchange_world.hpp"

namespace bmmc {
namespace {

using Bytes = std::vector<unsigned char>;
using test::FakeWorld;
using test::on_every_rank;

Bytes reference(const Bmmc& b, const Bytes& in, int eb) {
  Bytes out(in.size());
  permute_reference(b, in.data(), out.data(), eb);
  return out;
}

struct Case {
  Bmmc map;
  int eb = 4;
  int ranks = 2;
  DistributedOptions options;
  bool callers_scratch = false;
};

// Every rank builds its permuter over the world and permutes its slice of `in`; returns the whole output.
Bytes run_ranks(const Case& c, const Bytes& in, FakeWorld& world) {
  Bytes out(in.size(), 0xAB), input = in;
  const std::size_t local = in.size() / static_cast<std::size_t>(c.ranks);
  const auto errors = on_every_rank(c.ranks, [&](int r) {
    const DistributedPermuter p(c.map, c.eb, world.group(r), c.options);
    EXPECT_EQ(p.engine(), DistEngine::Exchange);
    EXPECT_EQ(p.local_bytes(), local);
    EXPECT_EQ(p.first_rank(), r);
    EXPECT_EQ(p.local_ranks(), 1);
    std::vector<void*> scratch;
    Bytes own(p.scratch_bytes());
    if (c.callers_scratch && p.scratch_bytes() > 0) scratch.push_back(own.data());
    p({input.data() + r * local}, {out.data() + r * local}, scratch);
  });
  for (int r = 0; r < c.ranks; ++r) EXPECT_EQ(errors[r], "") << "rank " << r;
  return out;
}

TEST(DistributedExchangeGroup, EveryRankMatchesTheSingleArrayResult) {
  int checked = 0;
  for (std::uint64_t seed = 1; seed <= 3; ++seed)
    for (int g : {0, 1, 2, 3})
      for (int eb : {1, 2, 4, 8, 16}) {
        const int m = 9, n = m + g;
        auto maps = test::maps_for(n, seed);
        maps.emplace_back("k=0", test::block_triangular(m, g, seed));
        if (g > 0) maps.emplace_back("k=g", test::rank_local_swap_all(m, g, seed));
        Bytes in(array_bytes(n, eb));
        test::fill_random(in, seed * 7 + static_cast<std::uint64_t>(g * 5 + eb));
        for (const auto& [name, b] : maps) {
          Case c{b, eb, 1 << g, {}, (seed + static_cast<std::uint64_t>(eb)) % 2 == 0};
          FakeWorld world(c.ranks);
          EXPECT_EQ(run_ranks(c, in, world), reference(b, in, eb))
              << name << " seed " << seed << " g=" << g << " eb=" << eb;
          EXPECT_EQ(world.gathers, c.ranks) << "one agreement per rank and call";
          ++checked;
        }
      }
  EXPECT_EQ(checked, 3 * 5 * (4 * 9 + 3));  // maps_for's 8 maps and k=0 for every g, k=g where there are rank bits
}

TEST(DistributedExchangeGroup, DestroyingTheInputAndSkippingTheAgreement) {
  int checked = 0;
  for (int g : {1, 2, 3})
    for (const Bmmc& b : {random_bmmc(11, static_cast<std::uint64_t>(g)), bit_reverse(11)}) {
      Bytes in(array_bytes(11, 8));
      test::fill_random(in, static_cast<std::uint64_t>(g));
      Case c{b, 8, 1 << g, {}, false};
      c.options.destroy_input = true;
      c.options.check_agreement = false;
      FakeWorld world(c.ranks);
      EXPECT_EQ(run_ranks(c, in, world), reference(b, in, 8));
      EXPECT_EQ(world.gathers, 0);
      EXPECT_EQ(world.exchanges, c.ranks);
      ++checked;
    }
  EXPECT_EQ(checked, 6);
}

TEST(DistributedExchangeGroup, AMapThatKeepsEveryElementOnItsRankNeverExchanges) {
  const int m = 10, g = 2;
  // Local bits reversed, rank bits fixed: no element changes rank.
  std::vector<int> p(m + g);
  for (int i = 0; i < m; ++i) p[i] = m - 1 - i;
  for (int i = m; i < m + g; ++i) p[i] = i;
  const Bmmc b = bit_permutation(p);
  Bytes in(array_bytes(m + g, 4));
  test::fill_random(in, 3);
  FakeWorld world(1 << g);
  EXPECT_EQ(run_ranks(Case{b, 4, 1 << g, {}, false}, in, world), reference(b, in, 4));
  EXPECT_EQ(world.exchanges, 0);
  EXPECT_EQ(world.gathers, 1 << g);
  FakeWorld one(1);
  const DistributedPermuter q(b, 4, one.group(0));
  EXPECT_EQ(q.scratch_bytes(), 0u);
  EXPECT_NE(q.describe().find("one local pass"), std::string::npos) << q.describe();
  FakeWorld four(4);
  const DistributedPermuter r(random_bmmc(m + g, 1), 4, four.group(1));
  EXPECT_EQ(r.scratch_bytes(), r.local_bytes());
  EXPECT_NE(r.describe().find("exchange engine"), std::string::npos) << r.describe();
  EXPECT_NE(r.describe().find("the caller's all-to-all"), std::string::npos) << r.describe();
}

// Every rank throws and none is left waiting; no rank's output is written.
void expect_all_refuse(int ranks, const std::function<void(int, FakeWorld&, Bytes&)>& body, int bad,
                       const std::string& own_error) {
  FakeWorld world(ranks);
  std::vector<Bytes> outs(ranks, Bytes(1, 0));
  const auto errors = on_every_rank(ranks, [&](int r) { body(r, world, outs[r]); });
  for (int r = 0; r < ranks; ++r) {
    if (r == bad) {
      EXPECT_NE(errors[r].find(own_error), std::string::npos) << "rank " << r << ": " << errors[r];
      EXPECT_EQ(errors[r].find("refused its own arguments"), std::string::npos) << errors[r];
    } else {
      EXPECT_NE(errors[r].find(fmt::format("rank {}: refused its own arguments", bad)), std::string::npos)
          << "rank " << r << ": " << errors[r];
      EXPECT_NE(errors[r].find(fmt::format("this is rank {}", r)), std::string::npos) << errors[r];
    }
    EXPECT_EQ(errors[r].find("waited"), std::string::npos) << "rank " << r << ": " << errors[r];
    for (unsigned char v : outs[r]) ASSERT_EQ(v, 0xAB) << "rank " << r << " wrote its output";
  }
  EXPECT_EQ(world.exchanges, 0);
}

TEST(DistributedExchangeGroup, ARankWithBadArgumentsMakesEveryRankThrow) {
  const int ranks = 4, bad = 2, n = 12;
  const Bmmc b = random_bmmc(n, 5);
  const std::size_t local = array_bytes(n - 2, 4);
  int checked = 0;
  // At construction: the bad rank's own options or map are refused; it announces the refusal in its constructor.
  using Build = std::function<DistributedPermuter(ExchangeGroup)>;
  const std::vector<std::pair<Build, std::string>> builds = {
      {[&](ExchangeGroup g) {
         DistributedOptions o;
         o.depth = 3;
         return DistributedPermuter(b, 4, std::move(g), o);
       },
       "DistributedOptions::depth cannot be honoured by an ExchangeGroup"},
      {[&](ExchangeGroup g) { return DistributedPermuter(random_bmmc(1, 1), 4, std::move(g)); }, "ranks"},
      {[&](ExchangeGroup g) { return DistributedPermuter(b, 3, std::move(g)); }, "element size"},
      {[&](ExchangeGroup g) {
         g.exchange = nullptr;
         return DistributedPermuter(b, 4, std::move(g));
       },
       "ExchangeGroup::exchange is empty"},
  };
  for (const auto& [build, says] : builds) {
    expect_all_refuse(
        ranks,
        [&](int r, FakeWorld& world, Bytes& out) {
          out.assign(local, 0xAB);
          Bytes in(local, 1), scratch(local);
          const DistributedPermuter p = r == bad ? build(world.group(r)) : DistributedPermuter(b, 4, world.group(r));
          p({in.data()}, {out.data()}, {scratch.data()});
        },
        bad, says);
    ++checked;
  }
  // At the call: the bad rank's buffers are refused before its agreement; its peers throw in theirs.
  using Call = std::function<void(const DistributedPermuter&, Bytes&, Bytes&, Bytes&)>;
  const std::vector<std::pair<Call, std::string>> calls = {
      {[](const DistributedPermuter& p, Bytes& in, Bytes&, Bytes&) { p({in.data()}, {nullptr}); }, "out is null"},
      {[](const DistributedPermuter& p, Bytes& in, Bytes&, Bytes&) { p({in.data()}, {in.data() + 4}); },
       "overlaps"},
      {[](const DistributedPermuter& p, Bytes& in, Bytes& out, Bytes&) { p({in.data()}, {out.data() + 1}); },
       "not aligned"},
      {[](const DistributedPermuter& p, Bytes& in, Bytes& out, Bytes&) { p({in.data()}, {out.data()}, {out.data()}); },
       "scratch"},
      {[](const DistributedPermuter& p, Bytes& in, Bytes& out, Bytes&) {
         p({in.data(), in.data()}, {out.data(), out.data()});
       },
       "2 input buffers for 1 local rank"},
      {[](const DistributedPermuter& p, Bytes&, Bytes& out, Bytes&) {
         p.permute_in_place({static_cast<void*>(out.data())});
       },
       "out of place"},
  };
  for (const auto& [call, says] : calls) {
    expect_all_refuse(
        ranks,
        [&](int r, FakeWorld& world, Bytes& out) {
          out.assign(local, 0xAB);
          Bytes in(local, 1), scratch(local);
          const DistributedPermuter p(b, 4, world.group(r));
          if (r == bad) return call(p, in, out, scratch);
          p({in.data()}, {out.data()}, {scratch.data()});
        },
        bad, says);
    ++checked;
  }
  // The caller's own checks, before it can build a permuter: refuse() in its place.
  expect_all_refuse(
      ranks,
      [&](int r, FakeWorld& world, Bytes& out) {
        out.assign(local, 0xAB);
        Bytes in(local, 1), scratch(local);
        if (r == bad) {
          DistributedPermuter::refuse(world.group(r));
          throw std::invalid_argument("the caller's own check");
        }
        DistributedPermuter(b, 4, world.group(r))({in.data()}, {out.data()}, {scratch.data()});
      },
      bad, "the caller's own check");
  EXPECT_EQ(++checked, 11);
}

TEST(DistributedExchangeGroup, RanksThatDisagreeAllThrowBeforeDataMoves) {
  const int ranks = 4, n = 12;
  const std::size_t local = array_bytes(n - 2, 4);
  FakeWorld world(ranks);
  std::vector<Bytes> outs(ranks, Bytes(local, 0xAB));
  const auto errors = on_every_rank(ranks, [&](int r) {
    Bytes in(local, 1);
    const DistributedPermuter p(r == 3 ? bit_reverse(n) : random_bmmc(n, 2), 4, world.group(r));
    p({in.data()}, {outs[r].data()});
  });
  for (int r = 0; r < ranks; ++r) {
    EXPECT_NE(errors[r].find("disagree"), std::string::npos) << errors[r];
    EXPECT_NE(errors[r].find(fmt::format("this is rank {}", r)), std::string::npos) << errors[r];
    EXPECT_EQ(outs[r], Bytes(local, 0xAB));
  }
  EXPECT_EQ(world.exchanges, 0);
}

TEST(DistributedExchangeGroup, BadGroupsAndOptionsAreRefused) {
  const Bmmc b = random_bmmc(10, 1);
  FakeWorld world(2);
  auto says = [&](ExchangeGroup g, const DistributedOptions& o, const std::string& what) {
    const std::string msg = test::error_message([&] { DistributedPermuter(b, 4, std::move(g), o); });
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
  };
  ExchangeGroup g = world.group(0);
  g.ranks = 3;
  says(g, {}, "ExchangeGroup::ranks = 3");
  g = world.group(1);
  g.rank = 2;
  says(g, {}, "ExchangeGroup::rank = 2");
  g = world.group(0);
  g.gather = nullptr;
  says(g, {}, "ExchangeGroup::gather is empty");
  EXPECT_NE(test::error_message([&] { DistributedPermuter::refuse(g); }).find("gather is empty"), std::string::npos);
  // Options the group cannot honour (a refusal is announced, so each runs on a world of one rank).
  FakeWorld one(1);
  auto refused = [&](const DistributedOptions& o, const std::string& option) {
    says(one.group(0), o, "DistributedOptions::" + option + " cannot be honoured by an ExchangeGroup");
  };
  int checked = 0;
  for (DistEngine e : {DistEngine::Pieces, DistEngine::Push}) {
    DistributedOptions o;
    o.engine = e;
    refused(o, "engine");
    ++checked;
  }
  DistributedOptions o;
  o.in_place = true;
  refused(o, "in_place");
  o = {};
  o.pieces = 4;
  refused(o, "pieces");
  o = {};
  o.depth = 3;
  refused(o, "depth");
  o = {};
  o.exchange_comms = 2;
  refused(o, "exchange_comms");
  o = {};
  o.gpu.device = 0;
  refused(o, "gpu.device");
  checked += 5;
  EXPECT_EQ(checked, 7);
  // What it honours.
  o = {};
  o.engine = DistEngine::Exchange;
  o.pieces = 1;
  o.cpu.threads = 1;
  o.destroy_input = true;
  o.check_agreement = false;
  EXPECT_NO_THROW(DistributedPermuter(b, 4, one.group(0), o));
  EXPECT_NO_THROW(DistributedPermuter(b, 4, one.group(0), {}));
}

}  // namespace
}  // namespace bmmc
