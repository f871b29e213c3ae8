// libFuzzer target for the spec parser: bmmc::parse_spec on arbitrary bytes and an arbitrary --n.
//
// Input layout: byte 0 picks n (0..209 → n = b % 70 - 3, i.e. -3..66, so out-of-range values are tried too;
// 210..255 → no --n), the rest is the spec text (any bytes, NULs included). The contract checked:
//  - parse_spec either returns or throws SpecError; any other exception or a crash is a bug;
//  - a SpecError's column lies in 0..size+1 (the CLI prints a caret there, so a wild column is a bug);
//  - a returned Bmmc has 0 <= n <= 64, agrees with --n, an invertible matrix, a complement inside n bits,
//    and inverse(p) ∘ p is the identity on a few indices (the algebra did not return garbage).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string_view>

#include "bmmc/core/bmmc.hpp"
#include "bmmc/core/spec.hpp"

namespace {
[[noreturn]] void bug(const char* what, std::string_view spec) {
  std::fprintf(stderr, "spec_fuzz: %s (spec of %zu bytes: '%.*s')\n", what, spec.size(), static_cast<int>(spec.size()),
               spec.data());
  std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::optional<int> n;
  if (data[0] < 210) n = data[0] % 70 - 3;
  const std::string_view spec(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    const bmmc::Bmmc p = bmmc::parse_spec(spec, n);
    if (p.n() < 0 || p.n() > 64) bug("n out of 0..64", spec);
    if (n && p.n() != *n) bug("result disagrees with --n", spec);
    if (!p.matrix().invertible()) bug("singular matrix accepted", spec);
    if (p.complement() & ~bmmc::low_mask(p.n())) bug("complement wider than n", spec);
    const bmmc::Bmmc q = p.inverse();
    for (bmmc::BitVec x : {bmmc::BitVec{0}, bmmc::BitVec{1}, ~bmmc::BitVec{0}, bmmc::BitVec{0x5a5a5a5a5a5a5a5aULL}}) {
      x &= bmmc::low_mask(p.n());
      if (q.apply(p.apply(x)) != x) bug("inverse(p)(p(x)) != x", spec);
    }
  } catch (const bmmc::SpecError& e) {
    if (e.column() < 0 || static_cast<std::size_t>(e.column()) > spec.size() + 1) bug("SpecError column out of range", spec);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spec_fuzz: unexpected exception: %s\n", e.what());
    bug("parse_spec threw something other than SpecError", spec);
  }
  return 0;
}
