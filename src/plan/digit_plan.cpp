// The digit planner (bmmc/plan/digit_plan.hpp): canonical axes, the element the plan moves, the tile's chunks,
// and the shared-memory padding chosen by counting bank conflicts of the first warp of each phase.
#include "bmmc/plan/digit_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <numeric>
#include <stdexcept>

#include "bmmc/plan/digit_tile_view.hpp"
#include "tuning.hpp"

namespace bmmc {

namespace {

bool is_native_elem(int b) { return b == 1 || b == 2 || b == 4 || b == 8 || b == 16; }

// The map with an innermost axis of `bytes` bytes appended (it stays innermost and unmoved).
DigitMap with_byte_axis(const DigitMap& m, int bytes) {
  auto shape = m.shape();
  auto axes = m.axes();
  auto flip = m.flips();
  auto roll = m.rolls();
  shape.push_back(bytes);
  axes.push_back(m.rank());
  flip.push_back(0);
  roll.push_back(0);
  return DigitMap(std::move(shape), std::move(axes), std::move(flip), std::move(roll));
}

// Folds the innermost axis into the element while it stays innermost, unflipped and unrolled, and the element
// stays ≤ 16 bytes: a wider element is fewer, wider accesses for the same bytes.
DigitMap fold_inner_axis(DigitMap m, int& elem, int max_elem) {
  while (m.rank() > 0) {
    const int k = m.rank() - 1;
    if (m.axes()[k] != k || m.flips()[k] || m.rolls()[k]) break;
    const Extent d = m.shape()[k];
    int g = 1;
    for (int cand = std::bit_floor(static_cast<unsigned>(std::max(1, max_elem / elem))); cand >= 2; cand /= 2)
      if (d % cand == 0) {
        g = cand;
        break;
      }
    if (g == 1) break;
    elem *= g;
    auto shape = m.shape();
    shape[k] = d / g;
    m = DigitMap(std::move(shape), m.axes(), m.flips(), m.rolls()).canonical();
    if (d != g) break;  // the axis remains (with extent d/g): nothing below it to fold
  }
  return m;
}

// The chunk of an axis taken partly: the whole axis when it is at most half as long again as `want` (a last tile
// of a few elements would run nearly empty); else the axis split evenly into tiles of about `want`, each rounded up
// to a multiple of `align` (the elements of a 32-byte DRAM sector, so that runs of neighbouring tiles do not share
// sectors where rows are aligned).
Extent part_chunk(Extent extent, Extent want, Extent align) {
  want = std::clamp<Extent>(want, 1, extent);
  if (2 * extent <= 3 * want) return extent;
  const Extent tiles = (extent + want - 1) / want;
  const Extent even = (extent + tiles - 1) / tiles;
  return std::min(extent, (even + align - 1) / align * align);
}

// Walks `order` (axes, innermost last) taking whole axes until `run` elements are covered; the axis where the
// run ends is taken partly. Chunks only grow.
void cover_run(std::vector<DigitAxis>& axes, const std::vector<int>& order, Extent run, Extent align) {
  Extent acc = 1;
  for (auto it = order.rbegin(); it != order.rend() && acc < run; ++it) {
    DigitAxis& ax = axes[*it];
    const Extent need = (run + acc - 1) / acc;
    const Extent c = need >= ax.extent ? ax.extent : part_chunk(ax.extent, need, acc == 1 ? align : 1);
    ax.chunk = std::max(ax.chunk, c);
    acc *= ax.chunk;
  }
}

Extent volume(const std::vector<DigitAxis>& axes) {
  Extent v = 1;
  for (const auto& a : axes) v *= a.chunk;
  return v;
}

// The widest access (a power of two of elements, at most 16 bytes) of one side: the side's innermost tile axes
// that are consecutive axes of that side (and, writing, have no roll) form a contiguous run; the vector must divide
// the run's chunk product (so no vector crosses rows) and its extent product (so an edge tile ends on a vector).
int side_vector(const DigitPlan& p, const std::vector<int>& order, const std::vector<int>& position, bool write,
                int max_access_bytes) {
  const int k = static_cast<int>(p.axes.size());
  Extent chunks = 1, extents = 1;
  int expect = k - 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it, --expect) {
    const DigitAxis& ax = p.axes[*it];
    if (position[*it] != expect || (write && ax.roll != 0)) break;
    chunks *= ax.chunk;
    extents *= ax.extent;
    if (ax.chunk != ax.extent) break;
  }
  int v = std::max(1, max_access_bytes / p.elem_bytes);
  while (v > 1 && (chunks % v != 0 || extents % v != 0 || (write && p.pad_period > 0 && p.pad_period % v != 0)))
    v /= 2;
  return v;
}

}  // namespace

