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

struct NcclSwapPermuter::State : RankContext {
  explicit State(ncclComm_t c) : RankContext(c, "NcclSwapPermuter") {}
  DistOptions options;
  RankSwapPlan plan;
  std::uint64_t hash = 0;
  KernelSource source;
  Kernel kernel;
  std::unique_ptr<CudaInPlacePermuter> conjugate;  // Q, where f moves low bits
};

NcclSwapPermuter::NcclSwapPermuter(const Bmmc& f, int elem_bytes, ncclComm_t comm, const DistOptions& options)
    : state_(std::make_unique<State>(comm)) {
  State& s = *state_;
  s.options = options;
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
  // A rank whose window fails says so in the agreement, so that its peers throw too instead of waiting for it.
  s.check_or_refuse(s.options.check_agreement, stream, [&] { data.require(s.comm, local_bytes(), true, "data"); });
  if (s.options.check_agreement)
    s.agree({s.hash, static_cast<std::uint64_t>(s.plan.n()), static_cast<std::uint64_t>(s.plan.elem_bytes),
             AgreedEngine::InPlace, 0, 0, 0, 0},
            stream);
  else
    s.barrier(stream);  // no rank reaches into a buffer its owner still uses
  if (s.conjugate) {
    s.conjugate->run_on_device_pointer(data.data(), stream);
    s.barrier(stream);  // every rank's Q is done before any thread reaches into it
  }
  const std::uint64_t vectors = std::uint64_t{1} << (s.plan.local_bits - s.plan.vector_bits);
  const std::uint64_t base64 = static_cast<std::uint64_t>(s.rank) * vectors;
  const unsigned base32 = static_cast<unsigned>(base64);
  void* base = needs_64bit_index(s.plan.n() + 1) ? static_cast<void*>(const_cast<std::uint64_t*>(&base64))
                                                 : static_cast<void*>(const_cast<unsigned*>(&base32));
  void* args[] = {const_cast<void**>(data.peers().data()), base};
  launch(s.kernel, dim3(static_cast<unsigned>(s.source.grid)), dim3(s.source.block), 0, stream, args);
  s.barrier(stream);  // every pair that touches this rank is swapped
  if (s.conjugate) s.conjugate->run_on_device_pointer(data.data(), stream);
}

}  // namespace bmmc
