// The two-matrix view of digit plans (bmmc/plan/digit_tile_view.hpp) and the device code that executes it
// (src/codegen/digit_tile.cuh), run here on the host: one thread per block, blocks one after another, which visits
// every unit the kernel's lanes would. Checked against the map's own definition over random shapes, maps, element
// sizes, vectors and tile policies, and against the plan's formulas (the checker) for the slot convention.
#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <random>
#include <vector>

#include "bmmc/plan/digit_plan.hpp"
#include "bmmc/plan/digit_plan_check.hpp"
#include "bmmc/plan/digit_tile_view.hpp"
#include "digit_map_support.hpp"

// The device file on the host: blocks one at a time, each of one thread or of several threads that take turns in
// a fixed order between barriers (host_cuda::Lanes), so a read of another lane's write that lacks a barrier
// reads a stale value in every run.
namespace host_cuda {
struct Dim {
  unsigned x = 0;
};
// One lane runs at a time, in `order` within each phase between barriers; a barrier or the lane's end passes
// the turn on.
struct Lanes {
  std::mutex m;
  std::condition_variable cv;
  std::vector<unsigned> order;
  std::size_t turn = 0;
  void wait_turn(unsigned lane) {
    std::unique_lock<std::mutex> l(m);
    cv.wait(l, [&] { return order[turn] == lane; });
  }
  void pass() {
    {
      std::lock_guard<std::mutex> l(m);
      turn = (turn + 1) % order.size();
    }
    cv.notify_all();
  }
};
inline thread_local Lanes* lanes = nullptr;
}  // namespace host_cuda
static thread_local host_cuda::Dim threadIdx;
static host_cuda::Dim blockIdx, gridDim{1};
static void host_syncthreads() {
  if (host_cuda::lanes == nullptr) return;
  host_cuda::lanes->pass();
  host_cuda::lanes->wait_turn(threadIdx.x);
}
// Aligned as CUDA's are, so that a misaligned vector access is undefined behaviour UBSan reports (sanitizer build).
struct alignas(8) uint2 {
  unsigned x, y;
};
struct alignas(16) uint4 {
  unsigned x, y, z, w;
};
#define __device__
#define __host__
#define __forceinline__ inline
#define __syncthreads() host_syncthreads()
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunknown-pragmas"
#include "../../src/codegen/digit_tile.cuh"
#pragma GCC diagnostic pop

namespace bmmc {
namespace {

struct HostGeometry {
  std::vector<DigitTileAxis> axes;
  std::vector<int> run_r_, row_r_, run_w_, row_w_;
  std::vector<long long> suffix;
  int k = 0, threads = 1, elem_bytes = 1, nrun_r = 0, nrows_r = 0, nrun_w = 0, nrows_w = 0;
  int cols_r = 1, row_count_r = 1, cols_w = 1, row_count_w = 1, cu_r = 1, cu_w = 1;
  long long tiles = 1, smem_slots = 1, elements = 1;
  bool col_table_r = false, rows_fixed = true, roll_run_w = false, vector_slots_w = false, read_cover = false,
       write_cover = false;
  int col_pad_period = 0, pad = 0, vector_slots_r = 0, skew_shift = 0, skew_step = 0;

