// Table-driven kernels (see generic_kernel.hpp). The formulas are those of plan.hpp; loops run over
// tile rows in Gray-code order so each step updates the row offsets with a single XOR.
#include "bmmc/cuda/generic_kernel.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>

#include "bmmc/cuda/error.hpp"

namespace bmmc {

namespace {

using u64 = unsigned long long;

struct TileTables {
  u64 read_rows[kGenericMaxRows];
  u64 write_rows[kGenericMaxRows];
  unsigned store_rows[kGenericMaxRows];
  unsigned load_rows[kGenericMaxRows];
  unsigned load_lanes[kLaneBits];
  std::uint64_t block_images[64];  // std::uint64_t (not u64): block_origin (plan.hpp) reads these
  int block_positions[64];
  int block_bits;
  u64 complement;
  int row_bits, warp_bits;
  unsigned plane_words;
};

struct NaiveTables {
  u64 cols[64];
  u64 complement;
  int n;
};

template <class T>
__device__ __forceinline__ void store_tile(unsigned* tile, unsigned plane_words, unsigned a, const T& v) {
  if constexpr (sizeof(T) <= 4) {
    tile[a] = static_cast<unsigned>(v);
  } else if constexpr (sizeof(T) == 8) {
    tile[a] = v.x;
    tile[plane_words + a] = v.y;
  } else {
    tile[a] = v.x;
    tile[plane_words + a] = v.y;
    tile[2 * plane_words + a] = v.z;
    tile[3 * plane_words + a] = v.w;
  }
}

template <class T>
__device__ __forceinline__ T load_tile(const unsigned* tile, unsigned plane_words, unsigned a) {
  if constexpr (sizeof(T) <= 4) {
    return static_cast<T>(tile[a]);
  } else if constexpr (sizeof(T) == 8) {
    return make_uint2(tile[a], tile[plane_words + a]);
  } else {
    return make_uint4(tile[a], tile[plane_words + a], tile[2 * plane_words + a], tile[3 * plane_words + a]);
  }
}

// Each warp visits rows warp + 2^warp_bits·g over g in Gray-code order; `step` is the row bit that flips.
template <class T, int kBatch>
__global__ void __launch_bounds__(1024) generic_tile(const T* __restrict__ in, T* __restrict__ out,
                                                     const TileTables t) {
  extern __shared__ unsigned tile[];
  const unsigned lane = threadIdx.x & ((1u << kLaneBits) - 1), warp = threadIdx.x >> kLaneBits;
  const BlockOrigin origin = block_origin(t.block_positions, t.block_images, t.block_bits, t.complement, blockIdx.x);
  const u64 x0 = origin.x0, z = origin.z;
  const int iters = 1 << (t.row_bits - t.warp_bits);
  u64 rx = x0;
  unsigned sx = lane;
  for (int i = 0; i < t.warp_bits; ++i)
    if ((warp >> i) & 1) {
      rx ^= t.read_rows[i];
      sx ^= t.store_rows[i];
    }
  for (int g = 0; g < iters; g += kBatch) {
    T v[kBatch];
    u64 r[kBatch];
    unsigned a[kBatch];
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const int step = g + j;
      if (step) {
        const int bit = t.warp_bits + __ffs(step) - 1;
        rx ^= t.read_rows[bit];
        sx ^= t.store_rows[bit];
      }
      r[j] = rx;
      a[j] = sx;
    }
#pragma unroll
    for (int j = 0; j < kBatch; ++j) v[j] = in[r[j] | lane];
#pragma unroll
    for (int j = 0; j < kBatch; ++j) store_tile(tile, t.plane_words, a[j], v[j]);
  }
  __syncthreads();
  const u64 low = (1u << kLaneBits) - 1;  // the generic kernel has one-element lanes: s = kLaneBits
  const unsigned tau = lane ^ static_cast<unsigned>(z & low);
  u64 ry = z & ~low;
  unsigned sy = 0;
  for (int i = 0; i < kLaneBits; ++i)
    if ((tau >> i) & 1) sy ^= t.load_lanes[i];
  for (int i = 0; i < t.warp_bits; ++i)
    if ((warp >> i) & 1) {
      ry ^= t.write_rows[i];
      sy ^= t.load_rows[i];
    }
  for (int g = 0; g < iters; g += kBatch) {
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const int step = g + j;
      if (step) {
        const int bit = t.warp_bits + __ffs(step) - 1;
        ry ^= t.write_rows[bit];
        sy ^= t.load_rows[bit];
      }
      out[ry | lane] = load_tile<T>(tile, t.plane_words, sy);
    }
  }
}

template <class T>
__global__ void generic_naive(const T* __restrict__ in, T* __restrict__ out, const NaiveTables t) {
  const u64 x = static_cast<u64>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (x >> t.n) return;
  u64 y = t.complement;
  for (int i = 0; i < t.n; ++i)
    if ((x >> i) & 1) y ^= t.cols[i];
  out[y] = in[x];
}

// In place: thread x swaps x and f(x) when f(x) > x (f an involution; indices outside the mask stay).
template <class T>
__global__ void generic_naive_inplace(T* __restrict__ data, const NaiveTables t, u64 mask_bits, u64 mask_value) {
  const u64 x = static_cast<u64>(blockIdx.x) * blockDim.x + threadIdx.x;
  if ((x >> t.n) || (x & mask_bits) != mask_value) return;
  u64 y = t.complement;
  for (int i = 0; i < t.n; ++i)
    if ((x >> i) & 1) y ^= t.cols[i];
  if (y <= x) return;
  const T a = data[x], b = data[y];
  data[x] = b;
  data[y] = a;
}

