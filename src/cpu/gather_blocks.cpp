// The gather block loops (see gather_blocks.hpp): phase 1 copies a block's input runs into the tile, phase 2
// gathers each output run from it element by element (scalar loads, or vpgather with AVX2), with plain or
// non-temporal stores. Templated on the element size, the run length in bytes and the store kind, so that
// the run copies and the 2^s-element gathers are fully unrolled.
#include "gather_blocks.hpp"

#include <fmt/format.h>

#include <cstring>
#include <stdexcept>

#include "avx2_transpose.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#define BMMC_CPU_STREAMING 1
#endif

namespace bmmc::cpu_detail {

namespace {

constexpr std::size_t kLine = 64;

#if BMMC_CPU_STREAMING
// 16 bytes of an output run, gathered from the tile: elements base ⊕ ntau[0 .. 16/B − 1].
template <int B>
inline __m128i gather16(const unsigned char* tile, std::uint32_t base, const std::uint32_t* ntau) {
  auto at = [&](int j) { return tile + std::size_t{base ^ ntau[j]} * B; };
  auto get = [&](auto v, int j) {
    std::memcpy(&v, at(j), sizeof v);
    return v;
  };
  if constexpr (B == 16) {
    return _mm_load_si128(reinterpret_cast<const __m128i*>(at(0)));
  } else if constexpr (B == 8) {
    return _mm_set_epi64x(get(std::int64_t{}, 1), get(std::int64_t{}, 0));
  } else if constexpr (B == 4) {
    return _mm_set_epi32(get(std::int32_t{}, 3), get(std::int32_t{}, 2), get(std::int32_t{}, 1),
                         get(std::int32_t{}, 0));
  } else if constexpr (B == 2) {
    const auto g = [&](int j) { return get(std::int16_t{}, j); };
    return _mm_set_epi16(g(7), g(6), g(5), g(4), g(3), g(2), g(1), g(0));
  } else {
    const auto g = [&](int j) { return static_cast<char>(*at(j)); };
    return _mm_set_epi8(g(15), g(14), g(13), g(12), g(11), g(10), g(9), g(8), g(7), g(6), g(5), g(4), g(3),
                        g(2), g(1), g(0));
  }
}
#endif

inline void stream_fence() {
#if BMMC_CPU_STREAMING
  _mm_sfence();
#endif
}

// Blocks [begin, end) of one pass. B = element bytes, RunBytes = 2^s·B, Stream = non-temporal output.
template <int B, int RunBytes, bool Stream>
void run_blocks(const TileTables& t, const unsigned char* in_raw, unsigned char* out_raw, std::uint64_t begin,
                std::uint64_t end, unsigned char* tile_raw) {
  using E = Elem<B>;
  constexpr int kRun = RunBytes / B;
  const auto* in = reinterpret_cast<const E*>(in_raw);
  auto* out = reinterpret_cast<E*>(out_raw);
  auto* tile = reinterpret_cast<E*>(tile_raw);
  const int s = t.s;
  const std::uint64_t rows = std::uint64_t{1} << t.m;
  const BitVec low = (BitVec{1} << s) - 1;
  const BitVec* rtab = t.rtab.data();
  const BitVec* utab = t.utab.data();
  const std::uint32_t* nsig = t.nsig.data();
  const std::uint32_t* ntau = t.ntau.data();

  BitVec x0 = t.x0(begin);
  for (std::uint64_t b = begin; b < end; ++b) {
    const BitVec z = t.z(b);
    const BitVec y0 = z & ~low;
    const std::uint32_t d = ntau[z & low];
    const bool has_next = b + 1 < end || t.prefetch_after;
    const BitVec next_x0 = b + 1 < end ? t.x0(b + 1) : t.prefetch_after.value_or(0);
    // Phase 1: whole runs of input into the tile rows (prefetched during the previous block's phase 2).
    for (std::uint64_t rho = 0; rho < rows; ++rho)
      std::memcpy(tile + (rho << s), in + (x0 ^ rtab[rho]), RunBytes);
    // Phase 2: gather each output run from the tile; meanwhile prefetch the next block's input row σ.
    for (std::uint64_t sigma = 0; sigma < rows; ++sigma) {
      if (has_next) {
        const auto* next = reinterpret_cast<const unsigned char*>(in + (next_x0 ^ rtab[sigma]));
        for (int l = 0; l < RunBytes; l += static_cast<int>(kLine)) __builtin_prefetch(next + l, 0, 1);
      }
      const std::uint32_t base = nsig[sigma] ^ d;
      E* dst = out + (y0 ^ utab[sigma]);
      if constexpr (Stream) {
#if BMMC_CPU_STREAMING
        // Gathered straight into registers and streamed: no staging buffer to store and reload.
        auto* d = reinterpret_cast<__m128i*>(dst);
#pragma GCC unroll 32
        for (int q = 0; q < RunBytes / 16; ++q)
          _mm_stream_si128(d + q, gather16<B>(tile_raw, base, ntau + q * (16 / B)));
#endif
      } else {
#pragma GCC unroll 16
        for (int j = 0; j < kRun; ++j) dst[j] = tile[base ^ ntau[j]];
      }
    }
    x0 = next_x0;
  }
  if constexpr (Stream) stream_fence();
}

#if BMMC_CPU_STREAMING && defined(__GNUC__) && defined(__x86_64__)
#define BMMC_CPU_AVX2 1
#include <immintrin.h>
// The same block loop for 4- and 8-byte elements on CPUs with AVX2 (chosen at run time): phase 2 gathers 8
// (or 4) elements with one vpgather on index vectors ntau ⊕ base, instead of one scalar load, XOR and
// insert per element, which halves the instructions of the loop that bounds the executor's speed.
template <int B, int RunBytes>
__attribute__((target("avx2"))) void run_blocks_avx2(const TileTables& t, const unsigned char* in,
                                                     unsigned char* out, std::uint64_t begin, std::uint64_t end,
                                                     unsigned char* tile) {
  static_assert(B == 4 || B == 8);
  const int s = t.s;
  const std::uint64_t rows = std::uint64_t{1} << t.m;
  const BitVec low = (BitVec{1} << s) - 1;
  const BitVec* rtab = t.rtab.data();
  const BitVec* utab = t.utab.data();
  const std::uint32_t* nsig = t.nsig.data();
  const std::uint32_t* ntau = t.ntau.data();
  BitVec x0 = t.x0(begin);
  for (std::uint64_t b = begin; b < end; ++b) {
    const BitVec z = t.z(b);
    const BitVec y0 = z & ~low;
    const std::uint32_t d = ntau[z & low];
    const bool has_next = b + 1 < end || t.prefetch_after;
    const BitVec next_x0 = b + 1 < end ? t.x0(b + 1) : t.prefetch_after.value_or(0);
    for (std::uint64_t rho = 0; rho < rows; ++rho)
      std::memcpy(tile + (rho << s) * B, in + (x0 ^ rtab[rho]) * B, RunBytes);
    for (std::uint64_t sigma = 0; sigma < rows; ++sigma) {
      if (has_next) {
        const unsigned char* next = in + (next_x0 ^ rtab[sigma]) * B;
        for (int l = 0; l < RunBytes; l += static_cast<int>(kLine)) __builtin_prefetch(next + l, 0, 1);
      }
      const __m256i base = _mm256_set1_epi32(static_cast<int>(nsig[sigma] ^ d));
      auto* dst = reinterpret_cast<__m256i*>(out + (y0 ^ utab[sigma]) * B);
#pragma GCC unroll 16
      for (int q = 0; q < RunBytes / 32; ++q) {
        if constexpr (B == 4) {
          const __m256i idx = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(ntau + 8 * q)), base);
          _mm256_stream_si256(dst + q, _mm256_i32gather_epi32(reinterpret_cast<const int*>(tile), idx, 4));
        } else {
          const __m128i idx = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(ntau + 4 * q)),
                                            _mm256_castsi256_si128(base));
          _mm256_stream_si256(dst + q, _mm256_i32gather_epi64(reinterpret_cast<const long long*>(tile), idx, 8));
        }
      }
    }
    x0 = next_x0;
  }
  _mm_sfence();
}

