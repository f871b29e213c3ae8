// The two-matrix view of a digit plan's tile (bmmc/plan/digit_tile_view.hpp).
#include "bmmc/plan/digit_tile_view.hpp"

#include <algorithm>

namespace bmmc {

namespace {

// The innermost entries of `order` that sit at positions k−1, k−2, … of their side (`position`), all whole but
// the last taken: a run of consecutive elements on that side.
std::vector<int> run_of(const DigitPlan& p, const std::vector<int>& order, const std::vector<int>& position) {
  std::vector<int> run;
  int expect = static_cast<int>(p.axes.size()) - 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it, --expect) {
    if (position[*it] != expect) break;
    run.insert(run.begin(), *it);
    if (p.axes[*it].chunk != p.axes[*it].extent) break;
  }
  return run;
}

std::vector<int> without(const std::vector<int>& order, const std::vector<int>& run) {
  std::vector<int> rows;
  for (int a : order)
    if (std::find(run.begin(), run.end(), a) == run.end()) rows.push_back(a);
  return rows;
}

Extent chunks(const DigitPlan& p, const std::vector<int>& axes) {
  Extent v = 1;
  for (int a : axes) v *= p.axes[a].chunk;
  return v;
}

}  // namespace

DigitTileView tile_view(const DigitPlan& p) {
  const int k = static_cast<int>(p.axes.size());
  DigitTileView v;
  std::vector<int> in_pos(static_cast<std::size_t>(k)), out_pos(static_cast<std::size_t>(k), -1);
  for (int a = 0; a < k; ++a) in_pos[a] = a;
  // Output positions: the axes in decreasing output stride (the plan's out_stride orders them).
  std::vector<int> by_out(static_cast<std::size_t>(k));
  for (int a = 0; a < k; ++a) by_out[a] = a;
  std::sort(by_out.begin(), by_out.end(), [&](int x, int y) { return p.axes[x].out_stride > p.axes[y].out_stride; });
  for (int j = 0; j < k; ++j) out_pos[by_out[j]] = j;
  v.run_r = run_of(p, p.read_order, in_pos);
  v.run_w = run_of(p, p.write_order, out_pos);
  v.rows_r = without(p.read_order, v.run_r);
  v.rows_w = without(p.write_order, v.run_w);
  v.cols_r = chunks(p, v.run_r);
  v.cols_w = chunks(p, v.run_w);
  v.row_count_r = chunks(p, v.rows_r);
  v.row_count_w = chunks(p, v.rows_w);
  v.slot_stride.assign(static_cast<std::size_t>(k), 0);
  const Extent period = p.pad_period;
  for (std::size_t j = 0; j < p.write_order.size(); ++j) {
    const Extent s = p.smem_stride[j];
    v.slot_stride[static_cast<std::size_t>(p.write_order[j])] = period > 0 && s >= period ? s + s / period * p.pad : s;
  }
  if (period > 0 && period < v.cols_w) {
    v.col_pad_period = period;
    v.pad = p.pad;
  }
  // Vectors in shared memory: every other axis's slot stride a multiple of the vector, so a vector's first slot
  // is aligned; writing, pads too; reading, the vector within the innermost read axis, which has slot stride 1.
  const auto strides_divisible = [&](const std::vector<int>& axes, int vec, int except) {
    for (int a : axes)
      if (a != except && v.slot_stride[static_cast<std::size_t>(a)] % vec != 0) return false;
    return true;
  };
  const int vw = p.write_vector, vr = p.read_vector;
  v.vector_slots_w = vw > 1 && !p.write_cover && strides_divisible(v.rows_w, vw, -1) && (v.col_pad_period == 0 || (v.col_pad_period % vw == 0 && v.pad % vw == 0));
  const auto units = [](Extent cols, int vec, bool cover) { return cover ? (cols + 2 * vec - 2) / vec : cols / vec; };
  v.units_r = units(v.cols_r, vr, p.read_cover);
  v.units_w = units(v.cols_w, vw, p.write_cover);
  if (vr > 1 && !v.run_r.empty() && !p.read_cover) {
    const int a = v.run_r.back();
    if (v.slot_stride[static_cast<std::size_t>(a)] == 1 && p.axes[a].chunk % vr == 0 && strides_divisible(p.write_order, vr, a))
      v.vector_slots_r = p.axes[a].flip ? -1 : 1;
  }
  for (int a : v.run_w) v.roll_run_w = v.roll_run_w || p.axes[a].roll != 0;
  for (int a : v.rows_r)
    if (p.axes[a].extent % p.axes[a].chunk != 0) v.rows_fixed = false;
  for (int a : v.rows_w)
    if (p.axes[a].extent % p.axes[a].chunk != 0 || p.axes[a].roll != 0) v.rows_fixed = false;
  return v;
}