  DigitTileAxis axis(int a) const { return axes[static_cast<std::size_t>(a)]; }
  // at(): the device code never reads past a list (the JIT's empty list is {0}, which it must not use either).
  int run_r(int j) const { return run_r_.at(static_cast<std::size_t>(j)); }
  int row_r(int j) const { return row_r_.at(static_cast<std::size_t>(j)); }
  int run_w(int j) const { return run_w_.at(static_cast<std::size_t>(j)); }
  int row_w(int j) const { return row_w_.at(static_cast<std::size_t>(j)); }
  int div_units_r(int u) const { return u / cu_r; }
  int div_units_w(int u) const { return u / cu_w; }
  long long tile_coord(long long t, int a) const { return t / suffix[static_cast<std::size_t>(a)] % axes[static_cast<std::size_t>(a)].tile_count; }
};

HostGeometry geometry(const DigitPlan& p, const DigitTileView& v, bool col_table) {
  HostGeometry g;
  g.k = static_cast<int>(p.axes.size());
  g.elem_bytes = p.elem_bytes;
  g.suffix.assign(p.axes.size(), 1);
  long long suffix = 1;
  g.axes.resize(p.axes.size());
  for (int a = g.k - 1; a >= 0; --a) {
    const DigitAxis& x = p.axes[a];
    g.axes[a] = DigitTileAxis{x.extent, x.in_stride, x.out_stride, x.roll, x.chunk, x.tile_count(), v.slot_stride[a],
                              x.flip ? 1 : 0};
    g.suffix[a] = suffix;
    suffix *= x.tile_count();
  }
  g.run_r_ = v.run_r, g.row_r_ = v.rows_r, g.run_w_ = v.run_w, g.row_w_ = v.rows_w;
  g.nrun_r = static_cast<int>(v.run_r.size()), g.nrows_r = static_cast<int>(v.rows_r.size());
  g.nrun_w = static_cast<int>(v.run_w.size()), g.nrows_w = static_cast<int>(v.rows_w.size());
  g.cols_r = static_cast<int>(v.cols_r), g.row_count_r = static_cast<int>(v.row_count_r);
  g.cols_w = static_cast<int>(v.cols_w), g.row_count_w = static_cast<int>(v.row_count_w);
  g.cu_r = static_cast<int>(v.units_r), g.cu_w = static_cast<int>(v.units_w);
  g.read_cover = p.read_cover, g.write_cover = p.write_cover, g.elements = p.elements();
  g.tiles = p.tiles(), g.smem_slots = p.smem_elements();
  g.col_table_r = col_table, g.rows_fixed = v.rows_fixed;
  g.roll_run_w = v.roll_run_w;
  g.col_pad_period = static_cast<int>(v.col_pad_period), g.pad = v.pad;
  g.vector_slots_r = v.vector_slots_r, g.vector_slots_w = v.vector_slots_w;
  g.skew_shift = p.read_skew_shift, g.skew_step = p.read_skew_step;
  return g;
}

// How the host runs the device code: `threads` lanes per block (1: the calling thread alone), `blocks` blocks one
// after another, lanes taking turns in ascending order or with lane 0 last.
struct Launch {
  int threads = 1, blocks = 1;
  bool lane0_last = false;
};
thread_local Launch g_launch;

template <int E, int VR, int VW>
void pass(const DigitPlan& p, const DigitTileView& v, bool col_table, const unsigned char* in, unsigned char* out) {
  HostGeometry g = geometry(p, v, col_table);
  const Launch launch = g_launch;
  g.threads = launch.threads;
  gridDim.x = static_cast<unsigned>(std::min<Extent>(launch.blocks, p.tiles()));
  for (unsigned b = 0; b < gridDim.x; ++b) {
    std::vector<unsigned char> smem(digit_kernel_smem_bytes(p, v, 8, col_table) + 16, 0xCD);
    unsigned char* base = smem.data() + (16 - reinterpret_cast<std::uintptr_t>(smem.data()) % 16) % 16;
    blockIdx.x = b;
    if (launch.threads == 1) {
      threadIdx.x = 0;
      digit_tile_pass<HostGeometry, E, VR, VW, long long>(g, in, out, base);
      continue;
    }
    host_cuda::Lanes lanes;
    for (int t = 0; t < launch.threads; ++t) lanes.order.push_back(static_cast<unsigned>(t));
    if (launch.lane0_last) std::rotate(lanes.order.begin(), lanes.order.begin() + 1, lanes.order.end());
    std::vector<std::thread> pool;
    for (int t = 0; t < launch.threads; ++t)
      pool.emplace_back([&, t] {
        threadIdx.x = static_cast<unsigned>(t);
        host_cuda::lanes = &lanes;
        lanes.wait_turn(threadIdx.x);
        digit_tile_pass<HostGeometry, E, VR, VW, long long>(g, in, out, base);
        lanes.pass();
      });
    for (auto& th : pool) th.join();
  }
}

template <int E, int VR>
void with_write_vector(const DigitPlan& p, const DigitTileView& v, bool t, const unsigned char* in, unsigned char* out) {
  switch (p.write_vector) {
    case 1: return pass<E, VR, 1>(p, v, t, in, out);
    case 2: if constexpr (E * 2 <= 16) return pass<E, VR, 2>(p, v, t, in, out); break;
    case 4: if constexpr (E * 4 <= 16) return pass<E, VR, 4>(p, v, t, in, out); break;
    case 8: if constexpr (E * 8 <= 16) return pass<E, VR, 8>(p, v, t, in, out); break;
    case 16: if constexpr (E * 16 <= 16) return pass<E, VR, 16>(p, v, t, in, out); break;
  }
  FAIL() << "write vector " << p.write_vector;
}

template <int E>
void with_vectors(const DigitPlan& p, const DigitTileView& v, bool t, const unsigned char* in, unsigned char* out) {
  switch (p.read_vector) {
    case 1: return with_write_vector<E, 1>(p, v, t, in, out);
    case 2: if constexpr (E * 2 <= 16) return with_write_vector<E, 2>(p, v, t, in, out); break;
    case 4: if constexpr (E * 4 <= 16) return with_write_vector<E, 4>(p, v, t, in, out); break;
    case 8: if constexpr (E * 8 <= 16) return with_write_vector<E, 8>(p, v, t, in, out); break;
    case 16: if constexpr (E * 16 <= 16) return with_write_vector<E, 16>(p, v, t, in, out); break;
  }
  FAIL() << "read vector " << p.read_vector;
}

// Runs the device code of `p` on the host (the caller's bytes; the plan may fold or split elements).
std::vector<unsigned char> run_tile_pass(const DigitPlan& p, const std::vector<unsigned char>& in, bool col_table) {
  const DigitTileView v = tile_view(p);
  std::vector<unsigned char> out(in.size(), 0xEE);
  if (p.axes.empty()) return in;
  switch (p.elem_bytes) {
    case 1: with_vectors<1>(p, v, col_table, in.data(), out.data()); break;
    case 2: with_vectors<2>(p, v, col_table, in.data(), out.data()); break;
    case 4: with_vectors<4>(p, v, col_table, in.data(), out.data()); break;
    case 8: with_vectors<8>(p, v, col_table, in.data(), out.data()); break;
    case 16: with_vectors<16>(p, v, col_table, in.data(), out.data()); break;
    default: ADD_FAILURE() << "element " << p.elem_bytes;
  }
  return out;
}

std::vector<unsigned char> random_bytes(std::mt19937_64& rng, std::size_t n) {
  std::vector<unsigned char> v(n);
  for (auto& b : v) b = static_cast<unsigned char>(rng());
  return v;
}

TEST(DigitTileView, TheDeviceCodeMovesEveryRandomMapRight) {
  std::mt19937_64 rng(20261202);
  int checked = 0, up = 0, down = 0, whole_writes = 0, covered = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const DigitMap m = test::random_digit_map(rng, 6, 40, 1 << 14, 3);
    const int eb = std::vector<int>{1, 2, 3, 4, 8, 12, 16}[trial % 7];
    DigitPolicy policy;
    if (trial % 3 == 1) policy.run_bytes = 32, policy.tile_bytes = 512;   // small tiles: many edge tiles
    if (trial % 3 == 2) policy.max_access_bytes = 4;
    const DigitPlan p = plan_digits(m, eb, policy);
    const DigitTileView v = tile_view(p);
    up += v.vector_slots_r > 0, down += v.vector_slots_r < 0, whole_writes += v.vector_slots_w;
    covered += p.read_cover;
    const auto in = random_bytes(rng, static_cast<std::size_t>(m.size()) * eb);
    const auto want = test::digit_reference(m, in, eb);
    for (bool col_table : {false, true}) {
      const auto got = run_tile_pass(p, in, col_table);
      ASSERT_EQ(got, want) << m.to_string() << " of shape " << shape_to_string(m.shape()) << ", " << eb
                           << "-byte elements, col table " << col_table << "\n" << to_string(p);
    }
    ++checked;
  }
  EXPECT_EQ(checked, 400);
  // Every shared-memory path ran: vectors stored ascending, reversed, and loaded whole.
  EXPECT_GT(up, 0);
  EXPECT_GT(down, 0);
  EXPECT_GT(whole_writes, 0);
  EXPECT_GT(covered, 0);
}

TEST(DigitTileView, CoveringVectorsMoveEveryMapRight) {
  // Vectors that cover each row (DigitPlan::read_cover, write_cover), forced wherever they are wider: rows that
  // start anywhere inside a vector, edge tiles (flipped ones too) that end inside one, arrays that end inside one
  // (the last read vector is loaded element by element: the input here is exactly the array, so a load past it is
  // a heap overflow under ASan; a write vector not wholly inside its row is stored element by element, or a
  // neighbour's element comes out wrong), with and without a forced read skew, one lane and several taking turns.
  std::mt19937_64 rng(20261203);
  int covered = 0, skewed = 0, ragged_end = 0, read_covered = 0, write_covered = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const DigitMap m = test::random_digit_map(rng, 5, 40, 1 << 13, 3);
    const int eb = std::vector<int>{1, 2, 4, 8, 3}[trial % 5];
    DigitPolicy policy;
    policy.cover = 1;
    if (trial % 2 == 1) policy.run_bytes = 32, policy.tile_bytes = 512;  // edge tiles on every side
    DigitPlan p = plan_digits(m, eb, policy);
    if (!p.read_cover && !p.write_cover) continue;
    read_covered += p.read_cover, write_covered += p.write_cover;
    const auto r = check_digit_plan(p);
    ASSERT_TRUE(r.ok) << r.error << "\n" << to_string(p);
    if (trial % 3 == 0 && p.read_cover && read_skew_possible(p, tile_view(p))) {
      p.read_skew_shift = trial % 5;
      p.read_skew_step = 1 + static_cast<int>(rng() % static_cast<unsigned>(p.read_vector - 1));
      ++skewed;
    }
    ragged_end += p.elements() % p.read_vector != 0;
    const auto in = random_bytes(rng, static_cast<std::size_t>(m.size()) * eb);
    const auto want = test::digit_reference(m, in, eb);
    g_launch = trial % 4 == 3 ? Launch{3, 2, trial % 8 == 7} : Launch{};
    const auto got = run_tile_pass(p, in, trial % 2 == 0);
    g_launch = Launch{};
    ASSERT_EQ(got, want) << m.to_string() << " of shape " << shape_to_string(m.shape()) << ", " << eb
                         << "-byte elements\n" << to_string(p);
    ++covered;
  }
  EXPECT_GE(covered, 150);
  EXPECT_GE(read_covered, 80);
  EXPECT_GE(write_covered, 80);
  EXPECT_GT(skewed, 20);
  EXPECT_GT(ragged_end, 20);
}

