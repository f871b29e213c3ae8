// The walk of the direct loops (see direct_blocks.hpp): any element size, out of place or in place on pairs of
// blocks, a block of whole output lines at a time.
#include <fmt/format.h>

#include <cstring>
#include <stdexcept>
#include <utility>

#include "bmmc/core/bit_matrix.hpp"
#include "direct_blocks.hpp"

namespace bmmc::cpu_detail {

namespace {

template <int B>
struct Elem {
  unsigned char b[B];
};

// One block of the walk: output line h of the block at output coset y0 (source x0) gets the sources
// x0 ⊕ xhi[h·2^L] ⊕ xlo[j], at y0 ⊕ yhi[h·2^L] + j. Swap (in place, out == in): each output y and its source x
// exchange elements instead — for an involution f(x) = y means f(y) = x, so the exchange also runs the
// partner block, whose outputs are this block's sources (paired); a block that is its own partner exchanges
// each pair {x, y} once (x > y) and leaves x = y alone. Two loads and two stores per pair of elements, as out
// of place, and no buffer.
template <int B, bool Swap>
__attribute__((always_inline)) inline void walk_block(const DirectTables& t, const Elem<B>* in, Elem<B>* out,
                                                      BitVec y0, BitVec x0, [[maybe_unused]] bool paired) {
  constexpr int kLine = walk_line_bits(B);
  const std::uint32_t* xlo = t.walk_in.data();   // A⁻¹·j for the 2^L output offsets j of a line
  const std::uint32_t* yhi = t.walk_out.data();  // the block's line offsets (output) ...
  const std::uint32_t* xhi = t.walk_in.data();   // ... and their sources (the same table, every 2^L-th entry)
  const auto move = [&](BitVec y, BitVec x) {
    if constexpr (Swap) {
      if (paired || x > y) std::swap(out[x], out[y]);
    } else {
      out[y] = in[x];
    }
  };
  if (t.n < kLine) {  // fewer elements than a line: one block, element by element
    for (std::size_t j = 0; j < t.walk_out.size(); ++j) move(y0 ^ yhi[j], x0 ^ xhi[j]);
    return;
  }
  const std::size_t lines = t.walk_out.size() >> kLine;
  for (std::size_t h = 0; h < lines; ++h) {
    const BitVec dst = y0 ^ yhi[h << kLine];  // a whole line: the low output bits are the table's first L
    const BitVec src = x0 ^ xhi[h << kLine];
#pragma GCC unroll 32
    for (int j = 0; j < (1 << kLine); ++j) move(dst + j, src ^ xlo[j]);
  }
}

// Blocks [begin, end) of the walk in Gray-code order of the block index. Pairs (in place, out == in): the block
// of a pair that owns it (owns_pair) exchanges its outputs with their sources (walk_block's Swap), which runs
// both; the other is skipped.
template <int B, bool Pairs>
void walk(const DirectTables& t, const unsigned char* in_raw, unsigned char* out_raw, std::uint64_t begin,
          std::uint64_t end) {
  using E = Elem<B>;
  const auto* in = reinterpret_cast<const E*>(in_raw);
  auto* out = reinterpret_cast<E*>(out_raw);
  // Coset (y0, x0 = A⁻¹·(y0 ⊕ c)) of block index `begin` in Gray-code order, then one column per step; with
  // Pairs the partner's Gray index likewise.
  BitVec h = begin ^ (begin >> 1);
  BitVec y0 = xor_of_columns(t.walk_ycols, h), x0 = xor_of_columns(t.walk_xcols, h) ^ t.walk_c;
  BitVec ph = 0;
  if constexpr (Pairs) ph = xor_of_columns(t.pairs->h_cols, h) ^ t.pairs->h_c;
  for (std::uint64_t g = begin; g < end; ++g) {
    if (g != begin) {
      const int i = __builtin_ctzll(g);
      y0 ^= t.walk_ycols[i], x0 ^= t.walk_xcols[i];
      if constexpr (Pairs) h ^= BitVec{1} << i, ph ^= t.pairs->h_cols[i];
    }
    if constexpr (Pairs) {
      if (owns_pair(h, ph)) walk_block<B, true>(t, in, out, y0, x0, ph != h);
    } else {
      walk_block<B, false>(t, in, out, y0, x0, false);
    }
  }
}

using WalkLoop = void (*)(const DirectTables&, const unsigned char*, unsigned char*, std::uint64_t, std::uint64_t);

// The walk for the element size, in place with Pairs.
template <bool Pairs>
WalkLoop pick_walk(int elem_bytes) {
  switch (elem_bytes) {
    case 1: return &walk<1, Pairs>;
    case 2: return &walk<2, Pairs>;
    case 4: return &walk<4, Pairs>;
    case 8: return &walk<8, Pairs>;
    case 16: return &walk<16, Pairs>;
  }
  throw std::invalid_argument(fmt::format("run_direct: unsupported element size {}", elem_bytes));
}

}  // namespace

void run_walk(const DirectTables& t, const unsigned char* in, unsigned char* out, std::uint64_t begin,
              std::uint64_t end, bool pairs) {
  return (pairs ? pick_walk<true>(t.elem_bytes) : pick_walk<false>(t.elem_bytes))(t, in, out, begin, end);
}

}  // namespace bmmc::cpu_detail
