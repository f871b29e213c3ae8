// Uses the installed bmmc headers and library: bit_reverse(4) maps 7 to 14 (docs/DESIGN.md §1).
#include <bmmc/core/named.hpp>

#include <cstdio>

int main() {
  const bmmc::Bmmc p = bmmc::bit_reverse(4);
  const auto y = p.apply(7);
  if (y != 14) {
    std::fprintf(stderr, "bit_reverse(4).apply(7) = %llu, expected 14\n", static_cast<unsigned long long>(y));
    return 1;
  }
  std::printf("bmmc consumer: bit_reverse(4).apply(7) = 14\n");
  return 0;
}
