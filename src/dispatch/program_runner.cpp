// The front door for combinator programs (see bmmc/program_runner.hpp): a CpuProgram or a GpuProgram behind
// one class. Beside permuter.cpp, the only file with a branch per backend for programs.
#include "bmmc/program_runner.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <variant>

#include "bmmc/combinators/execute_cpu.hpp"
#include "bmmc/core/buffers.hpp"
#if BMMC_HAS_CUDA
#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/memory.hpp"
#include "bmmc/cuda/program_gpu.hpp"
#endif

namespace bmmc {

namespace {

#if BMMC_HAS_CUDA
using GpuState = GpuProgram;
#else
struct GpuState {};  // never constructed: resolve_backend refuses Cuda in a build without it
#endif

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

bool overlap(const void* a, const void* b, std::size_t bytes) {
  const auto x = reinterpret_cast<std::uintptr_t>(a), y = reinterpret_cast<std::uintptr_t>(b);
  return x < y + bytes && y < x + bytes;
}

// Where the CUDA runtime can tell, the kind of memory a pointer is: -1 for host memory, else its device.
int memory_device(const void* p) {
#if BMMC_HAS_CUDA
  return pointer_device(p);
#else
  (void)p;
  return -1;
#endif
}

#if BMMC_HAS_CUDA
GpuProgramOptions gpu_program_options(const ProgramOptions& o) {
  GpuProgramOptions g;
  static_cast<ExecOptions&>(g) = o;
  static_cast<FusedKernelOptions&>(g) = o.fused;
  g.gpu = o.gpu;
  return g;
}

// The fused passes of `lp` as GpuProgram generates them, in words (the schedule's cut, each pass's kernel plan).
std::string describe_gpu_fused(const LoweredProgram& lp, DType t, const GpuProgramOptions& go, const GpuProgram& p) {
  const FusionOptions f = fusion_options(go, t, lp.n);
  const FusedCodegenOptions cg = fused_codegen_options(go, t, lp.n);
  std::size_t columns = 0, windows = 0, trips = 0, grown = 0;
  std::string kinds;
  for (const ScheduledPass& sp : schedule(lp, go.strategy, f))
    if (const auto* fp = std::get_if<FusedLeafPass>(&sp)) {
      const FusedKernelPlan kp = plan_fused_kernel(fused_tile_spec(*fp, lp.n), cg);
      columns += fp->leaves.size();
      windows += kp.windows.size();
      trips += static_cast<std::size_t>(kp.transitions());
      grown += kp.tile_dim > f.tile_bits;
      if (kinds.find(to_string(kp.kind)) == std::string::npos)
        kinds += std::string(kinds.empty() ? "" : "+") + to_string(kp.kind);
    }
  return fmt::format("{} fused passes ({} kernel, {} keys per thread), tiles of 2^{} keys in runs of 2^{} ({} of them "
                     "grown for runs of 2^{}); {} columns in {} register windows, {} shared-memory round trips per "
                     "tile in all (before folding); {} permutation(s) folded into a fused pass's store",
                     p.fused_passes(), kinds, 1 << cg.reg_bits, f.tile_bits, f.line_bits, grown, cg.run_bits, columns,
                     windows, trips, p.folded_permutations());
}
#endif

}  // namespace

struct ProgramRunner::Impl {
  Backend backend = Backend::Cpu;
  DType type = DType::Int32;
  int device = -1;
  LoweredProgram lowered;
  FusionOptions fusion;
  std::string fused_words;
  double build_ms = 0;
  std::variant<std::monostate, CpuProgram, GpuState> state;  // monostate only while being built

  const CpuProgram* cpu() const { return std::get_if<CpuProgram>(&state); }
#if BMMC_HAS_CUDA
  const GpuProgram& gpu() const { return std::get<GpuProgram>(state); }
#endif
  std::size_t bytes() const { return array_bytes(lowered.n, dtype_bytes(type)); }

