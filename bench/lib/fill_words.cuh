// The benchmarks' device-side data fill: every 8-byte word i of rank r's slice gets splitmix64(r·2^40 + i) —
// distinct, the same in every run, written at memory speed (a host fill of 16–32 GiB per GPU took over a
// minute). With it the check both programs verify with: the bytes where two buffers differ (either may be a peer
// pointer). Shared by bench_peer (peer_gpu.cu) and bmmc_nccl_bench (bench/nccl).
#pragma once

namespace bmmc::bench_detail {

static __global__ void fill_rank_words(unsigned long long* words, unsigned long long count, unsigned long long rank) {
  using u64 = unsigned long long;
  for (u64 i = blockIdx.x * u64(blockDim.x) + threadIdx.x; i < count; i += u64(gridDim.x) * blockDim.x) {
    u64 z = (rank << 40) + i + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    words[i] = z ^ (z >> 31);
  }
}

// Adds to *bad the number of bytes of a[0, count) that differ from b[0, count).
static __global__ void count_differences(const unsigned char* a, const unsigned char* b, unsigned long long count,
                                         unsigned long long* bad) {
  using u64 = unsigned long long;
  u64 wrong = 0;
  for (u64 i = blockIdx.x * u64(blockDim.x) + threadIdx.x; i < count; i += u64(gridDim.x) * blockDim.x)
    wrong += a[i] != b[i];
  if (wrong) atomicAdd(bad, wrong);
}

}  // namespace bmmc::bench_detail