TEST(DigitTileView, TinyTilesMoveEveryRandomMapRight) {
  // Tile limits of a few elements: the shrink can leave a side's innermost axis out of the tile (an empty run).
  std::mt19937_64 rng(46);
  int empty_runs = 0;
  for (int trial = 0; trial < 600; ++trial) {
    const DigitMap m = test::random_digit_map(rng, 4, 12, 1 << 10, 1 + trial % 2);
    const int eb = std::vector<int>{1, 2, 4, 8}[trial % 4];
    DigitPolicy policy;
    policy.max_elem_bytes = eb;  // no folding: the tile limit stays a few elements
    policy.max_tile_bytes = eb * static_cast<int>(2 + trial % 5);
    const DigitPlan p = plan_digits(m, eb, policy);
    const DigitTileView v = tile_view(p);
    empty_runs += !p.read_order.empty() && (v.run_r.empty() || v.run_w.empty());
    const auto in = random_bytes(rng, static_cast<std::size_t>(m.size()) * eb);
    const auto want = test::digit_reference(m, in, eb);
    const auto got = run_tile_pass(p, in, false);
    ASSERT_EQ(got, want) << m.to_string() << " of shape " << shape_to_string(m.shape()) << ", " << eb
                         << "-byte elements\n" << to_string(p);
  }
  EXPECT_GT(empty_runs, 0);
}

