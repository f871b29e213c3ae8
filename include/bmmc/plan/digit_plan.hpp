// DigitPlan: the one-pass tile plan of an any-shape map (docs/DESIGN.md §11), as plain printable data.
//
// A block owns a tile: a box of the input index space that is a coordinate product of chunks of the lowest
// input axes (so its reads are long runs) and of the input axes that are the lowest output axes (so its
// writes are long runs); every other axis contributes one coordinate. The tile is read in input order (lanes on
// ascending input addresses), stored in shared memory in output order, and written in output order (lanes on
// ascending output addresses); flips and rolls act inside that mapping, never on the order of global accesses,
// so a roll splits a write run at most once (at its wrap). Chunks that do not divide their extent leave edge
// tiles, whose missing elements are predicated off.
//   Tile t (t < tiles(), decomposed over `tile_counts`, axis 0 outermost): origin_a = t_a · chunk_a,
//     ce_a = min(chunk_a, extent_a − origin_a).
//   Read: tile element e (in `read_order`, the last axis fastest) has local coordinates l; it is valid when every
//     l_a < ce_a, reads in[Σ (origin_a + l_a)·in_stride_a] and stores it at shared slot(w), w_a = flip_a ? chunk_a−1−l_a : l_a
//     (the same slots in every tile: an edge tile of a flipped axis leaves its first chunk_a − ce_a slots unused).
//   Write: tile element e (in `write_order`) has slot coordinates w, valid when every w_a < ce_a (flipped:
//     w_a ≥ chunk_a − ce_a); it loads shared slot(w) and writes out[Σ o_a·out_stride_a],
//     o_a = ((flip_a ? extent_a−1−i_a : i_a) + roll_a) mod extent_a, i_a = origin_a + l_a.
//   slot(w) = Σ w_a·smem_stride_a, the strides of the write order with one pad of `pad` elements every
//     `pad_period` slots (so lanes of the read phase fall on distinct banks).
//   Vectors: a lane moves `read_vector` (`write_vector`) consecutive tile elements in one global access of up to
//     16 bytes, where the innermost axes of that side form a contiguous run whose length and extent it divides.
//     Where they do not (odd or prime extents), a plan may cover instead (`read_cover`, `write_cover`): each row of
//     a phase (plan/digit_tile_view.hpp) is consecutive elements of that side, and lanes move the aligned vectors
//     that cover it — reading, the elements around the row are read and dropped (never past the array); writing,
//     a vector that is not wholly inside the row is written element by element.
//   Padding and the read skew are chosen together with the vectors, by counting the bank ways of the first warp's
//     shared accesses as the kernel makes them (digit_bank_ways in plan/digit_tile_view.hpp).
// The element of a plan may be wider than the caller's (a preserved innermost axis folded into it) or a byte (an
// element size that is not 1, 2, 4, 8 or 16 becomes an innermost axis of bytes). The CPU executor and the CUDA
// code generator execute exactly these formulas; check_digit_plan (digit_plan_check.hpp) proves a plan writes
// every element once from the right input.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bmmc/core/digit_map.hpp"
#include "bmmc/plan/device_caps.hpp"

namespace bmmc {

/// One axis of a plan: an input axis of the canonical map (axis 0 outermost).
struct DigitAxis {
  Extent extent = 1;
  Extent in_stride = 1;   ///< elements between neighbours along this axis in the input
  Extent out_stride = 1;  ///< elements between the output images of neighbours (before flip and roll)
  bool flip = false;      ///< of the output axis it becomes
  Extent roll = 0;        ///< of the output axis it becomes, in [0, extent)
  Extent chunk = 1;       ///< the tile's extent along this axis (1 = not a tile axis)

  Extent tile_count() const { return (extent + chunk - 1) / chunk; }
  /// The output coordinate of input coordinate i (0 <= i < extent): ((flip ? extent−1−i : i) + roll) mod extent.
  Extent image(Extent i) const {
    const Extent g = (flip ? extent - 1 - i : i) + roll;
    return g >= extent ? g - extent : g;
  }
  friend bool operator==(const DigitAxis&, const DigitAxis&) = default;
};

/// The knobs of the digit planner; 0 = the tuned default (plan/tuning.hpp).
struct DigitPolicy {
  int run_bytes = 0;         ///< the run length each side should reach
  int tile_bytes = 0;        ///< the tile size to aim for (the tile grows along the read runs up to it)
  int max_tile_bytes = 0;    ///< the shared memory a tile may take
  int threads_per_block = 0;
  /// The widest element a preserved innermost axis may be folded into (the alignment the pointers have);
  /// 0 = 16 bytes.
  int max_elem_bytes = 0;
  /// The most elements one global access may move (1 = scalar accesses, what the generic kernel does); 0 = 16 B.
  int max_vector_elems = 0;
  /// The widest global access in bytes (the alignment the pointers have: vectors never exceed it); 0 = 16.
  int max_access_bytes = 0;
  /// Blocks per multiprocessor the JIT kernel's registers must allow (its __launch_bounds__); 0 = the
  /// compiler's choice. The precompiled generic kernel ignores it.
  int min_blocks = 0;
  /// Covering vectors (DigitPlan::read_cover, write_cover) where a run is too odd for aligned vectors: 0 = reads
  /// whose rows are long enough to pay (plan/tuning.hpp), writes never; 1 = both sides wherever the vector would
  /// be wider; −1 = never.
  int cover = 0;
  /// The read skew (DigitPlan::read_skew_step): 0 = where the planner's rule takes one, −1 = never.
  int read_skew = 0;