Extent DigitPlan::elements() const {
  Extent n = 1;
  for (const auto& a : axes) n *= a.extent;
  return n;
}
Extent DigitPlan::tile_elements() const { return volume(axes); }
Extent DigitPlan::tiles() const {
  Extent n = 1;
  for (const auto& a : axes) n *= a.tile_count();
  return n;
}
Extent DigitPlan::smem_elements() const {
  const Extent v = tile_elements();
  return pad_period > 0 ? v + (v - 1) / pad_period * pad : v;
}
bool DigitPlan::is_copy() const {
  for (std::size_t a = 0; a < axes.size(); ++a)
    if (axes[a].flip || axes[a].roll || axes[a].in_stride != axes[a].out_stride) return false;
  return true;
}

DigitPlan plan_digits(const DigitMap& map, int elem_bytes, const DigitPolicy& policy, const DeviceCaps& caps) {
  if (elem_bytes < 1 || elem_bytes > (1 << 20))
    throw std::invalid_argument(fmt::format("element size {} bytes is out of range; expected 1 to {} bytes",
                                            elem_bytes, 1 << 20));
  if (map.size() > kMaxDigitElements / elem_bytes)
    throw std::invalid_argument(fmt::format("an array of shape {} with {}-byte elements is {} elements of {} "
                                            "bytes: more than 2^62 bytes",
                                            shape_to_string(map.shape()), elem_bytes, map.size(), elem_bytes));
  DigitPlan plan;
  plan.map = map;
  plan.caller_elem_bytes = elem_bytes;
  int elem = elem_bytes;
  DigitMap m = map.canonical();
  if (!is_native_elem(elem)) {
    m = with_byte_axis(m, elem).canonical();
    elem = 1;
  }
  const int max_elem = policy.max_elem_bytes > 0 ? std::min(policy.max_elem_bytes, 16) : 16;
  m = fold_inner_axis(std::move(m), elem, max_elem);
  plan.elem_bytes = elem;

  // Axes in input order with their output strides.
  const int k = m.rank();
  const auto out_shape = m.out_shape();
  std::vector<Extent> out_stride(static_cast<std::size_t>(k), 1);
  for (int j = k - 2; j >= 0; --j) out_stride[j] = out_stride[j + 1] * out_shape[j + 1];
  plan.axes.resize(static_cast<std::size_t>(k));
  Extent stride = 1;
  for (int a = k - 1; a >= 0; --a) {
    plan.axes[a].extent = m.shape()[a];
    plan.axes[a].in_stride = stride;
    stride *= m.shape()[a];
  }
  std::vector<int> out_order(static_cast<std::size_t>(k));  // input axes in output order
  for (int j = 0; j < k; ++j) {
    const int a = m.axes()[j];
    out_order[j] = a;
    plan.axes[a].out_stride = out_stride[j];
    plan.axes[a].flip = m.flips()[j] != 0;
    plan.axes[a].roll = m.rolls()[j];
  }
  std::vector<int> in_order(static_cast<std::size_t>(k));
  std::iota(in_order.begin(), in_order.end(), 0);

  // Chunks: runs on both sides, then grown along the read runs or shrunk to fit.
  const Extent run_bytes = policy.run_bytes > 0 ? policy.run_bytes : plan_tuning::kDigitRunBytes;
  const Extent tile_bytes = policy.tile_bytes > 0 ? policy.tile_bytes : plan_tuning::kDigitTileBytes;
  const Extent max_tile_bytes = std::min<Extent>(
      policy.max_tile_bytes > 0 ? policy.max_tile_bytes : plan_tuning::kDigitMaxTileBytes,
      caps.max_shared_per_block / 2);
  if (max_tile_bytes < elem)
    throw std::invalid_argument(fmt::format("a tile of at most {} bytes cannot hold one {}-byte element",
                                            max_tile_bytes, elem));
  const Extent run = std::max<Extent>(1, run_bytes / elem);
  const Extent sector = std::max(1, 32 / elem);
  cover_run(plan.axes, in_order, run, sector);
  cover_run(plan.axes, out_order, run, sector);
  // Grow along the input order (longer read runs, more writes per block) toward the tile size.
  while (volume(plan.axes) * elem * 2 <= tile_bytes) {
    auto it = std::find_if(in_order.rbegin(), in_order.rend(), [&](int a) {
      return plan.axes[a].chunk < plan.axes[a].extent;
    });
    if (it == in_order.rend()) break;
    DigitAxis& ax = plan.axes[*it];
    const Extent factor = tile_bytes / (volume(plan.axes) * elem);
    ax.chunk = part_chunk(ax.extent, ax.chunk * std::max<Extent>(2, factor), sector);
  }
  // Shrink the largest chunk until the tile fits.
  while (volume(plan.axes) * elem > max_tile_bytes) {
    auto big = std::max_element(plan.axes.begin(), plan.axes.end(),
                                [](const DigitAxis& x, const DigitAxis& y) { return x.chunk < y.chunk; });
    if (big == plan.axes.end() || big->chunk == 1) break;  // one element: fits (checked above)
    // Halved (rounded to sectors while that still shrinks it): always smaller, so the loop ends.
    const Extent half = (big->chunk + 1) / 2;
    const Extent rounded = (half + sector - 1) / sector * sector;
    big->chunk = rounded < big->chunk ? rounded : half;
  }

  for (int a : in_order)
    if (plan.axes[a].chunk > 1) plan.read_order.push_back(a);
  for (int a : out_order)
    if (plan.axes[a].chunk > 1) plan.write_order.push_back(a);
  plan.smem_stride.assign(plan.write_order.size(), 1);
  for (int i = static_cast<int>(plan.write_order.size()) - 2; i >= 0; --i)
    plan.smem_stride[i] = plan.smem_stride[i + 1] * plan.axes[plan.write_order[i + 1]].chunk;

  const Extent v = volume(plan.axes);
  const int threads = policy.threads_per_block > 0 ? policy.threads_per_block : plan_tuning::kDigitThreadsPerBlock;
  plan.threads_per_block = static_cast<int>(std::min<Extent>(threads, (v + 31) / 32 * 32));
  plan.min_blocks = std::max(0, policy.min_blocks > 0 ? policy.min_blocks : plan_tuning::kDigitMinBlocks);

  // Vectors (positions: an input axis's place in input order, and in output order), padding and the read skew,
  // chosen together: one pad every `period` slots, where period is the slot stride of the innermost read axis (the
  // stride the read phase's lanes step by), and the pad and skew of a few candidates whose shared accesses have the
  // fewest bank ways as the kernel makes them (digit_bank_ways); ties keep the first (no pad, no skew).
  std::vector<int> in_pos(static_cast<std::size_t>(k)), out_pos(static_cast<std::size_t>(k));
  for (int a = 0; a < k; ++a) in_pos[a] = a;
  for (int j = 0; j < k; ++j) out_pos[out_order[j]] = j;
  const int max_vector = policy.max_vector_elems > 0 ? policy.max_vector_elems : 16;
  const int max_access = policy.max_access_bytes > 0 ? std::min(policy.max_access_bytes, 16) : 16;
  // Covering vectors where a side's run leaves aligned vectors narrower than the widest access (policy.cover): by
  // default reads whose rows are long enough, never writes (never faster than scalar writes on the suite, slower
  // on three cases: bench/results/h200/any_shape.csv, digit[cover=1]); writing never on a rolled write run.
  const int cover_vector =
      static_cast<int>(std::bit_floor(static_cast<unsigned>(std::max(1, std::min(max_vector, max_access / elem)))));
  const DigitTileView runs = tile_view(plan);
  const auto long_enough = [&](Extent cols) {
    return policy.cover == 1 || cols >= Extent{plan_tuning::kDigitCoverRowVectors} * cover_vector;
  };
  const bool can_cover = cover_vector > 1 && policy.cover >= 0;
  const bool cover_r = can_cover && long_enough(runs.cols_r);
  const bool cover_w = can_cover && policy.cover == 1 && !runs.roll_run_w;
  const auto set_vectors = [&] {
    plan.read_vector = std::min(max_vector, side_vector(plan, plan.read_order, in_pos, false, max_access));
    plan.write_vector = std::min(max_vector, side_vector(plan, plan.write_order, out_pos, true, max_access));
    plan.read_cover = cover_r && plan.read_vector < cover_vector;
    if (plan.read_cover) plan.read_vector = cover_vector;
    plan.write_cover = cover_w && plan.write_vector < cover_vector;
    if (plan.write_cover) plan.write_vector = cover_vector;
  };
  Extent period = 0;
  if (!plan.read_order.empty()) {
    const int r = plan.read_order.back();
    const auto pos = std::find(plan.write_order.begin(), plan.write_order.end(), r) - plan.write_order.begin();
    period = plan.smem_stride[static_cast<std::size_t>(pos)];
  }
  struct Choice {
    int cost, pad, shift, step;
  };
  std::vector<int> pads;
  for (int pad : {0, 1, 2, 3, 4, 5, 7, 8})
    if (pad == 0 || (period > 1 && pad * elem <= 32)) pads.push_back(pad);
  const auto use = [&](int pad, int shift, int step) {
    plan.pad_period = pad > 0 ? period : 0;
    plan.pad = pad;
    plan.read_skew_shift = shift;
    plan.read_skew_step = step;
    set_vectors();
  };
  Choice best{1 << 30, 0, 0, 0};
  for (int pad : pads) {
    use(pad, 0, 0);
    const DigitTileView view = tile_view(plan);
    const int cost = digit_bank_ways(plan, view, false) + digit_bank_ways(plan, view, true);
    if (cost < best.cost) best = Choice{cost, pad, 0, 0};
    if (best.cost == 2) break;  // conflict-free both ways
  }
  // A skew costs a rotation and unaligned col arithmetic per vector: tried only when the best unskewed plan has
  // two ways or more to spare in all (a cost of 4 or more; 1 + 1 is conflict-free: 16-byte vectors whose elements
  // land a slot stride apart meet four ways), and taken only when it removes two or more — never to shave one
  // way (two to one on the innermost-2 transpose cost 20% on the H200). Never for covering reads, whose stores
  // are checked one by one: in a trial build a skew made the odd-row roll far slower there (H200).
  if (best.cost >= 4 && policy.read_skew >= 0 && !plan.read_cover) {
    const Choice unskewed = best;
    for (int pad : pads) {
      use(pad, 0, 0);
      const DigitTileView view = tile_view(plan);
      if (!read_skew_possible(plan, view)) continue;
      const int vr = plan.read_vector;
      const int write_ways = digit_bank_ways(plan, view, true);
      for (int shift = 0; shift <= 4; ++shift)
        for (int step = 1; step < vr; step *= 2) {
          plan.read_skew_shift = shift;
          plan.read_skew_step = step;
          const int cost = digit_bank_ways(plan, view, false) + write_ways;
          if (cost < best.cost) best = Choice{cost, pad, shift, step};
        }
    }
    if (best.cost > unskewed.cost - 2) best = unskewed;
  }
  use(best.pad, best.shift, best.step);
  return plan;
}

