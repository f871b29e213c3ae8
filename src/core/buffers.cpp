#include "bmmc/core/buffers.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <utility>

namespace bmmc {

void check_elem_bytes(int elem_bytes) {
  if (!supported_elem_bytes(elem_bytes))
    throw std::invalid_argument(fmt::format(
        "element size {} bytes is not supported; supported element sizes are 1, 2, 4, 8 and 16 bytes",
        elem_bytes));
}

std::size_t array_bytes(int n, int elem_bytes) {
  check_elem_bytes(elem_bytes);
  if (n < 0 || n > kMaxPermuteBits)
    throw std::invalid_argument(
        fmt::format("n = {} index bits is out of range; expected 0 <= n <= {}", n, kMaxPermuteBits));
  // 2^n · elem_bytes = 2^(n + log2(elem_bytes)); it fits when that exponent is below the width of size_t.
  const int log2_elem = __builtin_ctz(static_cast<unsigned>(elem_bytes));
  if (n + log2_elem >= std::numeric_limits<std::size_t>::digits)
    throw std::invalid_argument(fmt::format(
        "an array of 2^{} elements of {} bytes needs 2^{} bytes, which does not fit in size_t ({} bits)", n,
        elem_bytes, n + log2_elem, std::numeric_limits<std::size_t>::digits));
  return std::size_t{1} << (n + log2_elem);
}

void check_buffers(const void* in, const void* out, int n, int elem_bytes) {
  const std::size_t bytes = array_bytes(n, elem_bytes);
  if (in == nullptr) throw std::invalid_argument("input pointer is null; expected a buffer of 2^n elements");
  if (out == nullptr) throw std::invalid_argument("output pointer is null; expected a buffer of 2^n elements");
  if (in == out)
    throw std::invalid_argument(fmt::format(
        "input and output are the same buffer ({}); permutation is out of place: pass two disjoint buffers", in));
  const auto a = reinterpret_cast<std::uintptr_t>(in);
  const auto b = reinterpret_cast<std::uintptr_t>(out);
  // Ranges [a, a + bytes) and [b, b + bytes) overlap iff the distance between their starts is below bytes.
  const std::uintptr_t distance = a < b ? b - a : a - b;
  if (distance < bytes)
    throw std::invalid_argument(fmt::format(
        "input ({}) and output ({}) overlap: each spans {} bytes (2^{} elements of {} bytes), but they are only "
        "{} bytes apart; pass two disjoint buffers",
        in, out, bytes, n, elem_bytes, distance));
  const auto align = static_cast<std::uintptr_t>(elem_bytes);
  if (a % align != 0)
    throw std::invalid_argument(
        fmt::format("input pointer {} is not aligned to the element size {} bytes", in, elem_bytes));
  if (b % align != 0)
    throw std::invalid_argument(
        fmt::format("output pointer {} is not aligned to the element size {} bytes", out, elem_bytes));
}

void check_inplace_buffer(const void* data, int n, int elem_bytes) {
  array_bytes(n, elem_bytes);
  if (data == nullptr) throw std::invalid_argument("data pointer is null; expected a buffer of 2^n elements to permute in place");
  if (reinterpret_cast<std::uintptr_t>(data) % static_cast<std::uintptr_t>(elem_bytes) != 0)
    throw std::invalid_argument(
        fmt::format("data pointer {} is not aligned to the element size {} bytes", data, elem_bytes));
}

void check_byte_buffers(const void* in, const void* out, std::size_t bytes, std::size_t alignment, bool same_allowed) {
  if (in == nullptr) throw std::invalid_argument(fmt::format("input pointer is null; expected a buffer of {} bytes", bytes));
  if (out == nullptr) throw std::invalid_argument(fmt::format("output pointer is null; expected a buffer of {} bytes", bytes));
  const auto a = reinterpret_cast<std::uintptr_t>(in);
  const auto b = reinterpret_cast<std::uintptr_t>(out);
  if (a == b && !same_allowed)
    throw std::invalid_argument(fmt::format(
        "input and output are the same buffer ({}); this map cannot run in place: pass two disjoint buffers", in));
  const std::uintptr_t distance = a < b ? b - a : a - b;
  if (a != b && distance < bytes)
    throw std::invalid_argument(fmt::format(
        "input ({}) and output ({}) overlap: each spans {} bytes, but they are only {} bytes apart; pass two "
        "disjoint buffers (or the same one, in place)",
        in, out, bytes, distance));
  for (auto [p, what] : {std::pair{a, "input"}, std::pair{b, "output"}})
    if (p % alignment != 0)
      throw std::invalid_argument(fmt::format("{} pointer {:#x} is not aligned to {} bytes (the element the plan moves)",
                                              what, p, alignment));
}

}  // namespace bmmc
