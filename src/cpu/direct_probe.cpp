// The probe of the direct group loops (see direct_blocks.hpp, run_direct_probe): their loads and stores in
// their order, with no permutes, for benchmarks.
#include "avx2_transpose.hpp"
#include "avx512_network.hpp"
#include "direct_blocks.hpp"

namespace bmmc::cpu_detail {

#if BMMC_CPU_DIRECT_AVX2
namespace {

// The probe of a group loop: the group's 2^W input vectors loaded and stored to its 2^W output vectors in
// the loop's order, with no permute (V vectors of 32 bytes a group; probe_groups_512 below for 64-byte ones,
// which need AVX-512: as 32-byte halves the probe cost more than the loop it stands for).
template <int V>
__attribute__((target("avx2"))) void probe_groups_256(const DirectTables& d, const unsigned char* in,
                                                      unsigned char* out, std::uint64_t begin, std::uint64_t end) {
  const TransposeTables& x = *d.groups;
  const int eb = d.elem_bytes, W = x.lane_bits;
  GroupWalk<false, false> walk(d, begin);
  for (std::uint64_t g = begin; g < end; ++g) {
    if (g != begin) walk.step(g);
    __m256i r[V];
#pragma GCC unroll 32
    for (int k = 0; k < V; ++k)
      r[k] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + std::size_t{walk.a ^ x.kpos[k]} * eb));
#pragma GCC unroll 32
    for (int l = 0; l < V; ++l)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + (std::size_t{walk.vec ^ x.qvec[l]} << W) * eb), r[l]);
  }
}

template <int V>
BMMC_AVX512 void probe_groups_512(const DirectTables& d, const unsigned char* in, unsigned char* out,
                                  std::uint64_t begin, std::uint64_t end) {
  const TransposeTables& x = *d.groups;
  const int eb = d.elem_bytes, W = x.lane_bits;
  GroupWalk<false, false> walk(d, begin);
  for (std::uint64_t g = begin; g < end; ++g) {
    if (g != begin) walk.step(g);
    __m512i r[V];
#pragma GCC unroll 32
    for (int k = 0; k < V; ++k) r[k] = _mm512_loadu_si512(in + std::size_t{walk.a ^ x.kpos[k]} * eb);
#pragma GCC unroll 32
    for (int l = 0; l < V; ++l) _mm512_storeu_si512(out + (std::size_t{walk.vec ^ x.qvec[l]} << W) * eb, r[l]);
  }
}

}  // namespace
#endif

bool run_direct_probe(const DirectTables& t, const unsigned char* in, unsigned char* out) {
#if BMMC_CPU_DIRECT_AVX2
  if (!t.groups) return false;
  const std::uint64_t units = direct_units(t);
  if (t.groups->vector_bytes == 64) {
    if (!has_avx512()) return false;
    switch (t.groups->lane_bits) {
      case 5: return probe_groups_512<32>(t, in, out, 0, units), true;
      case 4: return probe_groups_512<16>(t, in, out, 0, units), true;
      case 3: return probe_groups_512<8>(t, in, out, 0, units), true;
    }
    return false;
  }
  if (!has_avx2()) return false;
  switch (t.groups->lane_bits) {
    case 5: return probe_groups_256<32>(t, in, out, 0, units), true;
    case 4: return probe_groups_256<16>(t, in, out, 0, units), true;
    case 3: return probe_groups_256<8>(t, in, out, 0, units), true;
    case 2: return probe_groups_256<4>(t, in, out, 0, units), true;
  }
#else
  (void)t, (void)in, (void)out;
#endif
  return false;
}

}  // namespace bmmc::cpu_detail
