// The definitional interpreter (see interpret.hpp).
#include "bmmc/combinators/interpret.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "index_bits.hpp"

namespace bmmc {

namespace {

template <class T>
void run(const Program& p, std::span<T> data) {
  const std::size_t size = data.size();
  for (const Step& s : p.steps()) {
    if (const auto* b = std::get_if<BmmcStep>(&s)) {
      std::vector<T> out(size);
      for (std::size_t x = 0; x < size; ++x) out[b->bmmc.apply(x)] = data[x];
      std::copy(out.begin(), out.end(), data.begin());
    } else if (const auto* l = std::get_if<LeafStep>(&s)) {
      const std::size_t chunk = std::size_t{1} << leaf_bits(l->leaf);
      for (std::size_t h = 0; h < size; h += chunk) apply_leaf(l->leaf, data.data() + h);
    } else {
      const auto& pm = std::get<ParmStep>(s);
      const int lsb = __builtin_ctzll(pm.mask);
      std::vector<T> sub[2] = {std::vector<T>(size / 2), std::vector<T>(size / 2)};
      for (std::size_t i = 0; i < size; ++i) sub[parity(i & pm.mask)][remove_bit(i, lsb)] = data[i];
      run(*pm.body, std::span<T>(sub[0]));
      run(*pm.body, std::span<T>(sub[1]));
      for (std::size_t i = 0; i < size; ++i) data[i] = sub[parity(i & pm.mask)][remove_bit(i, lsb)];
    }
  }
}

}  // namespace

template <class T>
void interpret(const Program& p, std::span<T> data) {
  if (data.size() != (std::size_t{1} << p.n()))
    throw std::invalid_argument(
        fmt::format("interpret: the program is on n = {} bits but the array has {} elements", p.n(), data.size()));
  run(p, data);
}

void interpret(const Program& p, void* data, DType t) {
  if (!data) throw std::invalid_argument("interpret: data is null");
  visit_dtype(t, [&](auto v) {
    using T = decltype(v);
    interpret(p, std::span<T>(static_cast<T*>(data), std::size_t{1} << p.n()));
  });
}

template void interpret(const Program&, std::span<std::int32_t>);
template void interpret(const Program&, std::span<std::uint32_t>);
template void interpret(const Program&, std::span<float>);
template void interpret(const Program&, std::span<std::int64_t>);
template void interpret(const Program&, std::span<std::uint64_t>);
template void interpret(const Program&, std::span<double>);

}  // namespace bmmc