std::string to_string(const DigitPlan& p) {
  std::string s = fmt::format("digit plan: {} of shape {}, {}-byte elements\n", p.map.to_string(),
                              shape_to_string(p.map.shape()), p.caller_elem_bytes);
  s += fmt::format("  moves {} elements of {} bytes on {} canonical axes\n", p.elements(), p.elem_bytes,
                   p.axes.size());
  for (std::size_t a = 0; a < p.axes.size(); ++a) {
    const auto& x = p.axes[a];
    s += fmt::format("  axis {}: extent {} in-stride {} out-stride {}{}{} chunk {}\n", a, x.extent, x.in_stride,
                     x.out_stride, x.flip ? " flip" : "", x.roll ? fmt::format(" roll {}", x.roll) : "", x.chunk);
  }
  s += fmt::format("  tile {} elements ({} bytes of shared memory), {} tiles, {} threads per block{}\n",
                   p.tile_elements(), p.smem_bytes(), p.tiles(), p.threads_per_block,
                   p.min_blocks > 0 ? fmt::format(" (registers for {} blocks per SM)", p.min_blocks) : "");
  s += fmt::format("  read order [{}], write order [{}], pad {} every {} slots\n", fmt::join(p.read_order, ", "),
                   fmt::join(p.write_order, ", "), p.pad, p.pad_period);
  s += fmt::format("  lanes read {}{} and write {}{} elements per access", p.read_vector,
                   p.read_cover ? " (covering)" : "", p.write_vector, p.write_cover ? " (covering)" : "");
  s += p.read_skew_step > 0 ? fmt::format(", read skew (lane >> {}) * {}\n", p.read_skew_shift, p.read_skew_step) : "\n";
  return s;
}