#endif


template <int B, int RunBytes>
BlockKernel pick_stream(bool stream) {
#if !BMMC_CPU_STREAMING
  stream = false;
#endif
  if constexpr (RunBytes >= static_cast<int>(kLine)) {
#if BMMC_CPU_AVX2
    if constexpr (B == 4 || B == 8) {
      if (stream && has_avx2()) return &run_blocks_avx2<B, RunBytes>;
    }
#endif
    if (stream) return &run_blocks<B, RunBytes, true>;
  }
  return &run_blocks<B, RunBytes, false>;
}

template <int B>
BlockKernel pick_run(int run_bytes, bool stream) {
  // A run is 32 elements (s = 5) to 512 bytes (the planner's 16-byte lane accesses).
  switch (run_bytes) {
    case 32: if constexpr (32 >= 32 * B) return pick_stream<B, 32>(stream); break;
    case 64: if constexpr (64 >= 32 * B) return pick_stream<B, 64>(stream); break;
    case 128: if constexpr (128 >= 32 * B) return pick_stream<B, 128>(stream); break;
    case 256: if constexpr (256 >= 32 * B) return pick_stream<B, 256>(stream); break;
    case 512: return pick_stream<B, 512>(stream);
  }
  throw std::invalid_argument(fmt::format("execute_plan_cpu: unsupported run of {} bytes for {}-byte elements",
                                          run_bytes, B));
}

}  // namespace

BlockKernel gather_block_kernel(int elem_bytes, int run_bytes, bool stream) {
  switch (elem_bytes) {
    case 1: return pick_run<1>(run_bytes, stream);
    case 2: return pick_run<2>(run_bytes, stream);
    case 4: return pick_run<4>(run_bytes, stream);
    case 8: return pick_run<8>(run_bytes, stream);
    case 16: return pick_run<16>(run_bytes, stream);
  }
  throw std::invalid_argument(fmt::format("execute_plan_cpu: unsupported element size {}", elem_bytes));
}

}  // namespace bmmc::cpu_detail