  friend bool operator==(const DigitPolicy&, const DigitPolicy&) = default;
};

struct DigitPlan {
  DigitMap map;                 ///< what the caller asked for (its shape and element size below)
  int caller_elem_bytes = 4;
  int elem_bytes = 4;           ///< the element the plan moves (1, 2, 4, 8 or 16 bytes)
  std::vector<DigitAxis> axes;  ///< the canonical axes the plan moves, input order
  std::vector<int> read_order;  ///< tile axes (chunk > 1), outermost first, innermost input axis last
  std::vector<int> write_order; ///< the same axes in output order, innermost output axis last
  std::vector<Extent> smem_stride;  ///< per write_order entry: the slot stride (before padding)
  Extent pad_period = 0;        ///< a pad every this many slots (0 = none)
  int pad = 0;                  ///< elements per pad
  int threads_per_block = 256;
  int min_blocks = 0;           ///< the policy's min_blocks (the JIT kernel's __launch_bounds__)
  /// Elements a lane reads (writes) in one access: tile elements e .. e+v−1 (v | e, in read or write order) are
  /// consecutive aligned elements of the input (output), all valid or all predicated off. 1 = scalar accesses.
  int read_vector = 1;
  int write_vector = 1;
  /// The read phase's lane skew, where a read vector's elements go to shared memory one by one: lane l of a warp
  /// stores them in the order j = (q + ρ) mod read_vector, q = 0, 1, …, with ρ = ((l >> read_skew_shift) ·
  /// read_skew_step) mod read_vector, so that the lanes of one store fall on distinct banks (a vector's elements
  /// are read_vector cols apart in every lane). read_skew_step 0 = no skew. Only for vectors of at least 4 bytes
  /// stored element by element (DigitTileView::vector_slots_r == 0). It orders stores only: any skew moves the
  /// same elements to the same slots.
  int read_skew_shift = 0;
  int read_skew_step = 0;
  /// The read vectors cover each read row instead of dividing it: lane unit j of a row whose first element is input
  /// element b loads the aligned vector at b − (b mod read_vector) + j · read_vector and stores the elements that
  /// fall inside the row (elements of one access past the array's end are loaded one by one). read_vector then need
  /// not divide the run, its extents or the tile; the vectors go to shared memory element by element.
  bool read_cover = false;
  /// The write vectors cover each write row (no write run axis rolled): lane unit j of a row whose col 0 is output
  /// element b moves the aligned vector at b − (b mod write_vector) + j · write_vector, loading its valid cols from
  /// shared memory one by one; a vector wholly inside the row's valid cols is stored whole, any other element by
  /// element. write_vector then need not divide the run, its extents or the tile.
  bool write_cover = false;

  Extent elements() const;      ///< in plan elements
  Extent tile_elements() const; ///< Π chunk
  Extent tiles() const;         ///< Π tile_count
  Extent smem_elements() const; ///< slots including pads
  std::size_t smem_bytes() const { return static_cast<std::size_t>(smem_elements()) * elem_bytes; }
  /// True when the map moves nothing (then executors copy, or do nothing in place).
  bool is_copy() const;

  friend bool operator==(const DigitPlan&, const DigitPlan&) = default;
};

/// Plans `map` for elements of `elem_bytes` bytes (1 to 1 << 20). Pure; throws std::invalid_argument for an
/// element size out of range, an array of more than 2^62 bytes, or a tile limit smaller than one element.
DigitPlan plan_digits(const DigitMap& map, int elem_bytes, const DigitPolicy& policy = {},
                      const DeviceCaps& caps = default_caps());

/// A multi-line description (what `bmmc plan` prints).
std::string to_string(const DigitPlan& plan);
/// The same as one JSON object (no dependency on a JSON library: the text is assembled here).
std::string to_json(const DigitPlan& plan);

}  // namespace bmmc
