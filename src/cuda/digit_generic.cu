// The precompiled any-shape kernels (bmmc/cuda/digit_permute.hpp): the digit plan's tile pass read from a
// parameter block instead of baked-in constants (for JIT off), and the in-place swap of an involution.
#include <algorithm>
#include <climits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "bmmc/cuda/digit_permute.hpp"
#include "bmmc/cuda/error.hpp"

namespace bmmc {

namespace {

constexpr int kMax = kDigitGenericMaxAxes;
constexpr int kBatch = 4;  // loads a thread issues before their shared stores

// n / d and n % d for 0 <= n < 2^31 by a multiply-high and a shift (d fixed per launch): the division the JIT
// kernel gets from the compiler for its constants.
struct FastDiv {
  unsigned long long mul = 0;  // ceil(2^(32+s) / d), s = ceil(log2 d): up to 2^32, so 64 bits
  unsigned d = 1, shr = 32;
  FastDiv() = default;
  explicit FastDiv(unsigned divisor) : d(divisor) {
    unsigned s = 0;
    while ((1ull << s) < d) ++s;
    shr = 32 + s;
    mul = ((1ull << shr) + d - 1) / d;
  }
  __device__ __forceinline__ unsigned div(unsigned n) const {
    return d == 1 ? n : static_cast<unsigned>((n * mul) >> shr);
  }
};

struct Axis {
  long long extent, in_stride, out_stride, roll, chunk, tile_count;
  int flip;
};

struct Params {
  Axis axes[kMax];
  int k = 0, nread = 0, nwrite = 0;
  int read_order[kMax], write_order[kMax];
  FastDiv read_div[kMax], write_div[kMax];  // the chunks of read_order / write_order
  int read_slot_stride[kMax];               // the slot stride of read_order[j]'s axis
  int smem_stride[kMax];
  long long tiles = 0, elements = 0;
  int vol = 0;
  FastDiv pad_div;
  int pad = 0;
};

__device__ __forceinline__ long long out_coord(const Axis& a, long long i) {
  long long g = a.flip ? a.extent - 1 - i : i;
  g += a.roll;
  return g >= a.extent ? g - a.extent : g;
}

template <class T>
__global__ void digit_tile(const __grid_constant__ Params p, const T* __restrict__ in,
                                                  T* __restrict__ out) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* smem = reinterpret_cast<T*>(smem_raw);
  __shared__ long long origin[kMax];
  __shared__ int ce[kMax];
  __shared__ long long bases[2];
  for (long long t = blockIdx.x; t < p.tiles; t += gridDim.x) {
    if (threadIdx.x == 0) {
      long long rest = t, in_base = 0, out_base = 0;
      for (int a = p.k - 1; a >= 0; --a) {
        const Axis& ax = p.axes[a];
        origin[a] = (rest % ax.tile_count) * ax.chunk;
        rest /= ax.tile_count;
        ce[a] = static_cast<int>(min(ax.chunk, ax.extent - origin[a]));
        in_base += origin[a] * ax.in_stride;
        if (ax.chunk == 1) out_base += out_coord(ax, origin[a]) * ax.out_stride;
      }
      bases[0] = in_base;
      bases[1] = out_base;
    }
    __syncthreads();
    const long long in_base = bases[0], out_base = bases[1];
    for (int e0 = threadIdx.x; e0 < p.vol; e0 += kBatch * blockDim.x) {
      T v[kBatch];
      int slot[kBatch];
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const int e = e0 + b * blockDim.x;
        slot[b] = -1;
        if (e >= p.vol) continue;
        unsigned r = static_cast<unsigned>(e);
        long long off = 0;
        int w = 0;
        bool ok = true;
        for (int j = p.nread - 1; j >= 0; --j) {
          const int a = p.read_order[j];
          const unsigned q = p.read_div[j].div(r);
          const int l = static_cast<int>(r - q * p.read_div[j].d);
          r = q;
          ok = ok && l < ce[a];
          off += l * p.axes[a].in_stride;
          w += (p.axes[a].flip ? ce[a] - 1 - l : l) * p.read_slot_stride[j];
        }
        if (!ok) continue;
        slot[b] = p.pad ? w + static_cast<int>(p.pad_div.div(static_cast<unsigned>(w))) * p.pad : w;
        v[b] = in[in_base + off];
      }
#pragma unroll
      for (int b = 0; b < kBatch; ++b)
        if (slot[b] >= 0) smem[slot[b]] = v[b];
    }
    __syncthreads();
    for (int e = threadIdx.x; e < p.vol; e += blockDim.x) {
      unsigned r = static_cast<unsigned>(e);
      long long off = 0;
      bool ok = true;
      for (int j = p.nwrite - 1; j >= 0; --j) {
        const int a = p.write_order[j];
        const Axis& ax = p.axes[a];
        const unsigned q = p.write_div[j].div(r);
        const int w = static_cast<int>(r - q * p.write_div[j].d);
        r = q;
        ok = ok && w < ce[a];
        const long long l = ax.flip ? ce[a] - 1 - w : w;
        off += out_coord(ax, origin[a] + l) * ax.out_stride;
      }
      if (!ok) continue;
      const int s = p.pad ? e + static_cast<int>(p.pad_div.div(static_cast<unsigned>(e))) * p.pad : e;
      out[out_base + off] = smem[s];
    }
    __syncthreads();
  }
}

