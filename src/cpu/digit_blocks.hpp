// Internal to the CPU backend: the 2-D sub-block transpose at the heart of the digit executor
// (digit_executor.cpp). A digit tile whose innermost input axis R and innermost output axis W differ is, for each
// coordinate of its other axes, an nw × nr block: element (w, r) is read at src[w·sstride + r] (rows contiguous
// along r) and written at dst[r·dstride + w] (rows contiguous along w); strides are in elements and may be
// negative (a flipped axis). The block is cut into B × B squares moved through registers (AVX2 for 4- and 8-byte
// elements, SSE2 for 1- and 2-byte ones, whole 16-byte moves for 16) and the edges of the block element by
// element, in the order that keeps reads or writes ascending. A flipped innermost axis that stays innermost is a
// reversed row, moved 32 bytes at a time with the elements of each vector reversed in registers.
#pragma once

#include <cstddef>

#include "bmmc/core/digit_map.hpp"

namespace bmmc::cpu_detail {

/// dst[r·dstride + w] = src[w·sstride + r] for w < nw, r < nr; elements of EB bytes (1, 2, 4, 8 or 16).
using DigitBlockFn = void (*)(const std::byte* src, std::ptrdiff_t sstride, std::byte* dst, std::ptrdiff_t dstride,
                              Extent nw, Extent nr);

/// dst[t] = src[−t] for t < count (a reversed row; src is the first element read, the highest address).
using DigitReverseFn = void (*)(const std::byte* src, std::byte* dst, Extent count);

/// The fastest reversed row this CPU runs for EB-byte elements (`portable`: the loop without intrinsics).
DigitReverseFn digit_reverse_fn(int elem_bytes, bool portable = false);

/// dst[0, bytes) = src[0, bytes) with non-temporal stores where the CPU has them (large outputs: no read for
/// ownership of the lines written); digit_stream_fence() orders them before the caller's return.
void digit_stream_copy(const std::byte* src, std::byte* dst, std::size_t bytes);
void digit_stream_fence();

/// The fastest block transpose this CPU runs for EB-byte elements; `portable` forces the loop without
/// intrinsics (tests compare the two).
DigitBlockFn digit_block_fn(int elem_bytes, bool portable = false);

}  // namespace bmmc::cpu_detail
