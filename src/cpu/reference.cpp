#include "bmmc/cpu/reference.hpp"

#include <array>
#include <cstdint>
#include <cstring>

#include "bmmc/core/buffers.hpp"

namespace bmmc {
namespace {

template <int Bytes>
struct Elem {
  unsigned char b[Bytes];
};

// Walks x = 0, 1, 2, ... keeping y = A·x ⊕ c. Going from x to x + 1 flips the low k + 1 bits of x, where
// k = ctz(x + 1), so y changes by A·(2^(k+1) - 1) = col_0 ⊕ … ⊕ col_k: a table of n prefix sums of columns.
template <int Bytes>
void permute_typed(const Bmmc& p, const void* in_raw, void* out_raw) {
  const int n = p.n();
  std::array<BitVec, 64> flip{};
  BitVec acc = 0;
  for (int k = 0; k < n; ++k) flip[k] = acc ^= p.matrix().col(k);
  const auto* in = static_cast<const Elem<Bytes>*>(in_raw);
  auto* out = static_cast<Elem<Bytes>*>(out_raw);
  const std::uint64_t count = std::uint64_t{1} << n;
  BitVec y = p.complement();  // A·0 ⊕ c
  for (std::uint64_t x = 0;; ++x) {
    std::memcpy(&out[y], &in[x], Bytes);
    if (x + 1 == count) break;
    y ^= flip[__builtin_ctzll(x + 1)];
  }
}

}  // namespace

void permute_reference(const Bmmc& p, const void* in, void* out, int elem_bytes) {
  check_buffers(in, out, p.n(), elem_bytes);
  switch (elem_bytes) {
    case 1: return permute_typed<1>(p, in, out);
    case 2: return permute_typed<2>(p, in, out);
    case 4: return permute_typed<4>(p, in, out);
    case 8: return permute_typed<8>(p, in, out);
    case 16: return permute_typed<16>(p, in, out);
  }
}

}  // namespace bmmc
