// An example of docs/GUIDE.md: the front door for programs. The paper's sorting network on 2^20 float keys, on
// whatever this machine has (Backend::Auto: a GPU when one is usable, through device buffers; else the CPU), checked
// against std::sort.
#include <bmmc/combinators/sorting_network.hpp>
#include <bmmc/program_runner.hpp>

#include <algorithm>
#include <cstdio>
#include <random>
#include <vector>

int main() {
  const int n = 20;
  std::vector<float> keys(1 << n), sorted(1 << n);
  std::mt19937 rng(1);
  for (float& k : keys) k = std::uniform_real_distribution<float>(-1e3f, 1e3f)(rng);
  // Prepared once (lowered, scheduled, compiled on a GPU), then run as often as needed.
  const bmmc::ProgramRunner sort(bmmc::sort_network(n), bmmc::DType::Float32);
  const bmmc::Backend ran = sort.run_host(keys.data(), sorted.data(), sort.bytes());
  std::sort(keys.begin(), keys.end());
  if (sorted != keys) return 1;
  std::printf("sorting network on 2^20 float32 keys (%s backend, %zu passes over memory): ok\n", bmmc::to_string(ran),
              sort.passes());
  return 0;
}