  // The checks of a run, before anything is written: `data` (and `temp`) are memory of the backend's kind.
  void check_run(const void* data, const void* temp, std::size_t temp_bytes) const {
    if (!data) throw std::invalid_argument("ProgramRunner: the data pointer is null");
    const std::size_t size = bytes();
    const char* kind = backend == Backend::Cpu ? "host" : "device";
    for (auto [p, what] : {std::pair{data, "data"}, std::pair{temp, "temp"}}) {
      if (!p) continue;
      const int where = memory_device(p);
      if (backend == Backend::Cpu && where >= 0)
        throw std::invalid_argument(fmt::format(
            "the {} pointer {} is memory of CUDA device {} but the program runs on the cpu backend; use run_host "
            "for host arrays or a runner of the cuda backend for device arrays",
            what, p, where));
      if (backend == Backend::Cuda && where != device)
        throw std::invalid_argument(
            where < 0 ? fmt::format("the {} pointer {} is host memory; a runner of the cuda backend takes device "
                                    "memory of device {} (run_host stages host arrays)",
                                    what, p, device)
                      : fmt::format("the {} pointer {} is memory of CUDA device {} but the runner runs on device {}",
                                    what, p, where, device));
    }
    if (temp && overlap(data, temp, std::max(size, temp_bytes)))
      throw std::invalid_argument(fmt::format("the temp buffer {} overlaps the data {} ({} {} bytes each); expected "
                                              "disjoint buffers",
                                              temp, data, size, kind));
  }
};

ProgramRunner::ProgramRunner(const Program& program, DType t, const ProgramOptions& options)
    : ProgramRunner(lower(program), t, options) {}

ProgramRunner::ProgramRunner(const LoweredProgram& lowered, DType t, const ProgramOptions& options) {
  check_dtype(t);
  check_cpu_threads(options.cpu.threads);  // refused on every backend, as Permuter does
  array_bytes(lowered.n, dtype_bytes(t));  // throws for n beyond kMaxPermuteBits, so bytes() cannot
  auto impl = std::make_unique<Impl>();
  impl->backend = resolve_backend(options.backend);
  impl->type = t;
  impl->lowered = lowered;
  const auto t0 = std::chrono::steady_clock::now();
  if (impl->backend == Backend::Cpu) {
    // The CPU cuts greedily: the cost model of FusedKernelOptions::cost_aware_cut is the GPU kernel's.
    impl->fusion = with_exec_options(cpu_fusion_options(), options);
    impl->state.emplace<CpuProgram>(lowered, t, options.strategy, options.cpu, impl->fusion);
    if (options.strategy == ExecStrategy::Fused)
      impl->fused_words =
          fmt::format("tiles of 2^{} keys in runs of 2^{}", impl->fusion.tile_bits, impl->fusion.line_bits);
  } else {
#if BMMC_HAS_CUDA
    impl->device = options.gpu.device >= 0 ? options.gpu.device : current_device();
    const ScopedDevice on(impl->device);
    const GpuProgramOptions go = gpu_program_options(options);
    impl->fusion = fusion_options(go, t, lowered.n);
    const GpuProgram& p = impl->state.emplace<GpuProgram>(lowered, t, go);
    if (p.fused_passes()) impl->fused_words = describe_gpu_fused(lowered, t, go, p);
#endif
  }
  impl->build_ms = ms_since(t0);
  impl_ = std::move(impl);
}

ProgramRunner::~ProgramRunner() = default;
ProgramRunner::ProgramRunner(ProgramRunner&&) noexcept = default;
ProgramRunner& ProgramRunner::operator=(ProgramRunner&&) noexcept = default;

void ProgramRunner::operator()(void* data, StreamHandle stream, void* temp) const {
  impl_->check_run(data, temp, temp_bytes());
  if (const CpuProgram* p = impl_->cpu()) {
    (*p)(data, temp);
    return;
  }
#if BMMC_HAS_CUDA
  const ScopedDevice on(impl_->device);
  impl_->gpu()(data, stream, temp);
#else
  (void)stream;
#endif
}

std::vector<double> ProgramRunner::pass_ms(void* data, StreamHandle stream, void* temp) const {
  impl_->check_run(data, temp, temp_bytes());
  if (const CpuProgram* p = impl_->cpu()) {
    std::vector<std::chrono::steady_clock::time_point> marks;
    (*p)(data, temp, [&](std::size_t) { marks.push_back(std::chrono::steady_clock::now()); });
    std::vector<double> ms;
    for (std::size_t i = 1; i < marks.size(); ++i)
      ms.push_back(std::chrono::duration<double, std::milli>(marks[i] - marks[i - 1]).count());
    return ms;
  }
#if BMMC_HAS_CUDA
  const ScopedDevice on(impl_->device);
  return impl_->gpu().pass_ms(data, stream, temp);
#else
  (void)stream;
  return {};
#endif
}

Backend ProgramRunner::run_host(const void* in, void* out, std::size_t bytes) const {
  const std::size_t size = impl_->bytes();
  if (bytes != size)
    throw std::invalid_argument(fmt::format("the arrays hold {} bytes; this program runs on 2^{} {} keys = {} bytes",
                                            bytes, n(), to_string(dtype()), size));
  if (!in || !out) throw std::invalid_argument(fmt::format("run_host: the {} pointer is null", in ? "output" : "input"));
  if (in != out && overlap(in, out, size))
    throw std::invalid_argument(fmt::format("the input {} and the output {} overlap ({} bytes each); expected the same "
                                            "array or disjoint ones",
                                            in, static_cast<const void*>(out), size));
  for (auto [p, what] : {std::pair{in, "input"}, std::pair{static_cast<const void*>(out), "output"}})
    if (const int where = memory_device(p); where >= 0)
      throw std::invalid_argument(fmt::format("run_host: the {} pointer {} is memory of CUDA device {}; run_host takes "
                                              "host arrays (device arrays: call the runner itself)",
                                              what, p, where));
  if (const CpuProgram* p = impl_->cpu()) {
    if (in != out) std::memcpy(out, in, size);
    (*p)(out);
    return Backend::Cpu;
  }
#if BMMC_HAS_CUDA
  const ScopedDevice on(impl_->device);
  DeviceBuffer data(size), temp(temp_bytes());
  data.upload(in, size);
  impl_->gpu()(data.get(), nullptr, temp.get());
  data.download(out, size);
#endif
  return impl_->backend;
}

Backend ProgramRunner::backend() const noexcept { return impl_->backend; }
DType ProgramRunner::dtype() const noexcept { return impl_->type; }
int ProgramRunner::n() const noexcept { return impl_->lowered.n; }
int ProgramRunner::device() const noexcept { return impl_->device; }
std::size_t ProgramRunner::bytes() const noexcept { return impl_->bytes(); }
const LoweredProgram& ProgramRunner::lowered() const noexcept { return impl_->lowered; }
const FusionOptions& ProgramRunner::fusion() const noexcept { return impl_->fusion; }
std::string ProgramRunner::describe_fused() const { return impl_->fused_words; }
double ProgramRunner::build_ms() const noexcept { return impl_->build_ms; }

namespace {

// Calls f with the backend's executor (a CpuProgram or a GpuProgram: the same queries).
template <class State, class F>
decltype(auto) with_executor(const State& state, F&& f) {
#if BMMC_HAS_CUDA
  if (const auto* g = std::get_if<GpuProgram>(&state)) return f(*g);
#endif
  return f(std::get<CpuProgram>(state));
}

}  // namespace

std::size_t ProgramRunner::passes() const noexcept {
  return with_executor(impl_->state, [](const auto& p) { return p.passes(); });
}
std::size_t ProgramRunner::permutation_passes() const noexcept {
  return with_executor(impl_->state, [](const auto& p) { return p.permutation_passes(); });
}
std::size_t ProgramRunner::leaf_passes() const noexcept {
  return with_executor(impl_->state, [](const auto& p) { return p.leaf_passes(); });
}
std::size_t ProgramRunner::fused_passes() const noexcept {
  return with_executor(impl_->state, [](const auto& p) { return p.fused_passes(); });
}
std::size_t ProgramRunner::folded_permutations() const noexcept {
  return with_executor(impl_->state, [](const auto& p) -> std::size_t {
    if constexpr (std::is_same_v<std::decay_t<decltype(p)>, CpuProgram>)
      return 0;  // the CPU runs every permutation as a pass of its own
    else
      return p.folded_permutations();
  });
}
std::size_t ProgramRunner::temp_bytes() const noexcept {
  return with_executor(impl_->state, [](const auto& p) { return p.temp_bytes(); });
}
std::vector<std::string> ProgramRunner::pass_names() const {
  return with_executor(impl_->state, [](const auto& p) { return p.pass_names(); });
}
std::vector<KernelSource> ProgramRunner::fused_sources() const {
  return with_executor(impl_->state, [](const auto& p) -> std::vector<KernelSource> {
    if constexpr (std::is_same_v<std::decay_t<decltype(p)>, CpuProgram>)
      return {};  // the CPU's fused passes are compiled C++, not generated
    else
      return p.fused_sources();
  });
}

}  // namespace bmmc
