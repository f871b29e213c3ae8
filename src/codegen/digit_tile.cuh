// The tile pass of a digit plan as one device function, compiled twice: by NVRTC inside each JIT kernel (with a
// geometry of compile-time constants, codegen/digit_source.cpp) and by nvcc in the precompiled generic kernel
// (with the same geometry read from a parameter block, cuda/digit_generic.cu). It executes the two-matrix view of
// plan/digit_tile_view.hpp: per tile, thread 0 finds the origin; per-row tables in shared memory hold each row's
// input offset, output offset and slot (built once per block when every tile has the same rows); a lane then moves
// a vector of VR (VW) elements at input (output) offset row_offset + col. This file is plain CUDA C++ with no
// includes (NVRTC compiles it as text), and it is embedded in the library as a string at build time.
//
// The geometry G provides (as constants or fields; the same names either way):
//   k, threads, tiles, vol, smem_slots: axes, threads per block, tiles, tile elements, tile slots with pads;
//   elements: the array's (plan) elements;
//   axis(a) -> DigitTileAxis; nrun_r, run_r(j), nrows_r, row_r(j), cols_r, row_count_r (and _w for the write side);
//   cu_r, cu_w: lane units per row (DigitTileView::units_r, units_w); read_cover, write_cover: the vectors of that
//   side cover each row (plan/digit_plan.hpp);
//   col_table_r: slot of a read col from a table (else by arithmetic over run_r); col_pad_period, pad;
//   rows_fixed: row tables built once per block; roll_run_w: a write-run axis has a roll;
//   vector_slots_r (1, −1 or 0), vector_slots_w: vectors move to and from shared memory whole (digit_tile_view.hpp);
//   skew_shift, skew_step: the plan's read skew (lane l stores its read vector's elements from ρ = ((l >> shift) ·
//   step) mod VR on; step 0 = none); div_units_r(u) = u / cu_r, div_units_w(u) = u / cu_w;
//   tile_coord(t, a): the tile index's coordinate on axis a.
#ifndef BMMC_DIGIT_TILE_CUH
#define BMMC_DIGIT_TILE_CUH

struct DigitTileAxis {
  long long extent, in_stride, out_stride, roll, chunk, tile_count, slot_stride;
  int flip;
};

template <int B> struct DigitBytes;
template <> struct DigitBytes<1> { typedef unsigned char T; };
template <> struct DigitBytes<2> { typedef unsigned short T; };
template <> struct DigitBytes<4> { typedef unsigned int T; };
template <> struct DigitBytes<8> { typedef uint2 T; };
template <> struct DigitBytes<16> { typedef uint4 T; };

// Per-tile facts thread 0 computes for the block.
struct DigitTileInfo {
  long long in_base, out_base;
  int colmax_r, lo_w, hi_w;
};

__host__ __device__ inline long long digit_align16(long long b) { return (b + 15) / 16 * 16; }

// The vector v rotated by rho elements of E bytes: element q of the result is element (q + rho) mod VR of v
// (little-endian words: a word rotation, then a shift across neighbouring words); only for E · VR ≥ 4 bytes.
template <class TR, int E, int VR>
__device__ __forceinline__ TR digit_rotate(TR v, int rho) {
  const int nw = E * VR / 4 > 0 ? E * VR / 4 : 1;
  union U { TR v; unsigned w[E * VR / 4 > 0 ? E * VR / 4 : 1]; } a, r;
  a.v = v;
  const int bytes = rho * E, wr = bytes >> 2, sh = (bytes & 3) * 8;
  unsigned x[E * VR / 4 > 0 ? E * VR / 4 : 1];
#pragma unroll
  for (int i = 0; i < nw; ++i) {
    unsigned s = a.w[i];
#pragma unroll
    for (int k = 1; k < nw; ++k)
      if (wr == k) s = a.w[(i + k) % nw];
    x[i] = s;
  }
#pragma unroll
  for (int i = 0; i < nw; ++i) r.w[i] = sh == 0 ? x[i] : (x[i] >> sh) | (x[(i + 1) % nw] << (32 - sh));
  return r.v;
}