template <class T>
void launch_tile(const TilePass& p, const void* in, void* out, cudaStream_t stream) {
  TileTables t{};
  for (int i = 0; i < p.row_bits; ++i) {
    t.read_rows[i] = p.read_rows[i];
    t.write_rows[i] = p.write_rows[i];
    t.store_rows[i] = p.store_row_cols[i];
    t.load_rows[i] = p.load_row_cols[i];
  }
  for (int i = 0; i < kLaneBits; ++i) t.load_lanes[i] = p.load_lane_cols[i];
  t.block_bits = static_cast<int>(p.block_positions.size());
  for (int i = 0; i < t.block_bits; ++i) {
    t.block_positions[i] = p.block_positions[i];
    t.block_images[i] = p.block_images[i];
  }
  t.complement = p.bmmc.complement();
  t.row_bits = p.row_bits;
  t.warp_bits = p.warp_bits;
  t.plane_words = p.plane_words();
  const auto* src = static_cast<const T*>(in);
  auto* dst = static_cast<T*>(out);
  const dim3 grid(static_cast<unsigned>(p.blocks())), block(p.threads_per_block());
  const auto shared = static_cast<std::size_t>(p.shared_bytes());
  if (p.iters() % 4 == 0) {
    check(cudaFuncSetAttribute(generic_tile<T, 4>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared)),
          "cudaFuncSetAttribute(generic_tile)");
    generic_tile<T, 4><<<grid, block, shared, stream>>>(src, dst, t);
  } else {
    check(cudaFuncSetAttribute(generic_tile<T, 1>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared)),
          "cudaFuncSetAttribute(generic_tile)");
    generic_tile<T, 1><<<grid, block, shared, stream>>>(src, dst, t);
  }
  // (no fmt in .cu files: nvcc's C++20 mode rejects fmt's consteval format strings)
  check(cudaGetLastError(), "generic_tile<<<...>>>",
        "grid " + std::to_string(p.blocks()) + " x " + std::to_string(p.threads_per_block()) + " threads, " +
            std::to_string(shared) + " bytes shared");
}

template <class T>
void launch_naive(const NaivePass& p, const void* in, void* out, cudaStream_t stream) {
  NaiveTables t{};
  t.n = p.n();
  for (int i = 0; i < t.n; ++i) t.cols[i] = p.bmmc.matrix().col(i);
  t.complement = p.bmmc.complement();
  generic_naive<T><<<static_cast<unsigned>(p.blocks()), p.threads_per_block, 0, stream>>>(
      static_cast<const T*>(in), static_cast<T*>(out), t);
  check(cudaGetLastError(), "generic_naive<<<...>>>");
}

template <class T>
void launch_naive_inplace(const NaiveInvolutionPass& p, void* data, cudaStream_t stream) {
  NaiveTables t{};
  t.n = p.n();
  for (int i = 0; i < t.n; ++i) t.cols[i] = p.bmmc.matrix().col(i);
  t.complement = p.bmmc.complement();
  // One element per thread, whatever the pass's vector_bits: the element-wise swap is the same permutation.
  NaiveInvolutionPass elementwise = p;
  elementwise.vector_bits = 0;
  generic_naive_inplace<T><<<static_cast<unsigned>(elementwise.blocks()), p.threads_per_block, 0, stream>>>(
      static_cast<T*>(data), t, p.mask_bits, p.mask_value);
  check(cudaGetLastError(), "generic_naive_inplace<<<...>>>");
}

template <template <class> class F, class P>
void by_size(int eb, const P& p, const void* in, void* out, cudaStream_t stream) {
  switch (eb) {
    case 1: return F<unsigned char>::run(p, in, out, stream);
    case 2: return F<unsigned short>::run(p, in, out, stream);
    case 4: return F<unsigned>::run(p, in, out, stream);
    case 8: return F<uint2>::run(p, in, out, stream);
    case 16: return F<uint4>::run(p, in, out, stream);
  }
  throw std::invalid_argument("unsupported element size " + std::to_string(eb) +
                              " bytes: supported sizes are 1, 2, 4, 8 and 16");
}

template <class T>
struct TileLauncher {
  static void run(const TilePass& p, const void* in, void* out, cudaStream_t s) { launch_tile<T>(p, in, out, s); }
};
template <class T>
struct NaiveLauncher {
  static void run(const NaivePass& p, const void* in, void* out, cudaStream_t s) { launch_naive<T>(p, in, out, s); }
};

template <class T>
struct NaiveInPlaceLauncher {
  static void run(const NaiveInvolutionPass& p, const void*, void* data, cudaStream_t s) {
    launch_naive_inplace<T>(p, data, s);
  }
};

}  // namespace

void launch_generic_inplace(const NaiveInvolutionPass& pass, void* data, cudaStream_t stream) {
  by_size<NaiveInPlaceLauncher>(pass.elem_bytes, pass, nullptr, data, stream);
}

void launch_generic(const Pass& pass, const void* in, void* out, cudaStream_t stream) {
  if (const auto* naive = std::get_if<NaivePass>(&pass)) {
    by_size<NaiveLauncher>(naive->elem_bytes, *naive, in, out, stream);
    return;
  }
  const auto& p = std::get<TilePass>(pass);
  if (p.vector_bits != 0 || p.row_bits > kGenericMaxRows || p.packed_bytes)
    throw std::invalid_argument(
        "the precompiled generic kernel needs one-element lane accesses, unpacked tiles and at most " +
        std::to_string(kGenericMaxRows) + " tile rows; this plan has vector_bits " + std::to_string(p.vector_bits) +
        " and " + std::to_string(p.row_bits) + " rows (plan with vector_bits = 0, or enable JIT)");
  by_size<TileLauncher>(p.elem_bytes, p, in, out, stream);
}

}  // namespace bmmc