namespace {

// The padded slot of tile element e of a phase's order (the last axis fastest): reading, e's local coordinates
// become slot coordinates through the flips; writing, e's coordinates are slot coordinates. `stride`: each axis's
// unpadded slot stride.
Extent phase_slot(const DigitPlan& p, const std::vector<int>& order, const std::vector<Extent>& stride, Extent e,
                  bool write) {
  Extent s = 0;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const DigitAxis& ax = p.axes[static_cast<std::size_t>(*it)];
    const Extent l = e % ax.chunk;
    e /= ax.chunk;
    s += (!write && ax.flip ? ax.chunk - 1 - l : l) * stride[static_cast<std::size_t>(*it)];
  }
  return p.pad_period > 0 ? s + s / p.pad_period * p.pad : s;
}

// Ways of one warp instruction: lane accesses of `bytes` bytes at byte offsets `starts`.
int instruction_ways(const std::vector<Extent>& starts, int bytes) {
  const std::size_t per_wave = bytes <= 4 ? 32 : static_cast<std::size_t>(128 / bytes);
  int worst = 1;
  std::vector<std::vector<Extent>> banks(32);
  for (std::size_t w0 = 0; w0 < starts.size(); w0 += per_wave) {
    for (auto& b : banks) b.clear();
    for (std::size_t l = w0; l < std::min(starts.size(), w0 + per_wave); ++l)
      for (Extent word = starts[l] / 4; word <= (starts[l] + bytes - 1) / 4; ++word) {
        auto& b = banks[static_cast<std::size_t>(word % 32)];
        if (std::find(b.begin(), b.end(), word) == b.end()) b.push_back(word);
      }
    for (const auto& b : banks) worst = std::max(worst, static_cast<int>(b.size()));
  }
  return worst;
}

}  // namespace

int digit_bank_ways(const DigitPlan& p, const DigitTileView& v, bool write) {
  const std::vector<int>& order = write ? p.write_order : p.read_order;
  const Extent vol = p.tile_elements();
  const int vec = write ? p.write_vector : p.read_vector;
  const bool whole = vec > 1 && (write ? v.vector_slots_w : v.vector_slots_r != 0);
  const bool cover = write ? p.write_cover : p.read_cover;
  const Extent cols = write ? v.cols_w : v.cols_r, units = write ? v.units_w : v.units_r;
  const Extent lanes = std::min<Extent>(32, cover ? (write ? v.row_count_w : v.row_count_r) * units : vol / vec);
  const int eb = p.elem_bytes;
  const bool skew = !write && p.read_skew_step > 0 && read_skew_possible(p, v);  // as the kernel skews
  std::vector<Extent> stride(p.axes.size(), 0);
  for (std::size_t j = 0; j < p.write_order.size(); ++j)
    stride[static_cast<std::size_t>(p.write_order[j])] = p.smem_stride[j];
  // Covering vectors: lane l's unit is col (l mod units) · vec of row l / units (rows taken as starting aligned);
  // its elements past the row's cols are not moved.
  int worst = 1;
  std::vector<Extent> starts;
  for (int q = 0; q < (whole ? 1 : vec); ++q) {
    starts.clear();
    for (Extent l = 0; l < lanes; ++l) {
      if (cover) {
        const Extent c = l % units * vec + q;
        if (c < cols) starts.push_back(phase_slot(p, order, stride, l / units * cols + c, write) * eb);
        continue;
      }
      if (whole) {
        Extent lo = phase_slot(p, order, stride, l * vec, write);
        for (int j = 1; j < vec; ++j) lo = std::min(lo, phase_slot(p, order, stride, l * vec + j, write));
        starts.push_back(lo * eb);
        continue;
      }
      const Extent rho = skew ? ((l >> p.read_skew_shift) * p.read_skew_step) % vec : 0;
      starts.push_back(phase_slot(p, order, stride, l * vec + (q + rho) % vec, write) * eb);
    }
    worst = std::max(worst, instruction_ways(starts, whole ? vec * eb : eb));
  }
  return worst;
}

std::size_t digit_kernel_smem_bytes(const DigitPlan& plan, const DigitTileView& v, int off_bytes, bool col_table) {
  const auto a16 = [](Extent b) { return (b + 15) / 16 * 16; };
  const Extent k = static_cast<Extent>(plan.axes.size());
  const Extent set = a16(v.row_count_r * off_bytes) + a16(v.row_count_w * off_bytes) + a16(v.row_count_r * 4) +
                     a16(v.row_count_w * 4) + a16(k * 4) + a16(k * 8) + 32;
  const Extent b = a16(static_cast<Extent>(plan.smem_bytes())) + 2 * set + a16((col_table ? v.cols_r : 0) * 4);
  return static_cast<std::size_t>(b);
}

}  // namespace bmmc