// One of the two table sets (tile t uses set t's parity, so thread 0 can fill the next tile's set while the block
// moves the current one): per-row tables, per-axis ce and wrap thresholds, and the tile record.
template <class Off>
struct DigitTables {
  Off* in_row;
  Off* out_row;
  int* slot_row_r;
  int* slot_row_w;
  int* ce;
  long long* thr;
  DigitTileInfo* info;
};

// The smem layout after the tile's slots: two table sets, then the read col table (plan/digit_tile_view.hpp's
// digit_kernel_smem_bytes adds up the same sizes on the host).
template <class Off, class G>
__device__ __forceinline__ DigitTables<Off> digit_tables(const G& g, unsigned char* smem, int set, int** col_r) {
  unsigned char* p = smem + digit_align16((long long)g.smem_slots * g.elem_bytes);
  const long long set_bytes = digit_align16((long long)g.row_count_r * sizeof(Off)) +
                              digit_align16((long long)g.row_count_w * sizeof(Off)) +
                              digit_align16((long long)g.row_count_r * 4) + digit_align16((long long)g.row_count_w * 4) +
                              digit_align16((long long)g.k * 4) + digit_align16((long long)g.k * 8) + 32;
  *col_r = reinterpret_cast<int*>(p + 2 * set_bytes);
  p += set * set_bytes;
  DigitTables<Off> t;
  t.in_row = reinterpret_cast<Off*>(p);
  p += digit_align16((long long)g.row_count_r * sizeof(Off));
  t.out_row = reinterpret_cast<Off*>(p);
  p += digit_align16((long long)g.row_count_w * sizeof(Off));
  t.slot_row_r = reinterpret_cast<int*>(p);
  p += digit_align16((long long)g.row_count_r * 4);
  t.slot_row_w = reinterpret_cast<int*>(p);
  p += digit_align16((long long)g.row_count_w * 4);
  t.ce = reinterpret_cast<int*>(p);
  p += digit_align16((long long)g.k * 4);
  t.thr = reinterpret_cast<long long*>(p);
  p += digit_align16((long long)g.k * 8);
  t.info = reinterpret_cast<DigitTileInfo*>(p);
  return t;
}

// The slot of read col c: Σ over the read run of s_a · slot_stride_a, s_a = flip ? chunk − 1 − l_a : l_a.
template <class G>
__device__ __forceinline__ int digit_col_slot_r(const G& g, int c) {
  int slot = 0;
#pragma unroll
  for (int j = g.nrun_r - 1; j >= 0; --j) {
    const DigitTileAxis ax = g.axis(g.run_r(j));
    const int ch = (int)ax.chunk;
    const int l = j == 0 ? c : c % ch;
    if (j != 0) c /= ch;
    slot += (ax.flip ? ch - 1 - l : l) * (int)ax.slot_stride;
  }
  return slot;
}