std::string to_json(const DigitPlan& p) {
  std::string axes;
  for (std::size_t a = 0; a < p.axes.size(); ++a) {
    const auto& x = p.axes[a];
    axes += fmt::format(R"({}{{"extent":{},"in_stride":{},"out_stride":{},"flip":{},"roll":{},"chunk":{}}})",
                        a ? "," : "", x.extent, x.in_stride, x.out_stride, x.flip ? "true" : "false", x.roll,
                        x.chunk);
  }
  return fmt::format(
      R"({{"kind":"digit","spec":"{}","shape":[{}],"elem_bytes":{},"plan_elem_bytes":{},"axes":[{}],)"
      R"("read_order":[{}],"write_order":[{}],"tile_elements":{},"smem_bytes":{},"tiles":{},)"
      R"("threads_per_block":{},"pad":{},"pad_period":{},"read_vector":{},"write_vector":{},)"
      R"("read_skew_shift":{},"read_skew_step":{},"read_cover":{},"write_cover":{},"min_blocks":{}}})",
      p.map.to_string(), fmt::join(p.map.shape(), ","), p.caller_elem_bytes, p.elem_bytes, axes,
      fmt::join(p.read_order, ","), fmt::join(p.write_order, ","), p.tile_elements(), p.smem_bytes(), p.tiles(),
      p.threads_per_block, p.pad, p.pad_period, p.read_vector, p.write_vector, p.read_skew_shift,
      p.read_skew_step, p.read_cover ? "true" : "false", p.write_cover ? "true" : "false", p.min_blocks);
}

}  // namespace bmmc
