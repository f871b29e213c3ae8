// The front door: permute arrays of 2^n elements by a BMMC, out[A·x ⊕ c] = in[x], on any backend.
//
// Everything a caller needs for an array in one memory is here; the CLI, the Python module and the fuzzer are thin
// callers of it. An array split over several GPUs or ranks has its own door, bmmc/distributed.hpp
// (DistributedPermuter, with this header's StreamHandle and GpuOptions).
//  - `Permuter`: built once from a Bmmc (planned for the backend) or from a Plan (run as given), then called
//    any number of times — host pointers on the CPU, device pointers and a stream on CUDA (CUB style: no
//    hidden device-wide synchronisation).
//  - `permute(...)`: one call, backed by a bounded cache of Permuters (dispatch/permuter_cache.hpp) keyed by
//    the Bmmc, the element size, every option and the device. With Backend::Auto it runs where the pointers
//    live (device memory → CUDA, host memory → CPU), and it picks the widest lane accesses the pointers'
//    alignment allows, so an offset view still runs (more slowly) instead of failing.
//  - `permute_host(...)`: host buffers on any backend (CUDA stages them through device memory).
//  - In place (docs/DESIGN.md §8): `permute(..., in, out, ...)` with in == out, `permute_inplace(...)`, a
//    Permuter with PermuterOptions::in_place, or `swap_index_bits(...)` (cuStateVec's vocabulary, with its
//    mask). No output buffer and no scratch: an involution in one pass, any BMMC as a product of involutions
//    (plan/inplace_plan.hpp). Identical in and out are in place; partially overlapping ones are refused.
// Errors: std::invalid_argument for bad arguments (null, overlapping, unaligned or wrong-kind pointers,
// unsupported element sizes, an unavailable backend), checked before anything is written; CudaError /
// NvrtcError (bmmc/cuda/error.hpp) for failures of the CUDA runtime or the JIT. No CUDA header is included
// here, so CPU-only programs use the same header.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bmmc/core/bmmc.hpp"
#include "bmmc/core/digit_map.hpp"
#include "bmmc/core/involution.hpp"  // swap_index_bits(n, pairs): the Bmmc of the data overload below
#include "bmmc/cpu/executor.hpp"
#include "bmmc/cuda/options.hpp"
#include "bmmc/dispatch/backend.hpp"
#include "bmmc/plan/digit_plan.hpp"
#include "bmmc/plan/inplace_plan.hpp"
#include "bmmc/plan/plan.hpp"

struct CUstream_st;  // the CUDA runtime's stream type: cudaStream_t is CUstream_st*

namespace bmmc {

/// A CUDA stream without the CUDA header (pass a cudaStream_t; nullptr = the legacy default stream).
using StreamHandle = CUstream_st*;

struct PermuterOptions {
  Backend backend = Backend::Auto;
  CpuPolicy cpu;   ///< used when the CPU runs it
  GpuOptions gpu;  ///< used when CUDA runs it
  /// Permute in place: one buffer (in == out), the passes of an InPlacePlan, no scratch.
  bool in_place = false;

  friend bool operator==(const PermuterOptions&, const PermuterOptions&) = default;
};

class Permuter {
 public:
  /// Plans `bmmc` for the backend (Auto: CUDA when a GPU is usable, else the CPU) and prepares it: CPU loop
  /// tables, or JIT kernels for the current (or options.gpu.device) device.
  Permuter(const Bmmc& bmmc, int elem_bytes, const PermuterOptions& options = {});
  /// Runs `plan` exactly as given on the backend (any variant or geometry on the CPU; on CUDA its passes
  /// must fit the device).
  explicit Permuter(Plan plan, const PermuterOptions& options = {});
  /// An in-place Permuter running `plan` as given (e.g. make_swap_plan's masked swaps); options.in_place is
  /// implied.
  explicit Permuter(InPlacePlan plan, const PermuterOptions& options = {});
  /// Any shape (bmmc/core/digit_map.hpp): out = the map applied to `in`, an array of map.shape() (C order) of
  /// elem_bytes-byte elements. A map that is a Bmmc (DigitMap::as_bmmc) is planned as one; any other runs the
  /// digit planner (plan/digit_plan.hpp). In place (options.in_place) only for involutions.
  Permuter(const DigitMap& map, int elem_bytes, const PermuterOptions& options = {});

  /// out[A·x ⊕ c] = in[x]. Host pointers for the CPU (runs to completion), device pointers for CUDA
  /// (enqueued on `stream`). `temp` (temp_bytes(), disjoint from in and out) serves multi-pass plans; when
  /// null they allocate it (stream-ordered on CUDA).
  /// An in-place Permuter takes in == out here (and nothing else).
  void operator()(const void* in, void* out, StreamHandle stream = nullptr, void* temp = nullptr) const;
  /// In place: permutes the 2^n elements at `data`. Only for in-place Permuters.
  void operator()(void* data, StreamHandle stream = nullptr) const;
  /// operator()(in, out, stream) for pointers the caller vouches for: on CUDA, in and out are memory of this
  /// Permuter's device (a framework tensor's data pointers whose device the caller has checked), so the two
  /// cudaPointerGetAttributes queries of every call are skipped; null, overlapping, misaligned
  /// and multi-pass calls are still checked as operator() checks them. CPU and in-place Permuters run
  /// operator() itself. Handing it host memory or another device's memory is undefined behaviour.
  void run_trusted(const void* in, void* out, StreamHandle stream = nullptr) const;

