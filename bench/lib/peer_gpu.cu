// bench_peer (see include/bmmc/bench/peer_gpu.hpp).
#include "bmmc/bench/peer_gpu.hpp"
#include "bmmc/bench/inplace_gpu.hpp"

#include <library_types.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

#include "bmmc/core/buffers.hpp"
#include "bmmc/cpu/reference.hpp"
#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/error.hpp"
#include "bmmc/cuda/memory.hpp"
#include "bmmc/cuda/permute.hpp"
#include "bmmc/dist/alltoall.hpp"
#include "bmmc/core/involution.hpp"
#include "bmmc/distributed.hpp"
#include "bmmc/peer/peer_access.hpp"
#include "fill_words.cuh"
#include "timing.hpp"
#include "vendor_libs.hpp"

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

// NCCL all-to-all of exactly the off-rank chunks the engines move (the plan's counts), over NCCL opened with
// dlopen (vendor_libs.hpp): the anchor of the portable engine. A row with a note when NCCL is not there.
// The copy-pieces row's note (nvcc cannot compile fmt's compile-time format strings here).
std::string pieces_note(int pieces, double scratch_fraction) {
  char s[96];
  std::snprintf(s, sizeof s, "pack, cudaMemcpyPeerAsync, unpack in %d pieces, scratch %.3f of the array", pieces,
                scratch_fraction);
  return s;
}

