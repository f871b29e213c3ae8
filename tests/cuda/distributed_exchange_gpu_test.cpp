// The distributed front door over the caller's collectives (ExchangeGroup) on device buffers: ranks as threads that
// share GPU 0, each with its own stream, over an in-process transport whose all-to-all copies device memory on the
// calling rank's stream (tests/dispatch/fake_exchange_world.hpp). The local passes run on CUDA because the pointers
// are device memory; with the caller's scratch, with the door's own (stream-ordered), and receiving into the input;
// against the one-array reference. Host and device memory mixed in one call are refused on every rank.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../dist/dist_test_support.hpp"
#include "bmmc/core/buffers.hpp"
#include "bmmc/core/named.hpp"
#include "bmmc/cpu/reference.hpp"
#include "bmmc/cuda/error.hpp"
#include "bmmc/cuda/memory.hpp"
#include "bmmc/distributed.hpp"
#include "dispatch/fake_exchange_world.hpp"
#include "gpu_test_support.hpp"

namespace bmmc {
namespace {

using Bytes = std::vector<unsigned char>;

test::FakeWorld device_world(int ranks) {
  return test::FakeWorld(
      ranks,
      [](void* d, const void* s, std::size_t n, StreamHandle stream) {
        check(cudaMemcpyAsync(d, s, n, cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync (exchange)");
      },
      [](StreamHandle stream) { check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (exchange)"); });
}

enum class Scratch { Callers, Own, IntoInput };

Bytes run_on_gpu(const Bmmc& b, int eb, int ranks, const Bytes& host, Scratch scratch) {
  test::FakeWorld world = device_world(ranks);
  const std::size_t local = host.size() / static_cast<std::size_t>(ranks);
  Bytes out(host.size());
  const auto errors = test::on_every_rank(ranks, [&](int r) {
    DistributedOptions o;
    o.destroy_input = scratch == Scratch::IntoInput;
    const DistributedPermuter p(b, eb, world.group(r), o);
    Stream stream;
    DeviceBuffer in(local), dst(local), tmp(p.scratch_bytes() ? p.scratch_bytes() : 1);
    in.upload(host.data() + r * local, local);
    dst.fill_bytes(0xA5);
    std::vector<void*> sp;
    if (scratch == Scratch::Callers && p.scratch_bytes()) sp.push_back(tmp.get());
    p({in.get()}, {dst.get()}, sp, {stream.get()});
    stream.synchronize();
    dst.download(out.data() + r * local, local);
  });
  for (int r = 0; r < ranks; ++r) EXPECT_EQ(errors[r], "") << "rank " << r;
  return out;
}

TEST(DistributedExchangeGpu, DeviceBuffersMatchTheReference) {
  REQUIRE_GPU();
  int checked = 0;
  for (int g : {1, 2, 3})
    for (int eb : {4, 8, 16})
      for (Scratch s : {Scratch::Callers, Scratch::Own, Scratch::IntoInput}) {
        const int n = 14 + g;
        const Bmmc b = random_bmmc(n, static_cast<std::uint64_t>(g * 10 + eb));
        Bytes host(array_bytes(n, eb));
        test::fill_random(host, static_cast<std::uint64_t>(eb + g));
        Bytes want(host.size());
        permute_reference(b, host.data(), want.data(), eb);
        EXPECT_EQ(run_on_gpu(b, eb, 1 << g, host, s), want) << "g=" << g << " eb=" << eb << " scratch "
                                                             << static_cast<int>(s);
        ++checked;
      }
  EXPECT_EQ(checked, 27);
}

TEST(DistributedExchangeGpu, HostAndDeviceMemoryMixedAreRefusedOnEveryRank) {
  REQUIRE_GPU();
  const int ranks = 2, n = 12;
  const Bmmc b = bit_reverse(n);
  const std::size_t local = array_bytes(n - 1, 4);
  test::FakeWorld world = device_world(ranks);
  const auto errors = test::on_every_rank(ranks, [&](int r) {
    const DistributedPermuter p(b, 4, world.group(r));
    DeviceBuffer in(local), dst(local);
    Bytes host_out(local);
    p({in.get()}, {r == 1 ? static_cast<void*>(host_out.data()) : dst.get()});
  });
  EXPECT_NE(errors[1].find("host"), std::string::npos) << errors[1];
  EXPECT_NE(errors[0].find("rank 1: refused its own arguments"), std::string::npos) << errors[0];
  EXPECT_EQ(world.exchanges, 0);
}

}  // namespace
}  // namespace bmmc
