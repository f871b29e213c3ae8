// libFuzzer target for the digit spec parser: bmmc::parse_digit_spec on arbitrary bytes and a small shape.
//
// Input layout: byte 0 picks the shape's rank (0..223 → rank b % 6, then one byte per extent, extent = byte % 13,
// so 0 — an invalid shape — is tried too; 224..255 → no shape: the spec must define it), the rest is the spec
// text (any bytes, NULs included). The contract checked:
//  - parse_digit_spec either returns or throws SpecError; any other exception or a crash is a bug;
//  - a SpecError's column lies in 0..size+1;
//  - a returned map has the given shape (when one was given), its inverse undoes it and its canonical form
//    agrees with it on a few indices, and its spec text reads back to the same map.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string_view>
#include <vector>

#include "bmmc/core/digit_map.hpp"
#include "bmmc/core/digit_spec.hpp"

namespace {
[[noreturn]] void bug(const char* what, std::string_view spec) {
  std::fprintf(stderr, "digit_spec_fuzz: %s (spec of %zu bytes: '%.*s')\n", what, spec.size(),
               static_cast<int>(spec.size()), spec.data());
  std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::size_t used = 1;
  std::optional<std::vector<bmmc::Extent>> shape;
  if (data[0] < 224) {
    shape.emplace();
    for (int a = 0; a < data[0] % 6 && used < size; ++a) shape->push_back(data[used++] % 13);
  }
  const std::string_view spec(reinterpret_cast<const char*>(data + used), size - used);
  try {
    const bmmc::DigitMap m = bmmc::parse_digit_spec(spec, shape);
    if (shape && m.shape() != *shape) bug("result disagrees with the given shape", spec);
    const bmmc::DigitMap inv = m.inverse();
    const bmmc::DigitMap c = m.canonical();
    const bmmc::Extent n = m.size();
    for (bmmc::Extent x : {bmmc::Extent{0}, n - 1, n / 2, n / 3}) {
      const bmmc::Extent y = m.apply_linear(x);
      if (y < 0 || y >= n) bug("apply_linear out of range", spec);
      if (inv.apply_linear(y) != x) bug("inverse(m)(m(x)) != x", spec);
      if (c.apply_linear(x) != y) bug("canonical form disagrees", spec);
    }
    if (bmmc::parse_digit_spec(m.to_string(), m.shape()) != m) bug("to_string does not read back", spec);
  } catch (const bmmc::SpecError& e) {
    if (e.column() < 0 || static_cast<std::size_t>(e.column()) > spec.size() + 1)
      bug("SpecError column out of range", spec);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "digit_spec_fuzz: unexpected exception: %s\n", e.what());
    bug("parse_digit_spec threw something other than SpecError", spec);
  }
  return 0;
}