PeerBenchRow nccl_alltoall_row(const std::vector<int>& devices, const std::vector<AllToAllStep>& steps,
                               const std::vector<std::vector<std::uint64_t>>& send_at,
                               const std::vector<std::vector<std::uint64_t>>& recv_at,
                               const std::vector<const void*>& ins, const std::vector<void*>& scratches, int eb,
                               std::size_t bytes, int reps, bool peers) {
  PeerBenchRow row;
  row.variant = "nccl-alltoall";
  std::string why;
  const auto nccl = bench_detail::load_nccl(&why);
  if (!nccl) {
    row.verified = false;
    row.note = "not measured: NCCL not loaded (" + why + ")";
    return row;
  }
  const std::size_t g = devices.size();
  std::vector<void*> comms(g, nullptr);
  std::vector<cudaStream_t> streams(g, nullptr);
  try {
    nccl->check(nccl->comm_init_all(comms.data(), static_cast<int>(g), devices.data()), "ncclCommInitAll");
    for (std::size_t r = 0; r < g; ++r) {
      ScopedDevice on(devices[r]);
      BMMC_CUDA_CHECK(cudaStreamCreateWithFlags(&streams[r], cudaStreamNonBlocking));
    }
    auto run = [&] {
      nccl->check(nccl->group_start(), "ncclGroupStart");
      for (std::size_t r = 0; r < g; ++r)
        for (std::size_t d = 0; d < g; ++d) {
          if (d == r) continue;
          if (const std::uint64_t c = steps[r].send_counts[d])
            nccl->check(nccl->send(static_cast<const unsigned char*>(ins[r]) + send_at[r][d] * eb, c * eb,
                                   bench_detail::Nccl::kUint8, static_cast<int>(d), comms[r], streams[r]),
                        "ncclSend");
          if (const std::uint64_t c = steps[r].recv_counts[d])
            nccl->check(nccl->recv(static_cast<unsigned char*>(scratches[r]) + recv_at[r][d] * eb, c * eb,
                                   bench_detail::Nccl::kUint8, static_cast<int>(d), comms[r], streams[r]),
                        "ncclRecv");
        }
      nccl->check(nccl->group_end(), "ncclGroupEnd");
    };
    for (std::size_t r = 0; r < g; ++r) {
      ScopedDevice on(devices[r]);
      BMMC_CUDA_CHECK(cudaMemset(scratches[r], 0xA5, bytes));
    }
    run();
    sync_all(devices);
    u64 wrong = 0;
    if (peers)
      for (std::size_t d = 0; d < g; ++d) {
        ScopedDevice on(devices[d]);
        DeviceBuffer bad(sizeof(u64));
        bad.fill_bytes(0);
        for (std::size_t r = 0; r < g; ++r)
          if (const std::uint64_t c = steps[r].send_counts[d]; c && r != d)
            bench_detail::count_differences<<<1024, 256>>>(static_cast<const unsigned char*>(scratches[d]) + recv_at[d][r] * eb,
                                             static_cast<const unsigned char*>(ins[r]) + send_at[r][d] * eb, c * eb,
                                             bad.as<u64>());
        BMMC_CUDA_CHECK(cudaGetLastError());
        u64 w = 0;
        bad.download(&w, sizeof w);
        wrong += w;
      }
    row = time_host("nccl-alltoall", devices, reps, run);
    row.verified = peers && wrong == 0;
    row.note = "grouped ncclSend/ncclRecv of the off-rank chunks";
    if (!peers) row.note += "; not verified (no peer access to read the sources)";
  } catch (const std::exception& e) {
    row.verified = false;
    row.note = std::string("not measured: ") + e.what();
  }
  for (std::size_t r = 0; r < g; ++r) {
    if (streams[r]) {
      cudaSetDevice(devices[r]);
      cudaStreamDestroy(streams[r]);
    }
    if (comms[r]) nccl->comm_destroy(comms[r]);
  }
  return row;
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
    in[r].fill_bytes(0);  // the tail below a whole word (arrays of fewer than 8 bytes)
    bench_detail::fill_rank_words<<<4096, 256>>>(in[r].as<u64>(), bytes / 8, r);
    BMMC_CUDA_CHECK(cudaGetLastError());
  }
  sync_all(devices);
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
  // Each rank sends its off-rank bytes in one piece per destination: what any engine must move at least. Every
  // (source, destination) pair copies on its own non-blocking stream of the source device, so that all
  // directions run at once (on the devices' legacy default streams they serialised: 197 GB/s per direction
  // measured against 390 GB/s).
  std::vector<std::vector<cudaStream_t>> pair_streams(g, std::vector<cudaStream_t>(g, nullptr));
  for (std::size_t r = 0; r < g; ++r) {
    ScopedDevice on(devices[r]);
    for (std::size_t d = 0; d < g; ++d)
      if (d != r) BMMC_CUDA_CHECK(cudaStreamCreateWithFlags(&pair_streams[r][d], cudaStreamNonBlocking));
  }
  struct StreamsGuard {
    const std::vector<int>& devices;
    std::vector<std::vector<cudaStream_t>>& streams;
    ~StreamsGuard() {
      for (std::size_t r = 0; r < streams.size(); ++r) {
        cudaSetDevice(devices[r]);
        for (cudaStream_t st : streams[r])
          if (st) cudaStreamDestroy(st);
      }
    }
  } streams_guard{devices, pair_streams};
  rows.push_back(time_host("peer-copy-bound", devices, reps, [&] {
    for (std::size_t r = 0; r < g; ++r) {
      ScopedDevice on(devices[r]);
      for (std::size_t d = 0; d < g; ++d)
        if (const std::uint64_t c = steps[r].send_counts[d]; c && d != r)
          BMMC_CUDA_CHECK(cudaMemcpyPeerAsync(static_cast<unsigned char*>(scratches[d]) + recv_at[d][r] * eb, devices[d],
                                              static_cast<const unsigned char*>(ins[r]) + send_at[r][d] * eb,
                                              devices[r], c * eb, pair_streams[r][d]));
    }
  }));
  rows.back().note = "cudaMemcpyPeerAsync, one stream per direction";
  // The same chunks through NCCL (one communicator per device from ncclCommInitAll, every rank's sends and
  // receives in one group), verified byte for byte against the sources.
  rows.push_back(nccl_alltoall_row(devices, steps, send_at, recv_at, ins, scratches, eb, bytes, reps, peers));
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
  // The engines through the distributed door, each asked for by name (a row with the door's reason where it
  // cannot run): the push engine, the exchange and the pieces on the copy engines.
  for (DistEngine engine : {DistEngine::Push, DistEngine::Exchange, DistEngine::Pieces}) {
    sync_all(devices);
    const auto t0 = std::chrono::steady_clock::now();
    DistributedOptions o;
    o.engine = engine;
    std::unique_ptr<DistributedPermuter> p;
    try {
      p = std::make_unique<DistributedPermuter>(b, eb, DeviceGroup{devices}, o);
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
    row.note = engine == DistEngine::Push       ? (p->scratch_bytes() == 0 ? "one pass" : "push + local finish")
               : engine == DistEngine::Exchange ? "pre-pass, cudaMemcpyPeerAsync, post-pass"
                                                : pieces_note(p->pieces(), 1.0 * p->scratch_bytes() / p->local_bytes());
    const u64 wrong = peers ? mismatches() : 0;
    row.verified = peers && wrong == 0;
    if (!peers) row.note += "; not verified (no peer access to read the sources)";
    rows.push_back(row);
  }
  if (is_involution(b)) {  // in place: the data buffers are the outputs, reset from the inputs before the check
    // The default (staged chunks through the copies where the map allows), then the staged push for comparison.
    bool staged = false;
    for (DistEngine chunks_by : {DistEngine::Auto, DistEngine::Push}) {
      if (chunks_by == DistEngine::Push && !staged) break;
      const std::string name = chunks_by == DistEngine::Auto ? "in-place" : "in-place-push";
      sync_all(devices);
      const auto t0 = std::chrono::steady_clock::now();
      try {
        DistributedOptions o;
        o.in_place = true;
        o.staged_engine = chunks_by;
        const DistributedPermuter p(b, eb, DeviceGroup{devices}, o);
        staged = staged || p.engine() == DistEngine::StagedSwap;
        for (std::size_t r = 0; r < g; ++r) {
          ScopedDevice on(devices[r]);
          BMMC_CUDA_CHECK(cudaMemcpy(outs[r], ins[r], bytes, cudaMemcpyDeviceToDevice));
        }
        p.permute_in_place(outs);
        sync_all(devices);
        const double first = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        const bool ok = mismatches() == 0;
        PeerBenchRow row = time_host(name, devices, reps, [&] { p.permute_in_place(outs); });
        row.first_use_ms = first;
        row.verified = ok;
        row.note = p.engine() == DistEngine::StagedSwap
                       ? std::to_string(p.pieces()) + " chunks through the " +
                             (chunks_by == DistEngine::Push ? "push engine" : "copy engines")
                       : "swap across ranks between local swaps where the map moves low bits";
        rows.push_back(row);
      } catch (const std::invalid_argument& e) {
        PeerBenchRow r;
        r.variant = name;
        r.verified = false;
        r.note = e.what();
        rows.push_back(r);
      }
    }
  }
  // NVIDIA cuStateVec's multi-device index-bit swap on the same data, in place, one handle per device: the
  // anchor for bit swaps of complex state vectors (8- or 16-byte elements, at most 32 devices, peer access).
  if (const auto swaps = as_bit_swaps(b); swaps && !swaps->empty() && (eb == 8 || eb == 16) && g <= 32) {
    PeerBenchRow row;
    row.variant = "custatevec-swap";
    std::string why;
    const auto sv = bench_detail::load_custatevec(&why);
    if (!sv || !sv->multi_device_swap || !peers) {
      row.verified = false;
      row.note = !sv ? "not measured: cuStateVec not loaded (" + why + ")"
                     : !peers ? "not measured: needs peer access between every pair of devices"
                              : "not measured: this cuStateVec lacks custatevecMultiDeviceSwapIndexBits";
      rows.push_back(row);
    } else {
      std::vector<void*> handles(g, nullptr);
      std::vector<int2> pairs;
      for (const auto& [i, j] : *swaps) pairs.push_back(make_int2(i, j));
      const cudaDataType_t type = eb == 8 ? CUDA_C_32F : CUDA_C_64F;
      auto swap = [&] {
        const int st = sv->multi_device_swap(handles.data(), static_cast<std::uint32_t>(g), outs.data(), type,
                                             static_cast<std::uint32_t>(b.n() - plan.local_bits),
                                             static_cast<std::uint32_t>(plan.local_bits), pairs.data(),
                                             static_cast<std::uint32_t>(pairs.size()), nullptr, nullptr, 0,
                                             /*CUSTATEVEC_DEVICE_NETWORK_TYPE_SWITCH*/ 1);
        if (st != 0) throw std::runtime_error("custatevecMultiDeviceSwapIndexBits failed with status " + std::to_string(st));
      };
      try {
        for (std::size_t r = 0; r < g; ++r) {
          ScopedDevice on(devices[r]);
          if (sv->create(&handles[r]) != 0) throw std::runtime_error("custatevecCreate failed");
          BMMC_CUDA_CHECK(cudaMemcpy(outs[r], ins[r], bytes, cudaMemcpyDeviceToDevice));
        }
        sync_all(devices);
        const auto t0 = std::chrono::steady_clock::now();
        swap();
        sync_all(devices);
        const double first = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        const bool ok = mismatches() == 0;
        row = time_host("custatevec-swap", devices, reps, swap);
        row.first_use_ms = first;
        row.verified = ok;
        row.note = "custatevecMultiDeviceSwapIndexBits, cuStateVec " + std::to_string(sv->version());
      } catch (const std::exception& e) {
        row.verified = false;
        row.note = std::string("not measured: ") + e.what();
      }
      for (std::size_t r = 0; r < g; ++r)
        if (handles[r]) {
          cudaSetDevice(devices[r]);
          sv->destroy(handles[r]);
        }
      rows.push_back(row);
    }
  }
  // The bound is the faster of the two measured exchanges: where every rank sends to several others (k ≥ 2) the
  // copy engines reached only ~200 GB/s out of each of four H200s and NCCL's all-to-all beat them 1.8×.
  double bound = rows[1].median_ms;
  if (rows[2].median_ms > 0 && rows[2].verified) bound = std::min(bound, rows[2].median_ms);
  for (PeerBenchRow& r : rows) {
    r.crossing_gb = crossing / 1e9;
    if (r.median_ms > 0) r.pct_bound = 100.0 * bound / r.median_ms;
  }
  return rows;
}

}  // namespace bmmc
