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
  v.vector_slots_w = vw > 1 && strides_divisible(v.rows_w, vw, -1) && (v.col_pad_period == 0 || (v.col_pad_period % vw == 0 && v.pad % vw == 0));
  if (vr > 1 && !v.run_r.empty()) {
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

std::size_t digit_kernel_smem_bytes(const DigitPlan& plan, const DigitTileView& v, int off_bytes, bool col_table) {
  const auto a16 = [](Extent b) { return (b + 15) / 16 * 16; };
  const Extent k = static_cast<Extent>(plan.axes.size());
  const Extent set = a16(v.row_count_r * off_bytes) + a16(v.row_count_w * off_bytes) + a16(v.row_count_r * 4) +
                     a16(v.row_count_w * 4) + a16(k * 4) + a16(k * 8) + 32;
  const Extent b = a16(static_cast<Extent>(plan.smem_bytes())) + 2 * set + a16((col_table ? v.cols_r : 0) * 4);
  return static_cast<std::size_t>(b);
}

}  // namespace bmmc
