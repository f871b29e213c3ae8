// DigitTileView: a digit plan's tile seen as two matrices, the form its GPU kernel executes (plan/digit_plan.hpp).
//
// Read phase: the tile is rows × cols, where the cols are the read run — the plan's innermost input axes that are
// consecutive input axes, all whole but the outermost — so col c of a row is input element row_offset + c; the rows
// are the other tile axes. Write phase: the same with the write run (innermost consecutive output axes) and the
// output. A kernel then decomposes a lane's unit once (row = u / cols), takes a row's input offset, output offset
// and slot from small per-row tables, and adds the col: no per-axis arithmetic per element. Slots are padded by
// per-axis strides: the plan's pads (one every pad_period slots, a slot stride of the write order) are linear in
// each slot coordinate above the period, and the write run's cols below it get col + col / col_pad_period · pad.
// tile_view is pure; the plan tests check it against the plan's own formulas element by element.
#pragma once

#include <cstddef>
#include <vector>

#include "bmmc/plan/digit_plan.hpp"

namespace bmmc {

struct DigitTileView {
  std::vector<int> run_r;   ///< the read run's axes, outermost first (consecutive innermost input axes)
  std::vector<int> rows_r;  ///< the other tile axes in read order (row index: the last fastest)
  std::vector<int> run_w;   ///< the write run's axes, outermost first (consecutive innermost output axes)
  std::vector<int> rows_w;  ///< the other tile axes in write order
  Extent cols_r = 1, row_count_r = 1, cols_w = 1, row_count_w = 1;
  /// Lane units (vectors) per row: cols / vector, or where the plan's vectors of that side cover (read_cover,
  /// write_cover) the most aligned vectors that can cover cols consecutive elements, (cols + 2 · vector − 2) / vector.
  Extent units_r = 1, units_w = 1;
  /// Per axis: the padded slot stride (0 for an axis that is not a tile axis).
  std::vector<Extent> slot_stride;
  Extent col_pad_period = 0;  ///< write cols: `pad` slots after every this many (0 = none within the run)
  int pad = 0;
  /// True when the row tables are the same for every tile: no row axis has an edge tile or a roll.
  bool rows_fixed = true;
  /// True when a write-run axis has a roll (a write then checks each such axis's wrap).
  bool roll_run_w = false;
  /// A read vector's elements fill consecutive aligned slots, ascending (1) or descending (−1: the innermost
  /// read axis is the innermost slot axis and flipped), so it is stored as one vector; 0 = element by element
  /// (always where the read vectors cover).
  int vector_slots_r = 0;
  /// A write vector's elements come from consecutive aligned slots: loaded as one vector (never where writes cover).
  bool vector_slots_w = false;

  /// The padded slot of write col c (before the row's part).
  Extent col_slot_w(Extent c) const { return col_pad_period > 0 ? c + c / col_pad_period * pad : c; }
};

DigitTileView tile_view(const DigitPlan& plan);

/// Whether the tile kernel can skew the plan's read vectors: vectors of at least 4 bytes (2 elements or more) that go
/// to shared memory element by element. The planner offers a skew only then; the checker refuses one otherwise.
inline bool read_skew_possible(const DigitPlan& plan, const DigitTileView& view) {
  return plan.read_vector > 1 && plan.read_vector * plan.elem_bytes >= 4 && view.vector_slots_r == 0;
}

/// The bank ways (1 = conflict-free) of the first warp's shared-memory accesses in one phase of the tile kernel
/// (codegen/digit_tile.cuh), the worst instruction's: each lane's unit is `vector` consecutive tile elements of the
/// phase's order; it moves them whole where the view says so (vector_slots_r/w), else element by element (reading,
/// in the skewed order of the plan's read_skew); a covering side's lane l moves col (l mod units) · vector of row
/// l / units (rows taken as starting aligned), the cols inside the row only. Lanes are served in wavefronts of 128 bytes (accesses of 8 bytes:
/// half-warps; 16 bytes: quarter-warps); in each, the ways are the most distinct 4-byte words on one bank.
int digit_bank_ways(const DigitPlan& plan, const DigitTileView& view, bool write_phase);

/// The shared memory the tile kernel (codegen/digit_tile.cuh) takes: the plan's slots, then two sets of 16-byte
/// aligned tables — input and output offsets of `off_bytes` per row, an int slot per row, an int and a long long
/// per axis, and the 32-byte tile record — then an int per read col when `col_table`.
std::size_t digit_kernel_smem_bytes(const DigitPlan& plan, const DigitTileView& view, int off_bytes, bool col_table);

}  // namespace bmmc
