// Uses the installed bmmc headers and library: bit_reverse(4) maps 7 to 14 (docs/DESIGN.md §1), and the
// distributed front door runs it on two simulated ranks (bmmc/distributed.hpp).
#include <bmmc/core/named.hpp>
#include <bmmc/distributed.hpp>

#include <cstdio>
#include <vector>

int main() {
  const bmmc::Bmmc p = bmmc::bit_reverse(4);
  const auto y = p.apply(7);
  if (y != 14) {
    std::fprintf(stderr, "bit_reverse(4).apply(7) = %llu, expected 14\n", static_cast<unsigned long long>(y));
    return 1;
  }
  std::vector<unsigned char> in(16), out(16);
  for (int i = 0; i < 16; ++i) in[i] = static_cast<unsigned char>(i);
  const bmmc::DistributedPermuter d(p, 1, bmmc::SimulatedRanks{2});
  d({in.data(), in.data() + 8}, {out.data(), out.data() + 8});
  if (out[14] != 7) {
    std::fprintf(stderr, "the distributed bit-reverse put %d at 14, expected 7\n", out[14]);
    return 1;
  }
  std::printf("bmmc consumer: bit_reverse(4).apply(7) = 14, on two simulated ranks too\n");
  return 0;
}
