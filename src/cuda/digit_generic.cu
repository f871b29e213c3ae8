// The precompiled any-shape kernels (bmmc/cuda/digit_permute.hpp): the digit plan's tile pass read from a
// parameter block instead of baked-in constants (for JIT off), and the in-place swap of an involution.
#include <algorithm>
#include <climits>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "../codegen/digit_tile.cuh"
#include "bmmc/cuda/digit_permute.hpp"
#include "bmmc/cuda/error.hpp"
#include "bmmc/plan/digit_tile_view.hpp"

namespace bmmc {

namespace {

constexpr int kMax = kDigitGenericMaxAxes;

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

struct Params {  // the in-place swap's
  Axis axes[kMax];
  int k = 0;
  long long elements = 0;
};

__device__ __forceinline__ long long out_coord(const Axis& a, long long i) {
  long long g = a.flip ? a.extent - 1 - i : i;
  g += a.roll;
  return g >= a.extent ? g - a.extent : g;
}

// The tile pass's geometry read from the parameter block: the same names as the JIT kernel's constants.
struct Geometry {
  DigitTileAxis axes[kMax];
  int run_r_[kMax], row_r_[kMax], run_w_[kMax], row_w_[kMax];
  int k, threads, elem_bytes, nrun_r, nrows_r, nrun_w, nrows_w, cols_r, row_count_r, cols_w, row_count_w, cu_r, cu_w;
  long long tiles, smem_slots, elements;
  bool col_table_r, rows_fixed, roll_run_w, small_tiles, vector_slots_w, read_cover, write_cover;
  int col_pad_period, pad, vector_slots_r, skew_shift, skew_step;
  FastDiv units_r, units_w;
  FastDiv suffix[kMax], count[kMax];  // the tile index's radices (small_tiles: below 2^31)
  long long suffix_ll[kMax], count_ll[kMax];

  __device__ __forceinline__ DigitTileAxis axis(int a) const { return axes[a]; }
  __device__ __forceinline__ int run_r(int j) const { return run_r_[j]; }
  __device__ __forceinline__ int row_r(int j) const { return row_r_[j]; }
  __device__ __forceinline__ int run_w(int j) const { return run_w_[j]; }
  __device__ __forceinline__ int row_w(int j) const { return row_w_[j]; }
  __device__ __forceinline__ int div_units_r(int u) const { return static_cast<int>(units_r.div(static_cast<unsigned>(u))); }
  __device__ __forceinline__ int div_units_w(int u) const { return static_cast<int>(units_w.div(static_cast<unsigned>(u))); }
  __device__ __forceinline__ long long tile_coord(long long t, int a) const {
    if (small_tiles) {
      const unsigned q = suffix[a].div(static_cast<unsigned>(t));
      return static_cast<long long>(q - count[a].div(q) * count[a].d);
    }
    return (t / suffix_ll[a]) % count_ll[a];
  }
};

template <int E, int VR, int VW>
__global__ void digit_tile(const __grid_constant__ Geometry g, const unsigned char* __restrict__ in,
                           unsigned char* __restrict__ out) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  digit_tile_pass<Geometry, E, VR, VW, long long>(g, in, out, smem_raw);
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

void check_axes(const DigitPlan& plan) {
  if (plan.axes.size() > static_cast<std::size_t>(kMax))
    throw std::invalid_argument("the precompiled any-shape kernels take at most " + std::to_string(kMax) +
                                " canonical axes; got " + std::to_string(plan.axes.size()));
}

Params params_of(const DigitPlan& plan) {
  check_axes(plan);
  Params p;
  p.k = static_cast<int>(plan.axes.size());
  for (int a = 0; a < p.k; ++a) {
    const DigitAxis& x = plan.axes[a];
    p.axes[a] = Axis{x.extent, x.in_stride, x.out_stride, x.roll, x.chunk, x.tile_count(), x.flip ? 1 : 0};
  }
  p.elements = plan.elements();
  return p;
}

Geometry geometry_of(const DigitPlan& plan, const DigitTileView& v) {
  check_axes(plan);
  Geometry g{};
  g.k = static_cast<int>(plan.axes.size());
  g.threads = plan.threads_per_block;
  g.elem_bytes = plan.elem_bytes;
  long long suffix = 1;
  for (int a = g.k - 1; a >= 0; --a) {
    const DigitAxis& x = plan.axes[a];
    g.axes[a] = DigitTileAxis{x.extent, x.in_stride, x.out_stride, x.roll, x.chunk, x.tile_count(),
                              v.slot_stride[a], x.flip ? 1 : 0};
    g.suffix_ll[a] = suffix;
    g.count_ll[a] = x.tile_count();
    suffix *= x.tile_count();
  }
  g.tiles = plan.tiles();
  g.small_tiles = g.tiles < (1LL << 31);
  if (g.small_tiles)
    for (int a = 0; a < g.k; ++a) {
      g.suffix[a] = FastDiv(static_cast<unsigned>(g.suffix_ll[a]));
      g.count[a] = FastDiv(static_cast<unsigned>(g.count_ll[a]));
    }
  g.smem_slots = plan.smem_elements();
  const auto copy = [](const std::vector<int>& from, int* to) { std::copy(from.begin(), from.end(), to); };
  copy(v.run_r, g.run_r_);
  copy(v.rows_r, g.row_r_);
  copy(v.run_w, g.run_w_);
  copy(v.rows_w, g.row_w_);
  g.nrun_r = static_cast<int>(v.run_r.size());
  g.nrows_r = static_cast<int>(v.rows_r.size());
  g.nrun_w = static_cast<int>(v.run_w.size());
  g.nrows_w = static_cast<int>(v.rows_w.size());
  g.cols_r = static_cast<int>(v.cols_r);
  g.row_count_r = static_cast<int>(v.row_count_r);
  g.cols_w = static_cast<int>(v.cols_w);
  g.row_count_w = static_cast<int>(v.row_count_w);
  g.col_table_r = v.run_r.size() >= 2 && v.cols_r <= 4096;
  g.rows_fixed = v.rows_fixed;
  g.roll_run_w = v.roll_run_w;
  g.col_pad_period = static_cast<int>(v.col_pad_period);
  g.pad = v.pad;
  g.vector_slots_r = v.vector_slots_r;
  g.vector_slots_w = v.vector_slots_w;
  g.skew_shift = plan.read_skew_shift;
  g.skew_step = plan.read_skew_step;
  g.cu_r = static_cast<int>(v.units_r);
  g.cu_w = static_cast<int>(v.units_w);
  g.read_cover = plan.read_cover;
  g.write_cover = plan.write_cover;
  g.elements = plan.elements();
  g.units_r = FastDiv(static_cast<unsigned>(v.units_r));
  g.units_w = FastDiv(static_cast<unsigned>(v.units_w));
  return g;
}

// Raises a kernel's dynamic shared memory limit on a device to at least `bytes`, never lowering it: one kernel
// serves every plan, so a host thread that set a smaller limit between another thread's setting and its launch
// would fail that launch.
void allow_dynamic_shared(const void* kernel, int device, std::size_t bytes) {
  static std::mutex mutex;
  static std::map<std::pair<const void*, int>, std::size_t> granted;
  std::lock_guard<std::mutex> lock(mutex);
  std::size_t& have = granted[{kernel, device}];
  if (have >= bytes) return;
  check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)),
        "cudaFuncSetAttribute(digit_tile)");
  have = bytes;
}