// Thread 0: the tile's origin, ce per axis, bases and the valid ranges of the runs; wrap thresholds of rolled axes.
template <class Off, class G>
__device__ __forceinline__ void digit_tile_info(const G& g, long long t, const DigitTables<Off>& tb) {
  long long in_base = 0, out_base = 0;
#pragma unroll
  for (int a = 0; a < g.k; ++a) {
    const DigitTileAxis ax = g.axis(a);
    const long long o = g.tile_coord(t, a) * ax.chunk;
    const long long ce = ax.chunk < ax.extent - o ? ax.chunk : ax.extent - o;
    tb.ce[a] = (int)ce;
    in_base += o * ax.in_stride;
    // base: the output coordinate of slot coordinate 0 before the wrap (flipped: slot s holds i = o + chunk−1−s).
    long long base = (ax.flip ? ax.extent - o - ax.chunk : o) + ax.roll;
    if (ax.chunk == 1) {
      if (base >= ax.extent) base -= ax.extent;
      out_base += base * ax.out_stride;
    } else {
      out_base += base * ax.out_stride;
      tb.thr[a] = ax.extent - base;  // slot coordinates at or above it wrap (subtract extent)
    }
  }
  DigitTileInfo& info = *tb.info;
  info.in_base = in_base;
  info.out_base = out_base;
  // An empty run (the side's innermost axis is not a tile axis) is one col, always valid.
  long long inner_r = 1;
#pragma unroll
  for (int j = 1; j < g.nrun_r; ++j) inner_r *= g.axis(g.run_r(j)).chunk;
  info.colmax_r = g.nrun_r == 0 ? 1 : (int)(tb.ce[g.run_r(0)] * inner_r);
  long long inner_w = 1;
#pragma unroll
  for (int j = 1; j < g.nrun_w; ++j) inner_w *= g.axis(g.run_w(j)).chunk;
  info.lo_w = 0;
  info.hi_w = 1;
  if (g.nrun_w > 0) {
    const DigitTileAxis ow = g.axis(g.run_w(0));
    const int cew = tb.ce[g.run_w(0)];
    info.lo_w = ow.flip ? (int)((ow.chunk - cew) * inner_w) : 0;
    info.hi_w = ow.flip ? (int)(ow.chunk * inner_w) : (int)(cew * inner_w);
  }
}

// The row tables: read rows (input offset, slot) and write rows (output offset with wraps, slot); −1 slots mark
// rows outside an edge tile.
template <class Off, class G>
__device__ __forceinline__ void digit_row_tables(const G& g, const DigitTables<Off>& tb) {
  for (int row = threadIdx.x; row < g.row_count_r; row += g.threads) {
    int rest = row, slot = 0;
    Off off = 0;
    bool ok = true;
#pragma unroll
    for (int j = g.nrows_r - 1; j >= 0; --j) {
      const int a = g.row_r(j);
      const DigitTileAxis ax = g.axis(a);
      const int ch = (int)ax.chunk;
      const int l = j == 0 ? rest : rest % ch;
      if (j != 0) rest /= ch;
      ok = ok && l < tb.ce[a];
      off += (Off)l * (Off)ax.in_stride;
      slot += (ax.flip ? ch - 1 - l : l) * (int)ax.slot_stride;
    }
    tb.in_row[row] = off;
    tb.slot_row_r[row] = ok ? slot : -1;
  }
  for (int row = threadIdx.x; row < g.row_count_w; row += g.threads) {
    int rest = row, slot = 0;
    Off off = 0;
    bool ok = true;
#pragma unroll
    for (int j = g.nrows_w - 1; j >= 0; --j) {
      const int a = g.row_w(j);
      const DigitTileAxis ax = g.axis(a);
      const int ch = (int)ax.chunk;
      const int s = j == 0 ? rest : rest % ch;
      if (j != 0) rest /= ch;
      ok = ok && (ax.flip ? s >= ch - tb.ce[a] : s < tb.ce[a]);
      off += (Off)s * (Off)ax.out_stride;
      if (ax.roll != 0 && s >= tb.thr[a]) off -= (Off)(ax.extent * ax.out_stride);
      slot += s * (int)ax.slot_stride;
    }
    tb.out_row[row] = off;
    tb.slot_row_w[row] = ok ? slot : -1;
  }
}

