// In place across the ranks of an NCCL communicator (see swap_permuter.hpp).
#include "bmmc/nccl/swap_permuter.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <stdexcept>

#include "bmmc/codegen/push_source.hpp"
#include "bmmc/core/buffers.hpp"
#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/error.hpp"
#include "bmmc/cuda/inplace.hpp"
#include "bmmc/cuda/kernel_cache.hpp"
#include "bmmc/cuda/launch.hpp"
#include "bmmc/dist/dist_plan.hpp"
#include "collectives.hpp"
#include "lsa_pointers.hpp"

namespace bmmc {

using namespace nccl_detail;

struct NcclSwapPermuter::State {
  ncclComm_t comm = nullptr;
  int rank = 0, ranks = 1, device = 0;
  DistOptions options;
  RankSwapPlan plan;
  std::uint64_t hash = 0;
  KernelSource source;
  Kernel kernel;
  std::unique_ptr<CudaInPlacePermuter> conjugate;  // Q, where f moves low bits
  std::uint64_t* words = nullptr;                  // device: the agreement words, then the barrier word

  State() = default;
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  ~State() {
    if (!words) return;
    try {
      ScopedDevice on(device);
      cudaFree(words);
    } catch (...) {  // a destructor must not throw
    }
  }
};

NcclSwapPermuter::NcclSwapPermuter(const Bmmc& f, int elem_bytes, ncclComm_t comm, const DistOptions& options)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  if (!comm) throw std::invalid_argument("NcclSwapPermuter: the NCCL communicator is null");
  s.comm = comm;
  s.options = options;
  nccl_check(ncclCommCount(comm, &s.ranks), "ncclCommCount", comm);
  nccl_check(ncclCommUserRank(comm, &s.rank), "ncclCommUserRank", comm);
  nccl_check(ncclCommCuDevice(comm, &s.device), "ncclCommCuDevice", comm);
  const int g = dist_rank_bits(static_cast<std::uint64_t>(s.ranks), f.n());
  s.plan = make_rank_swap_plan(f, g, elem_bytes);
  s.hash = dist_plan_hash(make_dist_plan(f, g, elem_bytes));
  ScopedDevice on(s.device);
  if (!every_rank_load_store_accessible(comm))
    throw std::invalid_argument(fmt::format(
        "in place across ranks needs every rank load/store accessible from every other, and NCCL's LSA team of rank "
        "{} is smaller than the {} ranks; permute out of place with DistPermuter",
        s.rank, s.ranks));
  // Every kernel is loaded now, not lazily between collectives (prepare_launch, launch.hpp).
  s.source = generate_rank_swap(s.plan.direct, s.plan.local_bits, elem_bytes, s.plan.vector_bits, s.plan.owner_bit);
  KernelCache& cache = options.gpu.cache ? *options.gpu.cache : default_kernel_cache();
  s.kernel = cache.get(s.source.source, s.source.kernel_name, device_arch(s.device));
  prepare_launch(s.kernel, 0);
  if (s.plan.conjugated()) {
    s.conjugate = std::make_unique<CudaInPlacePermuter>(s.plan.conjugate, elem_bytes, options.gpu);
    s.conjugate->prepare();
  }
  check(cudaMalloc(&s.words, sizeof(std::uint64_t) * (Agreement::kWords * (1 + static_cast<std::size_t>(s.ranks)) + 1)),
        "cudaMalloc (agreement words)");
}

NcclSwapPermuter::~NcclSwapPermuter() = default;
NcclSwapPermuter::NcclSwapPermuter(NcclSwapPermuter&&) noexcept = default;
NcclSwapPermuter& NcclSwapPermuter::operator=(NcclSwapPermuter&&) noexcept = default;

const RankSwapPlan& NcclSwapPermuter::plan() const noexcept { return state_->plan; }
std::size_t NcclSwapPermuter::local_bytes() const noexcept {
  return array_bytes(state_->plan.local_bits, state_->plan.elem_bytes);
}
int NcclSwapPermuter::rank() const noexcept { return state_->rank; }
int NcclSwapPermuter::ranks() const noexcept { return state_->ranks; }
int NcclSwapPermuter::device() const noexcept { return state_->device; }
const std::string& NcclSwapPermuter::source() const noexcept { return state_->source.source; }

void NcclSwapPermuter::operator()(const NcclWindow& data, cudaStream_t stream) const {
  const State& s = *state_;
  ScopedDevice on(s.device);
  // Everything is checked before anything is enqueued (the window is 4096-aligned, so every vector width fits).
  if (!data.data() || data.comm() != s.comm)
    throw std::invalid_argument(fmt::format("data: the window is {} (expected a window of the permuter's communicator)",
                                            data.data() ? "of another communicator" : "empty (moved from)"));
  if (data.bytes() < local_bytes())
    throw std::invalid_argument(
        fmt::format("data: the window holds {} bytes, the rank's array needs {}", data.bytes(), local_bytes()));
  if (data.peers().empty()) throw std::invalid_argument(fmt::format("data: {}", data.lsa_note()));

  std::uint64_t* barrier_word = s.words + Agreement::kWords * (1 + static_cast<std::size_t>(s.ranks));
  if (s.options.check_agreement)
    check_ranks_agree(s.comm, s.rank, s.ranks, s.words,
                      {s.hash, static_cast<std::uint64_t>(s.plan.n()), static_cast<std::uint64_t>(s.plan.elem_bytes),
                       AgreedEngine::InPlace, 0, 0},
                      stream);
  else
    stream_barrier(s.comm, barrier_word, stream);  // no rank reaches into a buffer its owner still uses
  if (s.conjugate) {
    s.conjugate->run_on_device_pointer(data.data(), stream);
    stream_barrier(s.comm, barrier_word, stream);  // every rank's Q is done before any thread reaches into it
  }
  const std::uint64_t vectors = std::uint64_t{1} << (s.plan.local_bits - s.plan.vector_bits);
  const std::uint64_t base64 = static_cast<std::uint64_t>(s.rank) * vectors;
  const unsigned base32 = static_cast<unsigned>(base64);
  void* base = needs_64bit_index(s.plan.n() + 1) ? static_cast<void*>(const_cast<std::uint64_t*>(&base64))
                                                 : static_cast<void*>(const_cast<unsigned*>(&base32));
  void* args[] = {const_cast<void**>(data.peers().data()), base};
  launch(s.kernel, dim3(static_cast<unsigned>(s.source.grid)), dim3(s.source.block), 0, stream, args);
  stream_barrier(s.comm, barrier_word, stream);  // every pair that touches this rank is swapped
  if (s.conjugate) s.conjugate->run_on_device_pointer(data.data(), stream);
}

}  // namespace bmmc
