// GPU leaf passes (see leaf_kernels.hpp).
#include "bmmc/cuda/leaf_kernels.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>

#include "bmmc/cuda/error.hpp"

namespace bmmc {

namespace {

struct PairParams {
  unsigned long long d;    // partner offset
  unsigned long long row;  // row 0 of the layout: parity(row & x) ^ low_c = logical bit 0 of x
  int pivot;
  int low_c;
  int descending;
};

template <class T, class I>
__global__ void __launch_bounds__(256) pair_leaf_kernel(T* __restrict__ data, I pairs, PairParams p) {
  const I t = static_cast<I>(blockIdx.x) * 256 + threadIdx.x;
  if (t >= pairs) return;
  const I x = (t & ((I(1) << p.pivot) - 1)) | ((t >> p.pivot) << (p.pivot + 1));
  const I y = x ^ static_cast<I>(p.d);
  const int logical = (sizeof(I) == 8 ? __popcll(static_cast<unsigned long long>(x) & p.row)
                                      : __popc(static_cast<unsigned>(x) & static_cast<unsigned>(p.row))) & 1;
  const bool low_first = (logical ^ p.low_c) == p.descending;
  const T a = data[x], b = data[y];
  const T mn = b < a ? b : a, mx = b < a ? a : b;
  data[x] = low_first ? mn : mx;
  data[y] = low_first ? mx : mn;
}

template <class T>
void launch_typed(const LeafGeometry& g, const PairParams& p, void* data, cudaStream_t stream) {
  const unsigned long long pairs = 1ull << (g.n - 1);
  const unsigned long long blocks = (pairs + 255) / 256;
  if (blocks > 0x7fffffffull) throw std::invalid_argument("leaf pass: more than 2^31-1 blocks; n is too large");
  if (g.n <= 32)
    pair_leaf_kernel<T, unsigned><<<static_cast<unsigned>(blocks), 256, 0, stream>>>(
        static_cast<T*>(data), static_cast<unsigned>(pairs), p);
  else
    pair_leaf_kernel<T, unsigned long long><<<static_cast<unsigned>(blocks), 256, 0, stream>>>(
        static_cast<T*>(data), pairs, p);
  check(cudaGetLastError(), "pair_leaf_kernel launch", "n = " + std::to_string(g.n));
}

}  // namespace

void launch_leaf_pass(const LeafGeometry& g, const Leaf& leaf, void* data, DType t, cudaStream_t stream) {
  check_leaf(leaf);
  check_dtype(t);
  if (leaf_bits(leaf) != 1 || g.bits != 1)
    throw std::invalid_argument("GPU leaf pass: only pair leaves (compare-swap) are implemented on the GPU");
  if (g.n < 1) return;
  const PairParams p{g.dirs[0], g.rows[0], g.pivots[0], static_cast<int>(g.low_c & 1),
                     leaf.kind == LeafKind::CompareSwapDesc ? 1 : 0};
  switch (t) {
    case DType::Int32: return launch_typed<std::int32_t>(g, p, data, stream);
    case DType::UInt32: return launch_typed<std::uint32_t>(g, p, data, stream);
    case DType::Float32: return launch_typed<float>(g, p, data, stream);
    case DType::Int64: return launch_typed<std::int64_t>(g, p, data, stream);
    case DType::UInt64: return launch_typed<std::uint64_t>(g, p, data, stream);
    case DType::Float64: return launch_typed<double>(g, p, data, stream);
  }
  throw std::invalid_argument("GPU leaf pass: unknown dtype");
}

}  // namespace bmmc
