// Element types the combinator programs run on (the sorting network sorts int32 and float32 keys).
//
// Programs are untyped (a permutation moves bytes; only leaves compare values), so the type is chosen when a
// program runs: on the CPU the executors are templates instantiated for every DType, on the GPU the leaf
// kernels are. visit_dtype turns the run-time tag into a compile-time type in one place.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace bmmc {

enum class DType { Int32, UInt32, Float32, Int64, UInt64, Float64 };

/// "int32", "uint32", "float32", "int64", "uint64", "float64".
const char* to_string(DType t) noexcept;
/// Parses the names above (also "float" and "double"); throws std::invalid_argument listing them.
DType parse_dtype(std::string_view name);
/// Size of one element in bytes (4 or 8).
int dtype_bytes(DType t) noexcept;
/// Throws std::invalid_argument unless t is one of the DTypes (a value cast from an integer may not be). Every
/// executor checks its type with this before it moves anything.
void check_dtype(DType t);

/// Calls f(T{}) with the C++ type of `t`.
template <class F>
decltype(auto) visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::Int32: return f(std::int32_t{});
    case DType::UInt32: return f(std::uint32_t{});
    case DType::Float32: return f(float{});
    case DType::Int64: return f(std::int64_t{});
    case DType::UInt64: return f(std::uint64_t{});
    case DType::Float64: return f(double{});
  }
  check_dtype(t);  // throws: t names no DType
  throw std::logic_error("unreachable");
}

}  // namespace bmmc