// One thread per element x: swaps x with its image y when y > x (the map is an involution).
template <class T>
__global__ void digit_inplace(const __grid_constant__ Params p, T* data) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long x = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; x < p.elements; x += stride) {
    long long rest = x, y = 0;
    for (int a = p.k - 1; a >= 0; --a) {
      const Axis& ax = p.axes[a];
      y += out_coord(ax, rest % ax.extent) * ax.out_stride;
      rest /= ax.extent;
    }
    if (y > x) {
      const T v = data[x];
      data[x] = data[y];
      data[y] = v;
    }
  }
}

Params params_of(const DigitPlan& plan) {
  if (plan.axes.size() > static_cast<std::size_t>(kMax))
    throw std::invalid_argument("the precompiled any-shape kernels take at most " + std::to_string(kMax) +
                                " canonical axes; got " + std::to_string(plan.axes.size()));
  Params p;
  p.k = static_cast<int>(plan.axes.size());
  for (int a = 0; a < p.k; ++a) {
    const DigitAxis& x = plan.axes[a];
    p.axes[a] = Axis{x.extent, x.in_stride, x.out_stride, x.roll, x.chunk, x.tile_count(), x.flip ? 1 : 0};
  }
  p.nread = static_cast<int>(plan.read_order.size());
  p.nwrite = static_cast<int>(plan.write_order.size());
  for (int j = 0; j < p.nwrite; ++j) {
    p.write_order[j] = plan.write_order[j];
    p.write_div[j] = FastDiv(static_cast<unsigned>(plan.axes[plan.write_order[j]].chunk));
    p.smem_stride[j] = static_cast<int>(plan.smem_stride[j]);
  }
  for (int j = 0; j < p.nread; ++j) {
    const int a = plan.read_order[j];
    p.read_order[j] = a;
    p.read_div[j] = FastDiv(static_cast<unsigned>(plan.axes[a].chunk));
    const auto pos = std::find(plan.write_order.begin(), plan.write_order.end(), a) - plan.write_order.begin();
    p.read_slot_stride[j] = static_cast<int>(plan.smem_stride[static_cast<std::size_t>(pos)]);
  }
  p.tiles = plan.tiles();
  p.vol = static_cast<int>(plan.tile_elements());
  p.elements = plan.elements();
  if (plan.pad_period > 0) {
    p.pad_div = FastDiv(static_cast<unsigned>(plan.pad_period));
    p.pad = plan.pad;
  }
  return p;
}

template <class F>
void with_type(int eb, F&& f) {
  switch (eb) {
    case 1: return f(static_cast<unsigned char*>(nullptr));
    case 2: return f(static_cast<unsigned short*>(nullptr));
    case 4: return f(static_cast<unsigned int*>(nullptr));
    case 8: return f(static_cast<uint2*>(nullptr));
    case 16: return f(static_cast<uint4*>(nullptr));
    default: throw std::logic_error("digit plan with a " + std::to_string(eb) + "-byte element");
  }
}

}  // namespace

void launch_digit_generic(const DigitPlan& plan, const void* in, void* out, cudaStream_t stream) {
  const Params p = params_of(plan);
  with_type(plan.elem_bytes, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const std::size_t smem = plan.smem_bytes();
    auto* kernel = &digit_tile<T>;
    if (smem > 48 * 1024)
      check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)),
            "cudaFuncSetAttribute(digit_tile)");
    const auto grid = static_cast<unsigned>(std::min<long long>(p.tiles, INT_MAX));
    kernel<<<grid, plan.threads_per_block, smem, stream>>>(p, static_cast<const T*>(in), static_cast<T*>(out));
    check(cudaGetLastError(), "launching digit_tile");
  });
}

void launch_digit_inplace(const DigitPlan& plan, void* data, cudaStream_t stream) {
  const Params p = params_of(plan);
  with_type(plan.elem_bytes, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const auto grid = static_cast<unsigned>(std::clamp<long long>((p.elements + 255) / 256, 1, INT_MAX));
    digit_inplace<T><<<grid, 256, 0, stream>>>(p, static_cast<T*>(data));
    check(cudaGetLastError(), "launching digit_inplace");
  });
}

}  // namespace bmmc