template <class G, int E, int VR, int VW, class Off>
__device__ __forceinline__ void digit_tile_pass(const G& g, const unsigned char* __restrict__ in_bytes,
                                                unsigned char* __restrict__ out_bytes, unsigned char* smem_raw) {
  typedef typename DigitBytes<E>::T T;
  typedef typename DigitBytes<E * VR>::T TR;
  typedef typename DigitBytes<E * VW>::T TW;
  const T* __restrict__ in = reinterpret_cast<const T*>(in_bytes);
  T* __restrict__ out = reinterpret_cast<T*>(out_bytes);
  T* smem = reinterpret_cast<T*>(smem_raw);
  int* col_r;
  const DigitTables<Off> set0 = digit_tables<Off>(g, smem_raw, 0, &col_r);
  const int cu_r = g.cu_r, cu_w = g.cu_w;
  const int units_r = (int)(g.row_count_r * cu_r);
  const int units_w = (int)(g.row_count_w * cu_w);
  const int rho = (int)((((threadIdx.x & 31) >> g.skew_shift) * g.skew_step) & (VR - 1));
  if (g.col_table_r)
    for (int c = threadIdx.x; c < g.cols_r; c += g.threads) col_r[c] = digit_col_slot_r(g, c);
  // Tile blockIdx.x's record and rows into set 0 (with rows_fixed, set 0's rows serve every tile).
  if (threadIdx.x == 0 && blockIdx.x < g.tiles) digit_tile_info<Off>(g, blockIdx.x, set0);
  __syncthreads();
  digit_row_tables<Off>(g, set0);
  __syncthreads();
  int set = 0;
  for (long long t = blockIdx.x; t < g.tiles; t += gridDim.x, set ^= 1) {
    const DigitTables<Off> cur = digit_tables<Off>(g, smem_raw, set, &col_r);
    const DigitTables<Off> next = digit_tables<Off>(g, smem_raw, set ^ 1, &col_r);
    const DigitTables<Off>& tb = g.rows_fixed ? set0 : cur;
    const DigitTileInfo info = *cur.info;
    const long long tn = t + gridDim.x;
    // Read phase: loads in batches of 64 bytes per lane (at most 16 loads) ahead of their shared stores.
    const int kBatch = 64 / (E * VR) < 1 ? 1 : (64 / (E * VR) > 16 ? 16 : 64 / (E * VR));
    for (int u0 = threadIdx.x; u0 < units_r; u0 += kBatch * g.threads) {
      TR v[kBatch];
      int sb[kBatch], cb[kBatch];
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const int u = u0 + b * g.threads;
        sb[b] = -1;
        if (u < units_r) {
          const int row = g.div_units_r(u);
          const int s = tb.slot_row_r[row];
          if (g.read_cover) {  // the aligned vector j of those covering the row: cols c0 .. c0 + VR − 1
            const long long base = info.in_base + (long long)tb.in_row[row];
            const int m = (int)(base & (VR - 1));
            const int c0 = (u - row * cu_r) * VR - m;
            if (s >= 0 && c0 < info.colmax_r) {
              sb[b] = s;
              cb[b] = c0;
              const long long a0 = base + c0;  // aligned: base − m + j · VR
              if (a0 + VR <= g.elements) {
                v[b] = *reinterpret_cast<const TR*>(in + a0);
              } else {  // the array ends inside this vector
                union { TR v; T e[VR]; } part;
                part.v = TR();
#pragma unroll
                for (int q = 0; q < VR; ++q)
                  if (a0 + q < g.elements) part.e[q] = in[a0 + q];
                v[b] = part.v;
              }
            }
          } else {
            const int c0 = (u - row * cu_r) * VR;
            if (s >= 0 && c0 < info.colmax_r) {
              sb[b] = s;
              cb[b] = c0;
              v[b] = *reinterpret_cast<const TR*>(in + (info.in_base + (long long)tb.in_row[row] + c0));
            }
          }
        }
      }
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        if (sb[b] < 0) continue;
        union { TR v; T e[VR]; } uu;
        uu.v = v[b];
        if (VR > 1 && g.vector_slots_r != 0) {  // one shared store, the elements reversed for a flipped axis
          const int s0 = sb[b] + (g.col_table_r ? col_r[cb[b]] : digit_col_slot_r(g, cb[b]));
          if (g.vector_slots_r > 0) {
            *reinterpret_cast<TR*>(smem + s0) = uu.v;
          } else {
            union { TR v; T e[VR]; } rr;
#pragma unroll
            for (int q = 0; q < VR; ++q) rr.e[q] = uu.e[VR - 1 - q];
            *reinterpret_cast<TR*>(smem + s0 - (VR - 1)) = rr.v;
          }
          continue;
        }
        if (E * VR >= 4 && VR > 1 && g.skew_step != 0) {  // skewed: lane groups start at different elements
          uu.v = digit_rotate<TR, E, VR>(uu.v, rho);
#pragma unroll
          for (int q = 0; q < VR; ++q) {
            const int c = cb[b] + ((q + rho) & (VR - 1));
            if (g.read_cover && (c < 0 || c >= info.colmax_r)) continue;
            smem[sb[b] + (g.col_table_r ? col_r[c] : digit_col_slot_r(g, c))] = uu.e[q];
          }
          continue;
        }
#pragma unroll
        for (int q = 0; q < VR; ++q) {
          const int c = cb[b] + q;
          if (g.read_cover && (c < 0 || c >= info.colmax_r)) continue;
          smem[sb[b] + (g.col_table_r ? col_r[c] : digit_col_slot_r(g, c))] = uu.e[q];
        }
      }
    }
    // The next tile's record into the other set (its last readers finished before the last barrier).
    if (threadIdx.x == 0 && tn < g.tiles) digit_tile_info<Off>(g, tn, next);
    __syncthreads();
    if (!g.rows_fixed && tn < g.tiles) digit_row_tables<Off>(g, next);
    // Write phase: each lane's vector from consecutive slots to consecutive outputs.