TEST(DigitTileView, AnEmptyWriteRunBesideAFlippedEdgeAxis) {
  // (5, 3, 4) → axes (0, 2, 1), output axis 0 flipped; a plan whose innermost output axis (input axis 1) is not
  // a tile axis, so the write run is empty, while axis 0 is a flipped tile axis with an edge tile (5 = 2 + 2 + 1).
  const DigitMap m({5, 3, 4}, {0, 2, 1}, {1, 0, 0}, {0, 0, 0});
  DigitPlan p = plan_digits(m, 4);
  ASSERT_EQ(p.axes.size(), 3u);
  p.axes[0].chunk = 2, p.axes[1].chunk = 1, p.axes[2].chunk = 4;
  p.read_order = {0, 2}, p.write_order = {0, 2}, p.smem_stride = {4, 1};
  p.pad_period = 0, p.pad = 0, p.read_vector = 1, p.write_vector = 1;
  const auto r = check_digit_plan(p);
  ASSERT_TRUE(r.ok) << r.error;
  const DigitTileView v = tile_view(p);
  EXPECT_TRUE(v.run_w.empty());
  std::mt19937_64 rng(5);
  const auto in = random_bytes(rng, static_cast<std::size_t>(m.size()) * 4);
  for (bool col_table : {false, true}) EXPECT_EQ(run_tile_pass(p, in, col_table), test::digit_reference(m, in, 4));
}

