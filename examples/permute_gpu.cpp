// An example of docs/GUIDE.md: permute a device array by a spec on a stream, then check it on the host.
// Exits 77 (reported as Skipped by ctest) on machines without a CUDA GPU.
#include <bmmc/core/spec.hpp>
#include <bmmc/cuda/device.hpp>
#include <bmmc/permute.hpp>
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

int main() {
  if (!bmmc::gpu_available()) {
    std::puts("no CUDA GPU: skipped");
    return 77;
  }
  const int n = 20;  // 2^20 int32
  std::vector<int> host(1 << n), result(1 << n);
  for (int i = 0; i < (1 << n); ++i) host[i] = i * 7 + 1;

  int *in = nullptr, *out = nullptr;
  cudaStream_t stream;
  cudaMalloc(&in, host.size() * sizeof(int));
  cudaMalloc(&out, host.size() * sizeof(int));
  cudaStreamCreate(&stream);
  cudaMemcpyAsync(in, host.data(), host.size() * sizeof(int), cudaMemcpyHostToDevice, stream);

  // One call: parse, plan, JIT (cached), launch on `stream` (device pointers: Backend::Auto runs it on the
  // GPU that holds them). Keep a bmmc::Permuter to skip the lookups.
  bmmc::permute("transpose:10", in, out, n, sizeof(int), {}, stream);

  cudaMemcpyAsync(result.data(), out, result.size() * sizeof(int), cudaMemcpyDeviceToHost, stream);
  cudaStreamSynchronize(stream);
  const bmmc::Bmmc t = bmmc::parse_spec("transpose:10", n);
  for (std::uint64_t x = 0; x < host.size(); ++x)
    if (result[t.apply(x)] != host[x]) {
      std::printf("wrong element at %llu\n", static_cast<unsigned long long>(x));
      return 1;
    }
  std::puts("transpose:10 of 2^20 int32 on the GPU: ok");
  cudaFree(in);
  cudaFree(out);
  cudaStreamDestroy(stream);
  return 0;
}
