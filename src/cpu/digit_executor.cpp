// The CPU executor of digit plans (bmmc/cpu/digit_executor.hpp).
#include "bmmc/cpu/digit_executor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <stdexcept>

#include "bmmc/core/buffers.hpp"
#include "bmmc/cpu/thread_pool.hpp"
#include "digit_blocks.hpp"
#include "tuning.hpp"

namespace bmmc {

namespace {

template <int EB>
inline void move(const std::byte* src, std::byte* dst) {
  std::memcpy(dst, src, EB);
}

// dst[t] = src[t·stride] for t < count (elements of EB bytes; stride in elements, may be negative).
template <int EB>
inline void strided_row(const std::byte* src, std::ptrdiff_t stride, std::byte* dst, Extent count) {
  if (stride == 1) {
    std::memcpy(dst, src, static_cast<std::size_t>(count) * EB);
    return;
  }
  if (stride == -1) {  // a reversed run: whole vectors reversed in registers
    static const cpu_detail::DigitReverseFn reverse = cpu_detail::digit_reverse_fn(EB);
    reverse(src, dst, count);
    return;
  }
  for (Extent t = 0; t < count; ++t) move<EB>(src + t * stride * EB, dst + t * EB);
}

constexpr std::size_t kMaxAxes = 64;  // DigitMap ranks are bounded by NumPy's 64 dimensions and fusing

struct TileCursor {
  Extent origin[kMaxAxes];
  Extent ce[kMaxAxes];
};

// Tile t's origin and effective extents; returns whether it is full and no roll wraps inside it.
bool locate_tile(const DigitPlan& p, Extent t, TileCursor& c) {
  const std::size_t k = p.axes.size();
  bool regular = true;
  for (std::size_t a = k; a-- > 0;) {
    const DigitAxis& ax = p.axes[a];
    const Extent tc = ax.tile_count();
    const Extent ta = t % tc;
    t /= tc;
    c.origin[a] = ta * ax.chunk;
    c.ce[a] = std::min(ax.chunk, ax.extent - c.origin[a]);
    if (c.ce[a] != ax.chunk) regular = false;
    if (ax.chunk > 1) {
      // The images of origin .. origin+chunk−1 are consecutive (ascending, or descending for a flip) unless the
      // roll wraps between them.
      const Extent first = ax.image(c.origin[a]);
      if (ax.flip ? first < c.ce[a] - 1 : first + c.ce[a] > ax.extent) regular = false;
    }
  }
  return regular;
}

// The tile's rows (every write-order coordinate but the innermost, whose axis is the innermost output axis: its
// images are consecutive output elements), each one strided read and one contiguous write, split in two where a
// roll wraps. For edge tiles and tiles a roll wraps; full tiles take the same rows from precomputed tables.
template <int EB>
void run_tile_rows(const DigitPlan& p, const TileCursor& c, const std::byte* in, std::byte* out) {
  const std::size_t k = p.axes.size();
  Extent in_base = 0, out_base = 0;
  for (std::size_t a = 0; a < k; ++a)
    if (p.axes[a].chunk == 1) {
      in_base += c.origin[a] * p.axes[a].in_stride;
      out_base += p.axes[a].image(c.origin[a]) * p.axes[a].out_stride;
    }
  const auto& order = p.write_order;
  if (order.empty()) {
    move<EB>(in + in_base * EB, out + out_base * EB);
    return;
  }
  const std::size_t m = order.size() - 1;  // outer write axes
  const int inner = order.back();
  const DigitAxis& ia = p.axes[inner];
  const Extent ce_in = c.ce[inner];
  Extent w[kMaxAxes] = {};
  for (;;) {
    Extent ii = in_base, oo = out_base;
    for (std::size_t j = 0; j < m; ++j) {
      const DigitAxis& ax = p.axes[order[j]];
      const Extent ce = c.ce[order[j]];
      const Extent i = c.origin[order[j]] + (ax.flip ? ce - 1 - w[j] : w[j]);
      ii += i * ax.in_stride;
      oo += ax.image(i) * ax.out_stride;
    }
    // The inner axis: output coordinates o(i) for i = origin .. origin+ce−1, visited in ascending o.
    const Extent i_first = ia.flip ? c.origin[inner] + ce_in - 1 : c.origin[inner];
    const std::ptrdiff_t step = ia.flip ? -ia.in_stride : ia.in_stride;
    const Extent o_first = ia.image(i_first);
    const Extent before_wrap = std::min(ce_in, ia.extent - o_first);
    strided_row<EB>(in + (ii + i_first * ia.in_stride) * EB, step, out + (oo + o_first * ia.out_stride) * EB,
                    before_wrap);
    if (before_wrap < ce_in)
      strided_row<EB>(in + (ii + i_first * ia.in_stride + before_wrap * step) * EB, step, out + oo * EB,
                      ce_in - before_wrap);
    std::size_t j = m;
    for (; j-- > 0;) {
      if (++w[j] < c.ce[order[j]]) break;
      w[j] = 0;
    }
    if (j == static_cast<std::size_t>(-1)) return;
  }
}

// The innermost output axis W and innermost input axis R of a plan whose tiles are 2-D blocks (both tile axes,
// W ≠ R, R contiguous in the input, W contiguous in the output), or {-1, -1}.
std::pair<int, int> block_axes(const DigitPlan& p) {
  if (p.write_order.empty() || p.read_order.empty()) return {-1, -1};
  const int w = p.write_order.back(), r = p.read_order.back();
  if (w == r || p.axes[r].in_stride != 1 || p.axes[w].out_stride != 1) return {-1, -1};
  return {w, r};
}

// A tile of a block plan, edge tiles and tiles a roll wraps included: for each coordinate of its other tile axes
// (an odometer), the nw × nr block of W and R, cut where a roll wraps W or R into at most 2 × 2 blocks whose
// images are consecutive.
void run_tile_blocks(const DigitPlan& p, const TileCursor& c, int eb, cpu_detail::DigitBlockFn fn, int W, int R,
                     const std::byte* in, std::byte* out) {
  const std::size_t k = p.axes.size();
  Extent in_base = 0, out_base = 0;
  for (std::size_t a = 0; a < k; ++a)
    if (p.axes[a].chunk == 1) {
      in_base += c.origin[a] * p.axes[a].in_stride;
      out_base += p.axes[a].image(c.origin[a]) * p.axes[a].out_stride;
    }
  int outer[kMaxAxes];
  std::size_t m = 0;
  for (int a : p.write_order)
    if (a != W && a != R) outer[m++] = a;
  // W: output-ascending runs, as in run_tile_rows.
  const DigitAxis& wa = p.axes[W];
  const Extent wce = c.ce[W];
  const Extent wi = wa.flip ? c.origin[W] + wce - 1 : c.origin[W];
  const std::ptrdiff_t wstep = wa.flip ? -wa.in_stride : wa.in_stride;
  const Extent wo = wa.image(wi);
  const Extent wn = std::min(wce, wa.extent - wo);
  // R: input-ascending; its images descend for a flip and wrap at most once.
  const DigitAxis& ra = p.axes[R];
  const Extent rce = c.ce[R];
  const Extent ro = ra.image(c.origin[R]);
  const Extent rn = ra.flip ? std::min(rce, ro + 1) : std::min(rce, ra.extent - ro);
  const Extent ro2 = ra.flip ? ra.extent - 1 : 0;
  const std::ptrdiff_t rstep = ra.flip ? -ra.out_stride : ra.out_stride;
  Extent w[kMaxAxes] = {};
  for (;;) {
    Extent ii = in_base, oo = out_base;
    for (std::size_t j = 0; j < m; ++j) {
      const DigitAxis& ax = p.axes[outer[j]];
      const Extent ce = c.ce[outer[j]];
      const Extent i = c.origin[outer[j]] + (ax.flip ? ce - 1 - w[j] : w[j]);
      ii += i * ax.in_stride;
      oo += ax.image(i) * ax.out_stride;
    }
    for (int ws = 0; ws < 2; ++ws) {
      const Extent n_w = ws ? wce - wn : wn;
      if (n_w == 0) continue;
      const Extent src_w = (wi + (ws ? wn * (wa.flip ? -1 : 1) : 0)) * wa.in_stride;
      const Extent dst_w = ws ? 0 : wo;
      for (int rs = 0; rs < 2; ++rs) {
        const Extent n_r = rs ? rce - rn : rn;
        if (n_r == 0) continue;
        const Extent src_r = c.origin[R] + (rs ? rn : 0);
        const Extent dst_r = (rs ? ro2 : ro) * ra.out_stride;
        fn(in + (ii + src_w + src_r) * eb, wstep, out + (oo + dst_w + dst_r) * eb, rstep, n_w, n_r);
      }
    }
    std::size_t j = m;
    for (; j-- > 0;) {
      if (++w[j] < c.ce[outer[j]]) break;
      w[j] = 0;
    }
    if (j == static_cast<std::size_t>(-1)) return;
  }
}

// A tile of a plan whose gathered axes (the last write-order axes from `g` on) are not rolled, and whole but for the
// outermost, which is then not flipped, edge tiles and tiles a roll wraps included: the rows are the coordinates of the other tile axes (an odometer, each image
// computed from its coordinate), each one gathered output run that starts at the row's image.
template <int EB>
void run_tile_gathers(const DigitPlan& p, const TileCursor& c, std::size_t g, const std::vector<std::ptrdiff_t>& gather,
                      const std::byte* in, std::byte* out) {
  const std::size_t k = p.axes.size();
  Extent in_base = 0, out_base = 0;
  for (std::size_t a = 0; a < k; ++a)
    if (p.axes[a].chunk == 1) {
      in_base += c.origin[a] * p.axes[a].in_stride;
      out_base += p.axes[a].image(c.origin[a]) * p.axes[a].out_stride;
    }
  const auto& order = p.write_order;
  // The outermost gathered axis may be cut by the tile (then it is neither flipped nor rolled): the run is the
  // table's first ce / chunk, from its origin.
  const DigitAxis& go = p.axes[order[g]];
  const std::size_t len = gather.size() / static_cast<std::size_t>(go.chunk) * static_cast<std::size_t>(c.ce[order[g]]);
  in_base += c.origin[order[g]] * go.in_stride;
  out_base += c.origin[order[g]] * go.out_stride;
  Extent w[kMaxAxes] = {};
  for (;;) {
    Extent ii = in_base, oo = out_base;
    for (std::size_t j = 0; j < g; ++j) {
      const DigitAxis& ax = p.axes[order[j]];
      const Extent i = c.origin[order[j]] + w[j];
      ii += i * ax.in_stride;
      oo += ax.image(i) * ax.out_stride;
    }
    const std::byte* s = in + ii * EB;
    std::byte* d = out + oo * EB;
    for (std::size_t j = 0; j < len; ++j) std::memcpy(d + j * EB, s + gather[j] * EB, EB);
    std::size_t j = g;
    for (; j-- > 0;) {
      if (++w[j] < c.ce[order[j]]) break;
      w[j] = 0;
    }
    if (j == static_cast<std::size_t>(-1)) return;
  }
}

template <int EB>
void run_tiles(const DigitPlan& p, const std::vector<std::ptrdiff_t>& in_off, const std::vector<std::ptrdiff_t>& out_off,
               const std::vector<std::ptrdiff_t>& gather, std::ptrdiff_t gather_out0, int gather_outer,
               const std::vector<std::ptrdiff_t>& prefetch, Extent prefetch_bytes, const void* in_v, void* out_v,
               int threads) {
  const auto* in = static_cast<const std::byte*>(in_v);
  auto* out = static_cast<std::byte*>(out_v);
  const std::size_t k = p.axes.size();
  const Extent tiles = p.tiles();
  const std::size_t rows = in_off.size();
  const int inner = p.write_order.empty() ? -1 : p.write_order.back();
  const Extent row_len = inner < 0 ? 1 : p.axes[inner].chunk;
  const std::ptrdiff_t step = inner < 0 ? 0 : (p.axes[inner].flip ? -p.axes[inner].in_stride : p.axes[inner].in_stride);
  // Plain variables, not a structured binding: the lambda below captures them (clang before 16 cannot).
  const auto block = block_axes(p);
  const int W = block.first, R = block.second;
  const cpu_detail::DigitBlockFn fn = cpu_detail::digit_block_fn(EB);
  const Extent nw = W < 0 ? 0 : p.axes[W].chunk, nr = R < 0 ? 0 : p.axes[R].chunk;
  const std::ptrdiff_t rstep = R < 0 ? 0 : (p.axes[R].flip ? -p.axes[R].out_stride : p.axes[R].out_stride);
  // Rows copied whole into an output too large for the caches are stored past them (cpu_tuning::kStreamingBytes).
  const bool stream = static_cast<std::size_t>(p.elements()) * EB >= cpu_tuning::kStreamingBytes;
  const auto in_addr = reinterpret_cast<std::uintptr_t>(in_v);
  const std::uintptr_t in_end = in_addr + static_cast<std::uintptr_t>(p.elements()) * EB;
  auto body = [&](std::uint64_t begin, std::uint64_t end, int) {
    struct Fence {
      bool on;
      ~Fence() {
        if (on) cpu_detail::digit_stream_fence();
      }
    } fence{stream};
    TileCursor c;
    TileCursor next;
    bool next_regular = begin < end && locate_tile(p, static_cast<Extent>(begin), next);
    for (std::uint64_t t = begin; t < end; ++t) {
      c = next;
      const bool regular = next_regular;
      // The next tile's input runs are fetched while this one is moved (too many streams for the hardware's
      // prefetchers); an edge tile's runs are those of a full tile, cut at the end of the array.
      if (t + 1 < end) {
        next_regular = locate_tile(p, static_cast<Extent>(t + 1), next);
        Extent nb = 0;
        for (std::size_t a = 0; a < k; ++a) nb += next.origin[a] * p.axes[a].in_stride;
        const std::uintptr_t ns = in_addr + static_cast<std::uintptr_t>(nb) * EB;
        for (const std::ptrdiff_t off : prefetch)
          for (Extent b = 0; b < prefetch_bytes; b += 64) {
            const std::uintptr_t at = ns + static_cast<std::uintptr_t>(off * EB + b);
            if (at < in_end) __builtin_prefetch(reinterpret_cast<const void*>(at));
          }
      }
      if (gather_outer >= 0 && !regular) {
        run_tile_gathers<EB>(p, c, static_cast<std::size_t>(gather_outer), gather, in, out);
        continue;
      }
      if (W >= 0 && !regular) {
        run_tile_blocks(p, c, EB, fn, W, R, in, out);
        continue;
      }
      if (!regular || inner < 0) {
        run_tile_rows<EB>(p, c, in, out);
        continue;
      }
      Extent in_base = 0, out_base = 0;
      for (std::size_t a = 0; a < k; ++a) {
        in_base += c.origin[a] * p.axes[a].in_stride;
        out_base += p.axes[a].image(c.origin[a]) * p.axes[a].out_stride;
      }
      const std::byte* src = in + in_base * EB;
      std::byte* dst = out + out_base * EB;
      if (!gather.empty()) {
        const std::size_t len = gather.size();
        for (std::size_t r = 0; r < rows; ++r) {
          const std::byte* s = src + in_off[r] * EB;
          std::byte* d = dst + (out_off[r] + gather_out0) * EB;
          for (std::size_t j = 0; j < len; ++j) std::memcpy(d + j * EB, s + gather[j] * EB, EB);
        }
        continue;
      }
      if (W >= 0) {
        for (std::size_t r = 0; r < rows; ++r) fn(src + in_off[r] * EB, step, dst + out_off[r] * EB, rstep, nw, nr);
        continue;
      }
      if (stream && step == 1 && row_len * EB >= cpu_tuning::kDigitStreamRowBytes) {
        for (std::size_t r = 0; r < rows; ++r)
          cpu_detail::digit_stream_copy(src + in_off[r] * EB, dst + out_off[r] * EB,
                                        static_cast<std::size_t>(row_len) * EB);
        continue;
      }
      for (std::size_t r = 0; r < rows; ++r)
        strided_row<EB>(src + in_off[r] * EB, step, dst + out_off[r] * EB, row_len);
    }
  };
  threads = static_cast<int>(std::clamp<Extent>(threads, 1, tiles));
  if (threads == 1) return body(0, static_cast<std::uint64_t>(tiles), 0);
  const auto chunk = std::max<std::uint64_t>(
      1, static_cast<std::uint64_t>(tiles) / (cpu_tuning::kChunksPerThread * static_cast<std::uint64_t>(threads)));
  ThreadPool::shared().run(static_cast<std::uint64_t>(tiles), chunk, threads, body);
}

// In place for an involution: each element x with image y > x swaps with it (y == x stays). Input coordinates
// advance as an odometer; the output index is recomputed from them.
template <int EB>
void run_inplace(const DigitPlan& p, void* data_v, int threads) {
  auto* data = static_cast<std::byte*>(data_v);
  const std::size_t k = p.axes.size();
  const Extent n = p.elements();
  auto body = [&](std::uint64_t begin, std::uint64_t end, int) {
    std::vector<Extent> i(k);
    Extent rest = static_cast<Extent>(begin);
    for (std::size_t a = k; a-- > 0;) {
      i[a] = rest % p.axes[a].extent;
      rest /= p.axes[a].extent;
    }
    for (Extent x = static_cast<Extent>(begin); x < static_cast<Extent>(end); ++x) {
      Extent y = 0;
      for (std::size_t a = 0; a < k; ++a) y += p.axes[a].image(i[a]) * p.axes[a].out_stride;
      if (y > x) {
        std::byte tmp[EB];
        std::memcpy(tmp, data + x * EB, EB);
        std::memcpy(data + x * EB, data + y * EB, EB);
        std::memcpy(data + y * EB, tmp, EB);
      }
      for (std::size_t a = k; a-- > 0;) {
        if (++i[a] < p.axes[a].extent) break;
        i[a] = 0;
      }
    }
  };
  threads = static_cast<int>(std::clamp<Extent>(threads, 1, n));
  if (threads == 1) return body(0, static_cast<std::uint64_t>(n), 0);
  const auto units = static_cast<std::uint64_t>(n);
  ThreadPool::shared().run(units, std::max<std::uint64_t>(4096, units / (8 * static_cast<std::uint64_t>(threads))),
                           threads, body);
}

template <class F>
void with_elem(int eb, F&& f) {
  switch (eb) {
    case 1: return f(std::integral_constant<int, 1>{});
    case 2: return f(std::integral_constant<int, 2>{});
    case 4: return f(std::integral_constant<int, 4>{});
    case 8: return f(std::integral_constant<int, 8>{});
    case 16: return f(std::integral_constant<int, 16>{});
    default: throw std::logic_error(fmt::format("digit plan with a {}-byte element", eb));
  }
}

}  // namespace

CpuDigitPermuter::CpuDigitPermuter(const DigitMap& map, int elem_bytes, const CpuPolicy& policy)
    : CpuDigitPermuter(plan_digits(map, elem_bytes), policy) {}

CpuDigitPermuter::CpuDigitPermuter(DigitPlan plan, const CpuPolicy& policy) : plan_(std::move(plan)) {
  check_cpu_threads(policy.threads);
  const auto bytes = static_cast<std::size_t>(plan_.elements()) * static_cast<std::size_t>(plan_.elem_bytes);
  threads_ = policy.threads > 0 ? policy.threads
                                : static_cast<int>(std::clamp<std::size_t>(bytes / cpu_tuning::kBytesPerThread, 1,
                                                                           ThreadPool::shared().size()));
  involution_ = plan_.map.is_involution();
  if (plan_.axes.size() > kMaxAxes)
    throw std::invalid_argument(fmt::format("a map of {} canonical axes: the CPU executor takes at most {}",
                                            plan_.axes.size(), kMaxAxes));
  // The row tables of a full tile whose rolls do not wrap: per row (outer write-order coordinates), the offsets of
  // the input element whose image comes first in the row and of that image, relative to the tile's bases.
  // For a block plan (block_axes) the rows are the coordinates of the tile axes other than W and R, and the
  // offsets those of the block's first input row (W's first image) and of its image. Where the innermost output
  // axis is short, the rows are gathers instead: the innermost write-order axes whose images are one contiguous
  // output run (each inner one whole in the tile) make the gather table, the input offset of each element of
  // the run in output order, and the rows are the coordinates of the other tile axes.
  // The input runs of a full tile (for the prefetch of the next tile): the innermost read-order axes that make
  // one contiguous run (each inner one whole), from every coordinate of the other tile axes.
  const auto& ro = plan_.read_order;
  if (!ro.empty()) {
    std::size_t q = ro.size() - 1;
    Extent run_elems = plan_.axes[ro[q]].chunk;
    while (q > 0 && plan_.axes[ro[q]].chunk == plan_.axes[ro[q]].extent &&
           plan_.axes[ro[q - 1]].in_stride == plan_.axes[ro[q]].in_stride * plan_.axes[ro[q]].extent) {
      --q;
      run_elems *= plan_.axes[ro[q]].chunk;
    }
    prefetch_bytes_ = run_elems * plan_.elem_bytes;
    prefetch_.push_back(0);
    for (std::size_t a = 0; a < q; ++a) {
      const DigitAxis& ax = plan_.axes[ro[a]];
      const std::size_t before = prefetch_.size();
      for (Extent l = 1; l < ax.chunk; ++l)
        for (std::size_t i = 0; i < before; ++i) prefetch_.push_back(prefetch_[i] + l * ax.in_stride);
    }
  }
  const auto& wo = plan_.write_order;
  if (wo.empty()) return;
  std::vector<int> outer(wo.begin(), wo.end());
  int inner = -1;
  const DigitAxis& last = plan_.axes[wo.back()];
  std::size_t g = wo.size() - 1;
  Extent run = last.chunk;
  // A block of at most 4 input rows interleaved into dense output runs is faster than any gather.
  const auto [bw, br] = block_axes(plan_);
  const bool interleave = bw >= 0 && last.chunk <= 4 && plan_.axes[br].out_stride == last.chunk;
  if (last.chunk < cpu_tuning::kDigitGatherBelow && last.out_stride == 1 && !interleave) {
    while (g > 0 && run < cpu_tuning::kDigitGatherRun) {
      const DigitAxis& in_ax = plan_.axes[wo[g]];
      const DigitAxis& out_ax = plan_.axes[wo[g - 1]];
      if (in_ax.chunk != in_ax.extent || out_ax.out_stride != in_ax.out_stride * in_ax.extent) break;
      run *= out_ax.chunk;
      --g;
    }
  }
  if (run >= 2 * last.chunk) {
    outer.assign(wo.begin(), wo.begin() + static_cast<std::ptrdiff_t>(g));
    gather_.resize(static_cast<std::size_t>(run));
    // Every tile gathers where the gathered axes are not rolled and whole, but for the outermost if it is not
    // flipped (then a tile cuts the run short at most, and wraps nothing in it).
    bool everywhere = true;
    for (std::size_t q = g; q < wo.size(); ++q) {
      const DigitAxis& ax = plan_.axes[wo[q]];
      const bool whole = ax.chunk == ax.extent;
      everywhere = everywhere && ax.roll == 0 && (whole || (q == g && !ax.flip));
    }
    if (everywhere) gather_outer_ = static_cast<int>(g);
    for (Extent j = 0; j < run; ++j) {
      Extent rest = j, ii = 0;
      for (std::size_t q = wo.size(); q-- > g;) {
        const DigitAxis& ax = plan_.axes[wo[q]];
        const Extent u = rest % ax.chunk;
        rest /= ax.chunk;
        ii += (ax.flip ? ax.chunk - 1 - u : u) * ax.in_stride;
        if (j == 0 && ax.flip) gather_out0_ -= (ax.chunk - 1) * ax.out_stride;
      }
      gather_[static_cast<std::size_t>(j)] = ii;
    }
  } else {
    const int R = block_axes(plan_).second;
    outer.clear();
    for (int a : wo)
      if (a != R) outer.push_back(a);
    inner = outer.back();
    outer.pop_back();
  }
  const std::size_t m = outer.size();
  std::ptrdiff_t ii0 = 0, oo0 = 0;
  if (inner >= 0) {
    const DigitAxis& ia = plan_.axes[inner];
    const Extent first_l = ia.flip ? ia.chunk - 1 : 0;
    ii0 = first_l * ia.in_stride;
    oo0 = ia.flip ? -first_l * ia.out_stride : first_l * ia.out_stride;
  }
  std::vector<Extent> w(m, 0);
  Extent rows = 1;
  for (std::size_t j = 0; j < m; ++j) rows *= plan_.axes[outer[j]].chunk;
  in_off_.reserve(static_cast<std::size_t>(rows));
  out_off_.reserve(static_cast<std::size_t>(rows));
  for (Extent r = 0; r < rows; ++r) {
    std::ptrdiff_t ii = ii0, oo = oo0;
    for (std::size_t j = 0; j < m; ++j) {
      const DigitAxis& ax = plan_.axes[outer[j]];
      const Extent l = ax.flip ? ax.chunk - 1 - w[j] : w[j];
      ii += l * ax.in_stride;
      oo += (ax.flip ? -l : l) * ax.out_stride;
    }
    in_off_.push_back(ii);
    out_off_.push_back(oo);
    for (std::size_t j = m; j-- > 0;) {
      if (++w[j] < plan_.axes[outer[j]].chunk) break;
      w[j] = 0;
    }
  }
}

void CpuDigitPermuter::operator()(const void* in, void* out) const {
  const auto bytes = static_cast<std::size_t>(plan_.elements()) * static_cast<std::size_t>(plan_.elem_bytes);
  check_byte_buffers(in, out, bytes, 1, true);
  if (in == out) {
    if (!involution_)
      throw std::invalid_argument(fmt::format(
          "in place (in == out) needs a map that is its own inverse; {} on shape {} is not: pass a separate "
          "output array",
          plan_.map.to_string(), shape_to_string(plan_.map.shape())));
    with_elem(plan_.elem_bytes, [&](auto eb) { run_inplace<decltype(eb)::value>(plan_, out, threads_); });
    return;
  }
  with_elem(plan_.elem_bytes,
            [&](auto eb) { run_tiles<decltype(eb)::value>(plan_, in_off_, out_off_, gather_, gather_out0_, gather_outer_,
                                                          prefetch_, prefetch_bytes_, in, out, threads_);
            });
}

}  // namespace bmmc