TEST(DigitTileView, LanesThatTakeTurnsBetweenBarriersMoveEveryMapRight) {
  // Several lanes and blocks that walk several tiles (both table sets): a lane that reads what another writes in
  // the same phase sees the old value, whichever lane runs first.
  std::mt19937_64 rng(3046);
  for (int trial = 0; trial < 60; ++trial) {
    const DigitMap m = test::random_digit_map(rng, 5, 30, 1 << 12, 2);
    const int eb = std::vector<int>{1, 2, 4, 8, 16, 3}[trial % 6];
    DigitPolicy policy;
    policy.run_bytes = 16, policy.tile_bytes = 256;  // many tiles, edge tiles on every side
    const DigitPlan p = plan_digits(m, eb, policy);
    const auto in = random_bytes(rng, static_cast<std::size_t>(m.size()) * eb);
    const auto want = test::digit_reference(m, in, eb);
    for (bool lane0_last : {false, true}) {
      g_launch = Launch{trial % 2 ? 3 : 5, 1 + trial % 3, lane0_last};
      const auto got = run_tile_pass(p, in, trial % 2 == 0);
      g_launch = Launch{};
      ASSERT_EQ(got, want) << m.to_string() << " of shape " << shape_to_string(m.shape()) << ", " << eb
                           << "-byte elements, lane 0 last " << lane0_last << "\n" << to_string(p);
    }
  }
}

template <int E, int VR>
void check_rotate() {
  typedef typename DigitBytes<E * VR>::T TR;
  for (int rho = 0; rho < VR; ++rho) {
    unsigned char in[E * VR], got[E * VR];
    for (int i = 0; i < E * VR; ++i) in[i] = static_cast<unsigned char>(17 * i + 3);
    TR v;
    std::memcpy(&v, in, sizeof v);
    const TR r = digit_rotate<TR, E, VR>(v, rho);
    std::memcpy(got, &r, sizeof r);
    for (int q = 0; q < VR; ++q)  // element q of the result is element (q + rho) mod VR
      for (int b = 0; b < E; ++b)
        ASSERT_EQ(got[q * E + b], in[((q + rho) % VR) * E + b]) << "E " << E << " VR " << VR << " rho " << rho;
  }
}

TEST(DigitTileView, TheVectorRotationOfEveryWidth) {
  // Every (element, vector) the kernel skews (E · VR of 4 to 16 bytes), every rotation.
  check_rotate<1, 4>(), check_rotate<1, 8>(), check_rotate<1, 16>();
  check_rotate<2, 2>(), check_rotate<2, 4>(), check_rotate<2, 8>();
  check_rotate<4, 2>(), check_rotate<4, 4>(), check_rotate<8, 2>();
}

TEST(DigitTileView, EveryReadSkewMovesEveryMapRight) {
  // The read skew orders shared stores only: forced on plans whose read vectors go to shared memory element by
  // element, every skew must give the map's result, with lanes of distinct rotations in one block.
  std::mt19937_64 rng(4646);
  int skewed = 0;
  for (int trial = 0; trial < 300 && skewed < 60; ++trial) {
    const DigitMap m = test::random_digit_map(rng, 5, 40, 1 << 13, 2);
    const int eb = std::vector<int>{1, 2, 4, 8}[trial % 4];
    DigitPolicy policy;
    policy.run_bytes = 64, policy.tile_bytes = 1024;
    DigitPlan p = plan_digits(m, eb, policy);
    if (p.read_vector < 2 || p.read_vector * p.elem_bytes < 4 || tile_view(p).vector_slots_r != 0) continue;
    p.read_skew_shift = trial % 2;
    p.read_skew_step = 1 + static_cast<int>(rng() % static_cast<unsigned>(p.read_vector - 1));
    ASSERT_TRUE(check_digit_plan(p).ok);
    const auto in = random_bytes(rng, static_cast<std::size_t>(m.size()) * eb);
    g_launch = Launch{5, 2, false};
    const auto got = run_tile_pass(p, in, trial % 3 == 0);
    g_launch = Launch{};
    ASSERT_EQ(got, test::digit_reference(m, in, eb)) << m.to_string() << " of shape " << shape_to_string(m.shape())
                                                     << ", " << eb << "-byte elements\n" << to_string(p);
    ++skewed;
  }
  EXPECT_GE(skewed, 60);
}

