// Test support: whether this CPU runs the CPU backend's vector loops, for tests whose expected loop names
// depend on it (the AVX2 loops for 4/8-byte elements and their AVX-512 direct groups, the AVX-512 VBMI loops — with BW and VL for 32-byte
// vectors, as src/cpu/vbmi_network.hpp's has_vbmi() asks — for 1/2-byte elements).
#pragma once

namespace bmmc::test {

inline bool cpu_has_avx2() {
#if defined(__GNUC__) && defined(__x86_64__)
  return __builtin_cpu_supports("avx2");
#else
  return false;
#endif
}

// AVX-512 F: the direct loop's 4/8-byte groups of 64-byte vectors (src/cpu/avx512_network.hpp).
inline bool cpu_has_avx512() {
#if defined(__GNUC__) && defined(__x86_64__)
  return __builtin_cpu_supports("avx512f");
#else
  return false;
#endif
}

inline bool cpu_has_vbmi() {
#if defined(__GNUC__) && defined(__x86_64__)
  return __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl");
#else
  return false;
#endif
}

}  // namespace bmmc::test
