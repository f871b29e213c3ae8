// The distributed front door (bmmc/distributed.hpp) on the GPUs of this process: ranks that share GPU 0 (a device
// list with repeats, as the peer engines' own tests run them) and, on a machine with several GPUs, one rank per
// GPU. Every engine out of place and in place against the one-array reference, with the caller's scratch and with
// none (the door allocates it), the engine it reports, and bad buffers refused before anything is written.
#include "bmmc/distributed.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <bit>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "../dist/dist_test_support.hpp"
#include "../dist/error_message.hpp"
#include "bmmc/core/buffers.hpp"
#include "bmmc/core/named.hpp"
#include "bmmc/cpu/reference.hpp"
#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/error.hpp"
#include "bmmc/cuda/memory.hpp"
#include "../peer/peer_test_support.hpp"
#include "gpu_test_support.hpp"

namespace bmmc {
namespace {

using Bytes = std::vector<unsigned char>;
constexpr unsigned char kPoison = 0xa5;

// The peer tests' device lists (ranks sharing GPU 0, then every GPU of the machine) with two ranks or more.
std::vector<std::vector<int>> groups() {
  std::vector<std::vector<int>> lists;
  for (auto& l : test::device_lists())
    if (l.size() >= 2) lists.push_back(std::move(l));
  return lists;
}

// Runs p on `host` split over its ranks (with the caller's scratch when `callers_scratch`) and returns the
// output array (in place: the data array afterwards).
Bytes run(const DistributedPermuter& p, const std::vector<int>& devices, const Bytes& host, bool callers_scratch) {
  const std::size_t local = p.local_bytes();
  std::vector<DeviceBuffer> in, out, scratch;
  std::vector<const void*> ip;
  std::vector<void*> op, sp;
  for (std::size_t r = 0; r < devices.size(); ++r) {
    ScopedDevice on(devices[r]);
    in.emplace_back(local);
    out.emplace_back(local);
    check(cudaMemcpy(in.back().get(), host.data() + r * local, local, cudaMemcpyHostToDevice), "cudaMemcpy");
    check(cudaMemset(out.back().get(), kPoison, local), "cudaMemset");
    ip.push_back(in.back().get());
    op.push_back(out.back().get());
    if (callers_scratch && p.scratch_bytes()) {
      scratch.emplace_back(p.scratch_bytes());
      sp.push_back(scratch.back().get());
    }
  }
  if (p.in_place()) {
    for (std::size_t r = 0; r < op.size(); ++r)
      check(cudaMemcpy(op[r], ip[r], local, cudaMemcpyDeviceToDevice), "cudaMemcpy");
    p.permute_in_place(op);
  } else {
    p(ip, op, sp);
  }
  test::synchronize(devices);
  Bytes result(host.size());
  for (std::size_t r = 0; r < devices.size(); ++r)
    check(cudaMemcpy(result.data() + r * local, op[r], local, cudaMemcpyDeviceToHost), "cudaMemcpy");
  return result;
}

Bytes reference(const Bmmc& b, const Bytes& in, int eb) {
  Bytes out(in.size());
  permute_reference(b, in.data(), out.data(), eb);
  return out;
}

TEST(DistributedDoorPeer, EveryEngineOutOfPlaceMatchesTheReference) {
  REQUIRE_GPU();
  int ran = 0, refused = 0;
  for (const auto& devices : groups()) {
    const int g = std::countr_zero(devices.size());
    for (int m : {14, 18}) {
      const int n = m + g;
      const std::vector<std::pair<std::string, Bmmc>> maps = {{"random", random_bmmc(n, m + g)},
                                                              {"bit-reverse", bit_reverse(n)},
                                                              {"swap rank 0 <-> local 0", test::one_bit_swap(m, g, 0, 0)},
                                                              {"k = 0", test::block_triangular(m, g, 3)}};
      for (int eb : {4, 8})
        for (const auto& [name, b] : maps) {
          const Bytes in = test::random_bytes(array_bytes(n, eb), 11 * m + eb);
          const Bytes want = reference(b, in, eb);
          for (DistEngine e : {DistEngine::Auto, DistEngine::Exchange, DistEngine::Pieces, DistEngine::Push}) {
            DistributedOptions o;
            o.engine = e;
            std::optional<DistributedPermuter> p;
            try {
              p.emplace(b, eb, DeviceGroup{devices}, o);
            } catch (const std::invalid_argument& err) {
              // only a named engine may refuse (pieces too small to cut, a push below a warp row), saying why
              ASSERT_NE(e, DistEngine::Auto) << err.what();
              ++refused;
              continue;
            }
            ASSERT_NE(p->engine(), DistEngine::Auto);
            if (e != DistEngine::Auto) EXPECT_EQ(p->engine(), e);
            for (bool callers : {true, false})
              EXPECT_EQ(run(*p, devices, in, callers), want)
                  << name << " on " << devices.size() << " ranks, " << p->describe() << (callers ? "" : ", own scratch");
            ++ran;
          }
        }
    }
  }
  EXPECT_GT(ran, refused) << "the named engines refused most cases";
}

TEST(DistributedDoorPeer, InPlaceInvolutionsMatchTheReference) {
  REQUIRE_GPU();
  for (const auto& devices : groups()) {
    const int g = std::countr_zero(devices.size());
    const int m = 18, n = m + g;
    for (const Bmmc& b : {test::swaps(n, {{0, m}}), test::swaps(n, {{m - 1, m}, {1, 4}})})
      for (DistEngine staged : {DistEngine::Exchange, DistEngine::Push}) {
        DistributedOptions o;
        o.in_place = true;
        o.staged_engine = staged;
        o.max_staging_chunk = array_bytes(m - 3, 8);  // several chunks
        const DistributedPermuter p(b, 8, DeviceGroup{devices}, o);
        EXPECT_TRUE(p.engine() == DistEngine::Swap || p.engine() == DistEngine::StagedSwap);
        const Bytes in = test::random_bytes(array_bytes(n, 8), 5 + g);
        EXPECT_EQ(run(p, devices, in, false), reference(b, in, 8)) << p.describe();
      }
  }
}

TEST(DistributedDoorPeer, BadBuffersAreRefusedBeforeAnyWrite) {
  REQUIRE_GPU();
  const std::vector<int> devices = {0, 0};
  const DistributedPermuter p(random_bmmc(15, 2), 4, DeviceGroup{devices});
  const std::size_t local = p.local_bytes();
  DeviceBuffer in(2 * local), out(2 * local);
  check(cudaMemset(out.get(), kPoison, 2 * local), "cudaMemset");
  auto* i0 = static_cast<unsigned char*>(in.get());
  auto* o0 = static_cast<unsigned char*>(out.get());
  const std::vector<const void*> ip = {i0, i0 + local};
  auto says = [&](const std::vector<const void*>& a, const std::vector<void*>& b, const std::string& what) {
    const std::string msg = test::error_message([&] { p(a, b); });
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
  };
  says(ip, {o0}, "1 output buffers for 2 local rank(s)");
  says(ip, {o0, nullptr}, "rank 1");
  says(ip, {o0, o0 + local / 2}, "overlap");  // rank 1's output starts inside rank 0's
  says({i0, o0}, {o0, o0 + local}, "overlap");  // rank 1's input is rank 0's output
  says(ip, {o0 + 1, o0 + local}, "align");
  std::vector<unsigned char> host(2 * local);
  check(cudaMemcpy(host.data(), out.get(), host.size(), cudaMemcpyDeviceToHost), "cudaMemcpy");
  EXPECT_EQ(host, std::vector<unsigned char>(2 * local, kPoison));
  EXPECT_NE(test::error_message([&] { DistributedPermuter(random_bmmc(15, 2), 4, DeviceGroup{{0, 0, 0}}); }), "no error");
}

}  // namespace
}  // namespace bmmc