TEST(DigitTileView, TheReadSkewTakesByteTransposesOffBankConflicts) {
  // A uint8 transpose of odd extents reads 16-byte vectors whose bytes go to shared memory one by one, 16 cols
  // apart in every lane: unskewed, the lanes of one store share banks four ways whatever the pad. The planner
  // picks a skew (and pad) that leaves none; the HWC → CHW image transpose, whose 3 channels interleave, two.
  for (auto [shape, axes] : {std::pair{std::vector<Extent>{1000, 4112}, std::vector<int>{1, 0}},
                             std::pair{std::vector<Extent>{4, 720, 1280, 3}, std::vector<int>{0, 3, 1, 2}}}) {
    const DigitMap m(shape, axes, std::vector<std::uint8_t>(shape.size(), 0), std::vector<Extent>(shape.size(), 0));
    DigitPlan p = plan_digits(m, 1);
    ASSERT_EQ(p.read_vector, 16) << to_string(p);
    const DigitTileView v = tile_view(p);
    const int ways = digit_bank_ways(p, v, false);
    EXPECT_LE(ways, shape.size() == 2 ? 1 : 2) << to_string(p);
    EXPECT_EQ(digit_bank_ways(p, v, true), 1) << to_string(p);
    // No unskewed plan (any pad) does as well for the transpose.
    EXPECT_EQ(v.vector_slots_r, 0);
    if (shape.size() == 2)  // (the pad period of a 2-D transpose: the slot stride of its outer write axis)
      for (int pad : {0, 1, 2, 3, 4, 5, 7, 8}) {
        DigitPlan q = p;
        q.read_skew_step = 0, q.pad = pad, q.pad_period = pad > 0 ? q.smem_stride[0] : 0;
        EXPECT_GT(digit_bank_ways(q, tile_view(q), false), ways) << "unskewed, pad " << pad << "\n" << to_string(q);
      }
  }
  // Two ways are left as they are (a skew costs more than it saves there, measured on the H200: BENCHMARKS.md,
  // "Any shape"): the float32 (2, 0, 1) of an innermost extent 2.
  const DigitMap m({2000, 335, 2}, {2, 0, 1}, {0, 0, 0}, {0, 0, 0});
  const DigitPlan p = plan_digits(m, 4);
  EXPECT_EQ(p.read_vector, 4) << to_string(p);
  EXPECT_EQ(p.read_skew_step, 0) << to_string(p);
  EXPECT_EQ(digit_bank_ways(p, tile_view(p), false), 2) << to_string(p);
}

TEST(DigitTileView, WorkedExampleReverseOfExtentThree) {
  // (3,)^8 reversed, 4-byte elements, runs of 9 elements: the tile is 81 elements, a 9 × 9 matrix each way.
  const DigitMap m(std::vector<Extent>(8, 3), {7, 6, 5, 4, 3, 2, 1, 0}, std::vector<std::uint8_t>(8, 0),
                   std::vector<Extent>(8, 0));
  DigitPolicy policy;
  policy.run_bytes = 36, policy.tile_bytes = 324;
  const DigitPlan p = plan_digits(m, 4, policy);
  const DigitTileView v = tile_view(p);
  EXPECT_EQ(v.run_r, (std::vector<int>{6, 7}));  // the innermost input axes
  EXPECT_EQ(v.run_w, (std::vector<int>{1, 0}));  // input axes 0 and 1 are the innermost output axes
  EXPECT_EQ(v.rows_r, (std::vector<int>{0, 1}));
  EXPECT_EQ(v.rows_w, (std::vector<int>{7, 6}));
  EXPECT_EQ(v.cols_r, 9);
  EXPECT_EQ(v.cols_w, 9);
  EXPECT_TRUE(v.rows_fixed);
  EXPECT_EQ(v.cols_r * v.row_count_r, p.tile_elements());
  EXPECT_EQ(v.cols_w * v.row_count_w, p.tile_elements());
}

TEST(DigitTileView, TheCheckerAcceptsTheSlotsOfFlippedEdgeTiles) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 100; ++trial) {
    const DigitMap m = test::random_digit_map(rng, 4, 30, 1 << 12, 2);
    DigitPolicy policy;
    policy.run_bytes = 16, policy.tile_bytes = 256;
    const DigitPlan p = plan_digits(m, 4, policy);
    const auto r = check_digit_plan(p);
    ASSERT_TRUE(r.ok) << r.error << "\n" << to_string(p);
  }
}

}  // namespace
}  // namespace bmmc
