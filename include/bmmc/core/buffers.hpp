// Argument checks shared by every permute entry point (CPU reference, fast CPU executor, CUDA runtime).
//
// A permutation of 2^n elements reads one buffer and writes another of the same size; the checks here catch
// the mistakes that would otherwise corrupt memory silently: unsupported element sizes, null or misaligned
// pointers, aliasing or overlapping buffers, and sizes that do not fit in size_t. They only compare pointer
// values and never dereference them, so they are valid for host and device pointers alike. Every failure is
// a std::invalid_argument saying what was wrong and what was expected.
#pragma once

#include <cstddef>

namespace bmmc {

/// The largest n the permute entry points accept (2^62 elements; a larger n cannot be addressed anyway).
inline constexpr int kMaxPermuteBits = 62;

/// Is elem_bytes one of the supported element sizes 1, 2, 4, 8, 16?
constexpr bool supported_elem_bytes(int elem_bytes) noexcept {
  return elem_bytes == 1 || elem_bytes == 2 || elem_bytes == 4 || elem_bytes == 8 || elem_bytes == 16;
}

/// Throws unless elem_bytes is 1, 2, 4, 8 or 16.
void check_elem_bytes(int elem_bytes);

/// Size in bytes of an array of 2^n elements of elem_bytes each. Throws when elem_bytes is unsupported,
/// n is outside 0..kMaxPermuteBits, or the size does not fit in size_t.
std::size_t array_bytes(int n, int elem_bytes);

/// Checks a permute call's buffers: elem_bytes and n as array_bytes() does, both pointers non-null and
/// aligned to elem_bytes, in != out, and the two ranges of array_bytes(n, elem_bytes) bytes disjoint.
void check_buffers(const void* in, const void* out, int n, int elem_bytes);

/// Checks an in-place call's buffer: elem_bytes and n as array_bytes() does, non-null, aligned to elem_bytes.
void check_inplace_buffer(const void* data, int n, int elem_bytes);

/// Checks an any-shape call's buffers of `bytes` bytes each: both non-null and aligned to `alignment`, and either
/// the same buffer (only when `same_allowed`: in place) or disjoint.
void check_byte_buffers(const void* in, const void* out, std::size_t bytes, std::size_t alignment, bool same_allowed);

}  // namespace bmmc