// Calls f.template operator()<V>() for V = v (a power of two, 1 to 16 / e).
template <int E, class F>
void with_vector(int v, F&& f) {
  switch (v) {
    case 1: return f.template operator()<1>();
    case 2: if constexpr (E * 2 <= 16) return f.template operator()<2>(); break;
    case 4: if constexpr (E * 4 <= 16) return f.template operator()<4>(); break;
    case 8: if constexpr (E * 8 <= 16) return f.template operator()<8>(); break;
    case 16: if constexpr (E * 16 <= 16) return f.template operator()<16>(); break;
  }
  throw std::logic_error("digit plan with a vector of " + std::to_string(v) + " elements of " + std::to_string(E) +
                         " bytes");
}

template <int E>
void launch_tile(const DigitPlan& plan, const void* in, void* out, cudaStream_t stream) {
  const DigitTileView v = tile_view(plan);
  const Geometry g = geometry_of(plan, v);
  const std::size_t smem = digit_kernel_smem_bytes(plan, v, 8, g.col_table_r);
  with_vector<E>(plan.read_vector, [&]<int VR>() {
    with_vector<E>(plan.write_vector, [&]<int VW>() {
      auto* kernel = &digit_tile<E, VR, VW>;
      // Four resident grids' worth of blocks: each block builds its row tables once for a few tiles, and blocks
      // that finish early take more (a resident grid of long-lived blocks measured slower).
      int device = 0, sms = 1, per_sm = 1;
      check(cudaGetDevice(&device), "cudaGetDevice");
      if (smem > 48 * 1024) allow_dynamic_shared(reinterpret_cast<const void*>(kernel), device, smem);
      check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
      check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, plan.threads_per_block, smem),
            "cudaOccupancyMaxActiveBlocksPerMultiprocessor(digit_tile)");
      const long long resident = static_cast<long long>(sms) * std::max(1, per_sm) * 4;
      const auto grid = static_cast<unsigned>(std::min<long long>({g.tiles, resident, INT_MAX}));
      kernel<<<grid, plan.threads_per_block, smem, stream>>>(g, static_cast<const unsigned char*>(in),
                                                             static_cast<unsigned char*>(out));
      check(cudaGetLastError(), "launching digit_tile");
    });
  });
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
  switch (plan.elem_bytes) {
    case 1: return launch_tile<1>(plan, in, out, stream);
    case 2: return launch_tile<2>(plan, in, out, stream);
    case 4: return launch_tile<4>(plan, in, out, stream);
    case 8: return launch_tile<8>(plan, in, out, stream);
    case 16: return launch_tile<16>(plan, in, out, stream);
  }
  throw std::logic_error("digit plan with a " + std::to_string(plan.elem_bytes) + "-byte element");
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
