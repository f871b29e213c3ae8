// The front door for programs on CUDA: the sorting network on device pointers with a stream and on host arrays
// (staged), with JIT and generic permutation kernels, against std::sort and the CPU runner; what it reports; and
// memory of the wrong kind refused before anything is written. Without a GPU every test reports SKIPPED.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "bmmc/combinators/sorting_network.hpp"
#include "bmmc/cuda/error.hpp"
#include "bmmc/cuda/memory.hpp"
#include "bmmc/program_runner.hpp"
#include "cuda/gpu_test_support.hpp"
#include "dist/error_message.hpp"

namespace bmmc {
namespace {

std::vector<float> random_floats(std::size_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<float> v(count);
  for (auto& x : v) x = static_cast<float>(static_cast<int>(rng() % 20001) - 10000) / 16.0f + 0.25f;
  return v;
}

ProgramOptions on(Backend b, ExecStrategy s = ExecStrategy::Fused) {
  ProgramOptions o;
  o.backend = b;
  o.strategy = s;
  return o;
}

TEST(GpuProgramRunner, SortsDeviceArraysOnAStreamAsTheCpuRunnerDoes) {
  REQUIRE_GPU();
  for (int k : {6, 12, 18})
    for (ExecStrategy s : {ExecStrategy::Fused, ExecStrategy::Folded, ExecStrategy::PermuteThenLeaf})
      for (bool jit : {true, false}) {
        const std::vector<float> in = random_floats(std::size_t{1} << k, k);
        ProgramOptions o = on(Backend::Cuda, s);
        o.gpu.jit = jit;
        const ProgramRunner gpu(sort_network(k), DType::Float32, o);
        EXPECT_EQ(gpu.backend(), Backend::Cuda);
        EXPECT_GE(gpu.device(), 0);
        EXPECT_EQ(gpu.pass_names().size(), gpu.passes());
        const std::size_t bytes = in.size() * sizeof(float);
        DeviceBuffer d(bytes), temp(gpu.temp_bytes());
        d.upload(in.data(), bytes);
        cudaStream_t stream;
        BMMC_CUDA_CHECK(cudaStreamCreate(&stream));
        gpu(d.get(), stream, temp.get());
        BMMC_CUDA_CHECK(cudaStreamSynchronize(stream));
        BMMC_CUDA_CHECK(cudaStreamDestroy(stream));
        std::vector<float> got(in.size());
        d.download(got.data(), bytes);
        auto expect = in;
        std::sort(expect.begin(), expect.end());
        ASSERT_EQ(got, expect) << "k " << k << " " << to_string(s) << (jit ? " jit" : " generic");
        // Host arrays staged through the device, and the CPU runner, give the same keys.
        std::vector<float> staged(in.size()), cpu(in.size());
        EXPECT_EQ(gpu.run_host(in.data(), staged.data(), bytes), Backend::Cuda);
        EXPECT_EQ(ProgramRunner(sort_network(k), DType::Float32, on(Backend::Cpu, s)).run_host(in.data(), cpu.data(), bytes),
                  Backend::Cpu);
        EXPECT_EQ(staged, expect);
        EXPECT_EQ(cpu, expect);
        if (s == ExecStrategy::Fused) {
          EXPECT_GT(gpu.fused_passes(), 0u);
          EXPECT_EQ(gpu.fused_sources().size(), gpu.fused_passes());
          EXPECT_NE(gpu.describe_fused().find("fused passes"), std::string::npos);
        }
        // pass_ms times every pass of a full run (and sorts too).
        d.upload(in.data(), bytes);
        EXPECT_EQ(gpu.pass_ms(d.get(), nullptr, temp.get()).size(), gpu.passes());
        d.download(got.data(), bytes);
        EXPECT_EQ(got, expect);
      }
}

TEST(GpuProgramRunner, RefusesMemoryOfTheWrongKindBeforeWriting) {
  REQUIRE_GPU();
  const Program sort10 = sort_network(10);
  const ProgramRunner gpu(sort10, DType::Int32, on(Backend::Cuda));
  const ProgramRunner cpu(sort10, DType::Int32, on(Backend::Cpu));
  std::vector<std::int32_t> host(1024, 7);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<std::int32_t>(1024 - i);
  const auto host_before = host;
  DeviceBuffer d(host.size() * 4);
  d.upload(host.data(), host.size() * 4);
  using test::error_message;
  EXPECT_NE(error_message([&] { gpu(host.data()); }).find("is host memory"), std::string::npos);
  EXPECT_NE(error_message([&] { cpu(d.get()); }).find("but the program runs on the cpu backend"), std::string::npos);
  EXPECT_NE(error_message([&] { gpu.run_host(d.get(), host.data(), host.size() * 4); }).find("run_host takes host arrays"),
            std::string::npos);
  EXPECT_EQ(host, host_before);
  std::vector<std::int32_t> back(host.size());
  d.download(back.data(), back.size() * 4);
  EXPECT_EQ(back, host_before);  // the device array is untouched too
}

}  // namespace
}  // namespace bmmc
