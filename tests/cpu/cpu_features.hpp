// Test support: whether this CPU runs the CPU backend's vector loops, for tests whose expected loop names
// depend on it: AVX2 (4/8-byte loops), AVX-512 F (the direct loop's 4/8-byte groups of 64-byte vectors,
// src/cpu/avx512_network.hpp), AVX-512 VBMI with BW and VL (the 1/2-byte loops, as src/cpu/vbmi_network.hpp's
// has_vbmi() asks). Each asks the CPU what the library asks it.
#pragma once

namespace bmmc::test {

#if defined(__GNUC__) && defined(__x86_64__)
inline bool cpu_has_avx2() { return __builtin_cpu_supports("avx2"); }
inline bool cpu_has_avx512() { return __builtin_cpu_supports("avx512f"); }
inline bool cpu_has_vbmi() {
  return __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl");
}
#else
inline bool cpu_has_avx2() { return false; }
inline bool cpu_has_avx512() { return false; }
inline bool cpu_has_vbmi() { return false; }
#endif

}  // namespace bmmc::test
