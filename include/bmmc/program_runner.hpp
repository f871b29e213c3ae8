// The front door for combinator programs: run a Program (combinators/program.hpp, e.g. the paper's sorting
// network) on arrays of 2^n keys of a DType, on any backend, as bmmc/permute.hpp's Permuter runs a BMMC.
//
// A ProgramRunner lowers the program, resolves the backend (Auto: CUDA when a GPU is usable, else the CPU), and
// prepares it there once: on the CPU a CpuProgram (combinators/execute_cpu.hpp), on CUDA a GpuProgram
// (cuda/program_gpu.hpp: every kernel compiled in the constructor, on options.gpu.device or the current device).
// It then runs in place any number of times — host memory on the CPU, device memory and a stream on CUDA — or
// on host arrays on either backend (run_host stages them through device memory on CUDA). It reports what it
// runs: the backend, the passes over memory and what each one is, the fused cut.
// Options: ExecOptions (the strategy and the fused cut; unset: the running backend's cut), CpuPolicy for the
// CPU, and for CUDA the same GpuOptions a Permuter takes (the permutation passes: JIT kernels by default) plus
// the fused kernels (FusedKernelOptions). Errors: std::invalid_argument for bad arguments (an unsupported DType,
// an unavailable backend, null, overlapping or wrong-kind pointers, a size that is not the program's), all
// checked before anything is written; CudaError / NvrtcError (bmmc/cuda/error.hpp) for failures of the CUDA
// runtime or the JIT. No CUDA header is included here.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "bmmc/codegen/cuda_source.hpp"
#include "bmmc/combinators/dtype.hpp"
#include "bmmc/combinators/lower.hpp"
#include "bmmc/combinators/program.hpp"
#include "bmmc/combinators/schedule.hpp"
#include "bmmc/cpu/executor.hpp"
#include "bmmc/cuda/options.hpp"
#include "bmmc/cuda/program_options.hpp"
#include "bmmc/dispatch/backend.hpp"
#include "bmmc/permute.hpp"  // StreamHandle

namespace bmmc {

/// The strategy and fused cut (ExecOptions: both backends), then what each backend takes.
struct ProgramOptions : ExecOptions {
  Backend backend = Backend::Auto;
  CpuPolicy cpu;             ///< used when the CPU runs it (threads; the permutation passes' CpuPermuters)
  GpuOptions gpu;            ///< used when CUDA runs it: the permutation passes, the kernel cache, the device
  FusedKernelOptions fused;  ///< used when CUDA runs it: the fused kernels and the cost-aware cut
  friend bool operator==(const ProgramOptions&, const ProgramOptions&) = default;
};

class ProgramRunner {
 public:
  /// Lowers `program` (lower.hpp) and prepares it for the backend. Throws std::invalid_argument for a DType
  /// outside the enumeration, an unavailable backend, a CPU thread count below 0, or a cut the schedule or the
  /// GPU's shared memory refuses.
  ProgramRunner(const Program& program, DType t, const ProgramOptions& options = {});
  /// The same for a program already lowered.
  ProgramRunner(const LoweredProgram& lowered, DType t, const ProgramOptions& options = {});
  ~ProgramRunner();
  ProgramRunner(ProgramRunner&&) noexcept;
  ProgramRunner& operator=(ProgramRunner&&) noexcept;

  /// Runs the program in place on the 2^n keys at `data`: host memory on the CPU (runs to completion), device
  /// memory of this runner's device on CUDA (enqueued on `stream`). `temp` (temp_bytes(), disjoint from data,
  /// the same kind of memory) serves the permutation passes; when null it is allocated (stream-ordered on CUDA).
  void operator()(void* data, StreamHandle stream = nullptr, void* temp = nullptr) const;
  /// Host arrays on either backend: out = program(in). `bytes` must be bytes(); in and out are the same array
  /// or disjoint ones. CUDA copies in, runs and copies out (synchronous). Returns the backend that ran.
  Backend run_host(const void* in, void* out, std::size_t bytes) const;
  /// One run like operator(), timing each pass over memory (waited for: events between passes on CUDA, the
  /// host clock on the CPU); the milliseconds in the order of pass_names().
  std::vector<double> pass_ms(void* data, StreamHandle stream = nullptr, void* temp = nullptr) const;

  Backend backend() const noexcept;
  DType dtype() const noexcept;
  int n() const noexcept;
  /// The CUDA device it runs on; −1 on the CPU.
  int device() const noexcept;
  /// 2^n keys of the DType, in bytes: the size of every array a run takes.
  std::size_t bytes() const noexcept;
  /// The lowered program (stages, atom counts) the runner runs.
  const LoweredProgram& lowered() const noexcept;
  /// The fused strategy's cut on this backend (tiles, runs, relayout), whatever the strategy.
  const FusionOptions& fusion() const noexcept;
  /// Passes over memory one run makes (permutations, leaf or fused passes, a copy back where one is needed).
  std::size_t passes() const noexcept;
  std::size_t permutation_passes() const noexcept;
  std::size_t leaf_passes() const noexcept;
  /// Of the leaf passes, those that run several columns in one tile.
  std::size_t fused_passes() const noexcept;
  /// Permutations folded into the store of the fused pass before them (CUDA; none on the CPU).
  std::size_t folded_permutations() const noexcept;
  std::size_t temp_bytes() const noexcept;
  /// What each pass is: "permute", "fused", "fused (out of place)", "fused + permute", "leaf" or "copy back".
  std::vector<std::string> pass_names() const;
  /// The fused passes in words: on the CPU the tiles and runs (for the fused strategy); on CUDA, where the
  /// program has fused passes, also their kernels, keys per thread, register windows, shared-memory round trips
  /// and folded permutations. Empty otherwise.
  std::string describe_fused() const;
  /// The generated CUDA source of each fused pass, in order (none on the CPU).
  std::vector<KernelSource> fused_sources() const;
  /// Host time the constructor took after lowering: scheduling, code generation and compiling (or loading
  /// from the kernel cache).
  double build_ms() const noexcept;

 private:
  struct Impl;  // the backend's prepared state (src/dispatch/program_runner.cpp)
  std::unique_ptr<const Impl> impl_;
};

}  // namespace bmmc