#pragma unroll 4
    for (int u = threadIdx.x; u < units_w; u += g.threads) {
      const int row = g.div_units_w(u);
      if (g.write_cover) {  // the aligned vector j of those covering the row's valid cols lo_w .. hi_w − 1
        const int s = tb.slot_row_w[row];
        const long long off = info.out_base + (long long)tb.out_row[row];
        const int c0 = (u - row * cu_w) * VW - (int)(off & (VW - 1));
        if (s < 0 || c0 >= info.hi_w || c0 + VW <= info.lo_w) continue;
        union { TW v; T e[VW]; } uu;
        uu.v = TW();
#pragma unroll
        for (int q = 0; q < VW; ++q) {
          const int c = c0 + q;
          if (c >= info.lo_w && c < info.hi_w)
            uu.e[q] = smem[s + (g.col_pad_period > 0 ? c + c / g.col_pad_period * g.pad : c)];
        }
        if (c0 >= info.lo_w && c0 + VW <= info.hi_w) {
          *reinterpret_cast<TW*>(out + off + c0) = uu.v;
        } else {  // the row's ends: element by element, never a neighbour's element
#pragma unroll
          for (int q = 0; q < VW; ++q)
            if (c0 + q >= info.lo_w && c0 + q < info.hi_w) out[off + c0 + q] = uu.e[q];
        }
        continue;
      }
      const int c0 = (u - row * cu_w) * VW;
      const int s = tb.slot_row_w[row];
      if (s < 0 || c0 < info.lo_w || c0 >= info.hi_w) continue;
      long long off = info.out_base + (long long)tb.out_row[row] + c0;
      if (g.roll_run_w) {
        int rest = c0;
#pragma unroll
        for (int j = g.nrun_w - 1; j >= 0; --j) {
          const DigitTileAxis ax = g.axis(g.run_w(j));
          const int ch = (int)ax.chunk;
          const int sj = j == 0 ? rest : rest % ch;
          if (j != 0) rest /= ch;
          if (ax.roll != 0 && sj >= cur.thr[g.run_w(j)]) off -= ax.extent * ax.out_stride;
        }
      }
      const int s0 = s + (int)(g.col_pad_period > 0 ? c0 + c0 / g.col_pad_period * g.pad : c0);
      if (VW > 1 && g.vector_slots_w) {
        *reinterpret_cast<TW*>(out + off) = *reinterpret_cast<const TW*>(smem + s0);
        continue;
      }
      union { TW v; T e[VW]; } uu;
#pragma unroll
      for (int q = 0; q < VW; ++q) uu.e[q] = smem[s0 + q];
      *reinterpret_cast<TW*>(out + off) = uu.v;
    }
    __syncthreads();
  }
}

#endif  // BMMC_DIGIT_TILE_CUH
