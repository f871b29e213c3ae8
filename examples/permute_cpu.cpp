// An example of docs/GUIDE.md: the front door on host arrays (the CPU backend: multi-threaded, same plans as the GPU).
#include <bmmc/core/spec.hpp>
#include <bmmc/permute.hpp>

#include <cstdio>
#include <vector>

int main() {
  const int n = 20;
  std::vector<int> in(1 << n), out(1 << n);
  for (int i = 0; i < (1 << n); ++i) in[i] = i * 7 + 1;
  const bmmc::Bmmc p = bmmc::parse_spec("inv(gray)*bit-reverse", n);
  // Host pointers: Backend::Auto runs this on the CPU. Repeated calls find the prepared plan in a cache.
  bmmc::permute(p, in.data(), out.data(), sizeof(int));  // out[A·x ^ c] = in[x]
  for (std::uint64_t x = 0; x < in.size(); ++x)
    if (out[p.apply(x)] != in[x]) return 1;
  std::puts("inv(gray)*bit-reverse of 2^20 int32 on the CPU: ok");
  return 0;
}
