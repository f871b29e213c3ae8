// bench_peer (see include/bmmc/bench/peer_gpu.hpp).
#include "bmmc/bench/peer_gpu.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>

#include "bmmc/core/buffers.hpp"
#include "bmmc/cpu/reference.hpp"
#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/error.hpp"
#include "bmmc/cuda/memory.hpp"
#include "bmmc/dist/alltoall.hpp"
#include "bmmc/core/involution.hpp"
#include "bmmc/peer/peer_access.hpp"
#include "bmmc/peer/peer_permuter.hpp"
#include "bmmc/peer/peer_swap.hpp"
#include "timing.hpp"

namespace bmmc {

namespace {

using u64 = unsigned long long;
constexpr int kMaxRanks = 16;

struct DistVerifyTables {
  u64 inv_cols[64];  // A⁻¹
  u64 c;
  const unsigned char* in[kMaxRanks];
  int n, m, elem_bytes;
  u64 rank;
};

// Destination rank t.rank: out[y_l] must equal in[r][x_l] for x = A⁻¹·((rank << m | y_l) ⊕ c) = (x_l, r).
__global__ void verify_rank(const unsigned char* out, DistVerifyTables t, u64* bad) {
  const u64 local = u64{1} << t.m;
  u64 wrong = 0;
  for (u64 yl = blockIdx.x * u64(blockDim.x) + threadIdx.x; yl < local; yl += u64(gridDim.x) * blockDim.x) {
    const u64 y = ((t.rank << t.m) | yl) ^ t.c;
    u64 x = 0;
    for (int i = 0; i < t.n; ++i)
      if ((y >> i) & 1) x ^= t.inv_cols[i];
    const unsigned char* src = t.in[x >> t.m] + (x & (local - 1)) * t.elem_bytes;
    for (int b = 0; b < t.elem_bytes; ++b)
      if (src[b] != out[yl * t.elem_bytes + b]) {
        ++wrong;
        break;
      }
  }
  if (wrong) atomicAdd(bad, wrong);
}

void sync_all(const std::vector<int>& devices) {
  for (int d : devices) {
    ScopedDevice on(d);
    BMMC_CUDA_CHECK(cudaDeviceSynchronize());
  }
}

template <class F>
PeerBenchRow time_host(const std::string& name, const std::vector<int>& devices, int reps, F run) {
  for (int i = 0; i < 2; ++i) run();
  sync_all(devices);
  std::vector<float> ms;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    run();
    sync_all(devices);
    ms.push_back(std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  PeerBenchRow r;
  r.variant = name;
  r.median_ms = bench_detail::median(ms);
  r.min_ms = *std::min_element(ms.begin(), ms.end());
  r.max_ms = *std::max_element(ms.begin(), ms.end());
  return r;
}

}  // namespace

std::vector<PeerBenchRow> bench_peer(const Bmmc& b, int eb, const std::vector<int>& devices, int reps) {
  if (reps < 1) throw std::invalid_argument("reps must be at least 1");
  if (devices.size() > kMaxRanks) throw std::invalid_argument("bench_peer: at most " + std::to_string(kMaxRanks) + " ranks");
  const std::size_t g = devices.size();
  const DistPlan plan = make_dist_plan(b, dist_rank_bits(g, b.n()), eb);
  const std::size_t bytes = array_bytes(plan.local_bits, eb);
  std::vector<DeviceBuffer> in, out, scratch;
  for (std::size_t r = 0; r < g; ++r) {
    ScopedDevice on(devices[r]);
    in.emplace_back(bytes);
    out.emplace_back(bytes);
    scratch.emplace_back(bytes);
    std::vector<unsigned char> host(bytes);
    for (std::size_t i = 0; i < bytes; ++i) host[i] = static_cast<unsigned char>(1 + (i * 131 + r * 977 + (i >> 13)) % 251);
    in[r].upload(host.data(), bytes);
  }
  std::vector<const void*> ins;
  std::vector<void*> outs, scratches;
  for (std::size_t r = 0; r < g; ++r) {
    ins.push_back(in[r].get());
    outs.push_back(out[r].get());
    scratches.push_back(scratch[r].get());
  }
  std::vector<AllToAllStep> steps;
  std::vector<std::vector<std::uint64_t>> send_at, recv_at;  // displacements (elements), as the copy engine's
  double crossing = 0;
  for (std::size_t r = 0; r < g; ++r) {
    steps.push_back(alltoall_step(plan, r));
    send_at.push_back(displacements(steps[r].send_counts));
    recv_at.push_back(displacements(steps[r].recv_counts));
    for (std::size_t d = 0; d < g; ++d)
      if (d != r) crossing += static_cast<double>(steps[r].send_counts[d]) * eb;
  }
  // Peer access first, where every pair has it: the bound's cudaMemcpyPeerAsync would otherwise be staged
  // through host memory, and the checks read every source through peer pointers.
  const bool peers = peer_obstacle(devices).empty();
  if (peers) enable_peer_access(devices);
  std::vector<PeerBenchRow> rows;
  rows.push_back(time_host("local-memcpy", devices, reps, [&] {
    for (std::size_t r = 0; r < g; ++r) {
      ScopedDevice on(devices[r]);
      BMMC_CUDA_CHECK(cudaMemcpyAsync(outs[r], ins[r], bytes, cudaMemcpyDeviceToDevice));
    }
  }));
  // Each rank sends its off-rank bytes in one piece per destination: what any engine must move at least.
  rows.push_back(time_host("peer-copy-bound", devices, reps, [&] {
    for (std::size_t r = 0; r < g; ++r) {
      ScopedDevice on(devices[r]);
      for (std::size_t d = 0; d < g; ++d)
        if (const std::uint64_t c = steps[r].send_counts[d]; c && d != r)
          BMMC_CUDA_CHECK(cudaMemcpyPeerAsync(static_cast<unsigned char*>(scratches[d]) + recv_at[d][r] * eb, devices[d],
                                              static_cast<const unsigned char*>(ins[r]) + send_at[r][d] * eb,
                                              devices[r], c * eb));
    }
  }));
  // Each destination reads every source through peer pointers (the engines enabled them).
  auto mismatches = [&] {
    u64 wrong = 0;
    const BitMatrix inv = b.matrix().inverse();
    for (std::size_t d = 0; d < g; ++d) {
      ScopedDevice on(devices[d]);
      DistVerifyTables t{};
      for (int i = 0; i < b.n(); ++i) t.inv_cols[i] = inv.col(i);
      t.c = b.complement();
      for (std::size_t r = 0; r < g; ++r) t.in[r] = static_cast<const unsigned char*>(ins[r]);
      t.n = b.n();
      t.m = plan.local_bits;
      t.elem_bytes = eb;
      t.rank = d;
      DeviceBuffer bad(sizeof(u64));
      bad.fill_bytes(0);
      verify_rank<<<1024, 256>>>(static_cast<const unsigned char*>(outs[d]), t, bad.as<u64>());
      BMMC_CUDA_CHECK(cudaGetLastError());
      u64 w = 0;
      bad.download(&w, sizeof w);
      wrong += w;
    }
    return wrong;
  };
  for (PeerEngine engine : {PeerEngine::Push, PeerEngine::Copy}) {
    sync_all(devices);
    const auto t0 = std::chrono::steady_clock::now();
    PeerOptions o;
    o.engine = engine;
    std::unique_ptr<PeerPermuter> p;
    try {
      p = std::make_unique<PeerPermuter>(b, eb, devices, o);
    } catch (const std::invalid_argument& e) {
      PeerBenchRow r;
      r.variant = to_string(engine);
      r.verified = false;
      r.note = e.what();
      rows.push_back(r);
      continue;
    }
    const std::vector<void*> s = p->scratch_bytes() ? scratches : std::vector<void*>{};
    for (std::size_t r = 0; r < g; ++r) out[r].fill_bytes(0xA5);
    (*p)(ins, outs, s);
    sync_all(devices);
    const double first = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    PeerBenchRow row = time_host(to_string(engine), devices, reps, [&] { (*p)(ins, outs, s); });
    row.first_use_ms = first;
    row.note = engine == PeerEngine::Push ? (p->push_plan().one_pass() ? "one pass" : "push + local finish")
                                          : "pre-pass, cudaMemcpyPeerAsync, post-pass";
    const u64 wrong = peers ? mismatches() : 0;
    row.verified = peers && wrong == 0;
    if (!peers) row.note += "; not verified (no peer access to read the sources)";
    rows.push_back(row);
  }
  if (is_involution(b)) {  // in place: the data buffers are the outputs, reset from the inputs before the check
    sync_all(devices);
    const auto t0 = std::chrono::steady_clock::now();
    try {
      const PeerSwapPermuter p(b, eb, devices);
      for (std::size_t r = 0; r < g; ++r) {
        ScopedDevice on(devices[r]);
        BMMC_CUDA_CHECK(cudaMemcpy(outs[r], ins[r], bytes, cudaMemcpyDeviceToDevice));
      }
      p(outs);
      sync_all(devices);
      const double first = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      const bool ok = mismatches() == 0;
      PeerBenchRow row = time_host("in-place", devices, reps, [&] { p(outs); });
      row.first_use_ms = first;
      row.verified = ok;
      row.note = p.plan().conjugated() ? "local swap, swap across ranks, local swap" : "swap across ranks";
      rows.push_back(row);
    } catch (const std::invalid_argument& e) {
      PeerBenchRow r;
      r.variant = "in-place";
      r.verified = false;
      r.note = e.what();
      rows.push_back(r);
    }
  }
  for (PeerBenchRow& r : rows) {
    r.crossing_gb = crossing / 1e9;
    if (r.median_ms > 0) r.pct_bound = 100.0 * rows[1].median_ms / r.median_ms;
  }
  return rows;
}

}  // namespace bmmc