  Backend backend() const noexcept;
  bool in_place() const noexcept;
  /// The out-of-place plan; an in-place Permuter returns a plan with no passes (see inplace_plan()).
  const Plan& plan() const noexcept;
  /// The in-place plan; an out-of-place Permuter returns one with no passes.
  const InPlacePlan& inplace_plan() const noexcept;
  /// The any-shape plan of a Permuter built from a DigitMap that is not a Bmmc; else one with no axes.
  const DigitPlan& digit_plan() const noexcept;
  /// log2 of the element count; -1 for a Permuter running a digit plan.
  int n() const noexcept;
  int elem_bytes() const noexcept;
  std::size_t temp_bytes() const noexcept;
  /// The alignment in bytes `in` and `out` need (the widest lane access on CUDA; elem_bytes on the CPU).
  std::size_t alignment() const noexcept;
  /// What runs: the CPU loop(s) (CpuPermuter::kernel_name) or "cuda-jit" / "cuda-generic"; in place
  /// "cpu-inplace", "cuda-inplace-jit" or "cuda-inplace-generic"; any shape "cpu-digit-tile",
  /// "cuda-digit-jit", "cuda-digit-generic", in place "cpu-digit-inplace" / "cuda-digit-inplace".
  std::string kernel_name() const;

 private:
  // permute() asks the CUDA runtime where its pointers live once and then runs without asking again.
  friend void permute(const Bmmc&, const void*, void*, int, const PermuterOptions&, StreamHandle);
  friend void permute_inplace(const Bmmc&, void*, int, const PermuterOptions&, StreamHandle);
  friend void permute(const DigitMap&, const void*, void*, int, const PermuterOptions&, StreamHandle);

  void run_digits(const void* in, void* out, StreamHandle stream, bool trusted) const;

  struct Impl;  // the backend's prepared state (src/dispatch/permuter.cpp)
  template <class Make>
  static std::shared_ptr<const Impl> make_impl(const PermuterOptions& options, Make&& make);
  std::shared_ptr<const Impl> impl_;
};

/// One call through the default Permuter cache. With Backend::Auto the backend is where `in` lives.
void permute(const Bmmc& bmmc, const void* in, void* out, int elem_bytes, const PermuterOptions& options = {},
             StreamHandle stream = nullptr);
/// Any shape: one call through the default cache (see the DigitMap constructor). in == out for involutions runs in
/// place. A map of zero elements is not representable (extents are ≥ 1).
void permute(const DigitMap& map, const void* in, void* out, int elem_bytes, const PermuterOptions& options = {},
             StreamHandle stream = nullptr);
/// Same, with the permutation in the spec language (docs/DESIGN.md §2) and n.
void permute(std::string_view spec, const void* in, void* out, int n, int elem_bytes,
             const PermuterOptions& options = {}, StreamHandle stream = nullptr);

/// In place: permute(bmmc, data, data, ...) — the 2^n elements at `data` (host or device memory, Auto as for
/// permute) are permuted with no output buffer and no scratch.
void permute_inplace(const Bmmc& bmmc, void* data, int elem_bytes, const PermuterOptions& options = {},
                     StreamHandle stream = nullptr);
/// cuStateVec's custatevecSwapIndexBits: swap index bits pairs[i].first ↔ pairs[i].second (disjoint) of the
/// 2^n elements at `data`, in place, for the indices whose bits under mask_bits equal mask_value (the mask may
/// not name swapped bits). One pass.
void swap_index_bits(void* data, int n, int elem_bytes, const std::vector<std::pair<int, int>>& pairs,
                     BitVec mask_bits = 0, BitVec mask_value = 0, const PermuterOptions& options = {},
                     StreamHandle stream = nullptr);
/// Host buffers on any backend: the CPU directly; CUDA through device buffers (copy in, permute, copy out,
/// synchronous). Returns the backend that ran (Auto resolved as for a Permuter).
Backend permute_host(const Bmmc& bmmc, const void* in, void* out, int elem_bytes, const PermuterOptions& options = {});

/// Any shape on host buffers, any backend (the CPU directly; CUDA through device buffers, synchronous). in == out
/// permutes in place (involutions only). Returns the backend that ran.
Backend permute_host(const DigitMap& map, const void* in, void* out, int elem_bytes, const PermuterOptions& options = {});
/// The Bmmc the front door runs `map` as (every extent a power of two, each roll 0 or exactly half its axis, and an element
/// size of 1, 2, 4, 8 or 16 bytes), or nothing: then it runs the digit planner.
std::optional<Bmmc> bit_face(const DigitMap& map, int elem_bytes);

/// In place on a host array, any backend: the CPU directly; CUDA through one device buffer (copy in, permute in
/// place, copy out, synchronous). Returns the backend that ran.
Backend permute_host_inplace(const Bmmc& bmmc, void* data, int elem_bytes, const PermuterOptions& options = {});
/// The options permute() runs for these pointers: Auto resolved to the pointers' backend, the device set to
/// the one holding them, and on CUDA the lane accesses narrowed to what their alignment allows (only when
/// options.gpu.policy.vector_bits is -1: an explicit width is kept, and unaligned pointers are an error).
PermuterOptions options_for_pointers(const PermuterOptions& options, const void* in, const void* out,
                                     int elem_bytes);

}  // namespace bmmc
