// bmmc_nccl_bench: the NCCL engines through the distributed door (bmmc/distributed.hpp) timed beside NCCL's own all-to-all
// of the same chunks, one process driving every GPU of the machine (one thread per rank, communicators from
// ncclCommInitAll), as `torchrun`-style one-process-per-GPU users would run it rank by rank.
//
//   bmmc_nccl_bench SPEC N ELEM_BYTES [REPS [PIECES [DEPTH]]]     e.g.  bmmc_nccl_bench random-bmmc:1 33 8 5 64 4
//
// Rows (host wall clock from every rank released by a barrier to every rank's stream done, median of REPS):
// nccl-alltoall (grouped ncclSend/ncclRecv of the plan's off-rank chunks, the engine's exchange alone),
// nccl-alltoall-in-pieces (the same, one group per piece of the engine's schedule),
// nccl-engine (input kept, pipelined in PIECES pieces, default 0 = the engine's own default, the fewest pieces
// within 1/8 scratch — 26 for two ranks: packs, exchanges and unpacks overlap, scratch (2^k − 1 + 2^k)·2 pieces:
// the engine's own, registered with NCCL), nccl-engine-2-comms (its groups alternating between the
// caller's communicator and one split from it), nccl-engine-cudaMalloc-scratch (the caller's unregistered scratch), nccl-alltoall-in-pieces-2-comms (the pieces' exchange alone over two communicators), nccl-engine-1-piece (input kept, not pipelined: pre-pass, exchange into a local array of
// scratch, post-pass) and nccl-engine-destroying (the input is the receive buffer). Each engine row is verified on the devices against the push engine of the same
// permutation (a DeviceGroup), byte for byte. Built only where NCCL is found (BMMC_NCCL); it is
// a separate program so that the CLI never needs libnccl.
// Then, with out and scratch moved into NCCL symmetric memory (NcclWindow: ncclMemAlloc + window registration):
// peer-push (the push engine over a DeviceGroup, one thread driving every GPU, the fused engine's single-process twin),
// nccl-fused (the door's Auto over NCCL: the push kernel storing through the windows' ncclGetLsaPointer addresses; one pass
// where the map keeps output runs on one rank, push + local finish otherwise), and, with the windows also
// registered for point-to-point (ncclCommRegister), nccl-alltoall-registered: NCCL's exchange between registered
// buffers; for involutions nccl-in-place (the door in place on the out window).
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bmmc/core/buffers.hpp"
#include "bmmc/core/spec.hpp"
#include "bmmc/cuda/device.hpp"
#include "bmmc/cuda/error.hpp"
#include "bmmc/cuda/memory.hpp"
#include "bmmc/dist/alltoall.hpp"
#include "bmmc/dist/schedule.hpp"
#include "bmmc/distributed.hpp"
#include "bmmc/nccl/window.hpp"
#include "bmmc/peer/peer_access.hpp"
#include "../lib/fill_words.cuh"

namespace {

using namespace bmmc;
using u64 = unsigned long long;

void nccl_ok(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) throw std::runtime_error(std::string(what) + ": " + ncclGetErrorString(r));
}

// The portable engine as the door runs it: pipelined in pieces where the map's pieces can be cut, else in one
// exchange (`why` says why not in pieces).
DistributedPermuter portable(const Bmmc& global, int eb, ncclComm_t comm, DistributedOptions o, std::string* why) {
  if (o.pieces != 1) {
    o.engine = DistEngine::Pieces;
    try {
      return DistributedPermuter(global, eb, comm, o);
    } catch (const std::invalid_argument& e) {
      if (why) *why = e.what();
    }
  }
  o.engine = DistEngine::Exchange;
  o.pieces = 1;
  return DistributedPermuter(global, eb, comm, o);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s SPEC N ELEM_BYTES [REPS [PIECES [DEPTH]]]\n", argv[0]);
    return 2;
  }
  const int n = std::atoi(argv[2]), eb = std::atoi(argv[3]), reps = argc > 4 ? std::atoi(argv[4]) : 5;
  const int pieces = argc > 5 ? std::atoi(argv[5]) : 0;  // 0: the engine's default, the fewest within 1/8 scratch
  const int depth = argc > 6 ? std::atoi(argv[6]) : 2;
  const Bmmc global = parse_spec(argv[1], n);
  int count = 0;
  BMMC_CUDA_CHECK(cudaGetDeviceCount(&count));
  int g = 0;
  while ((2 << g) <= count) ++g;
  const int ranks = 1 << g;
  std::vector<int> devices(ranks);
  for (int r = 0; r < ranks; ++r) devices[r] = r;
  const DistPlan plan = make_dist_plan(global, g, eb);
  const std::size_t bytes = array_bytes(plan.local_bits, eb);
  const bool peers = peer_obstacle(devices).empty();
  if (peers) enable_peer_access(devices);
  std::vector<ncclComm_t> comms(ranks);
  nccl_ok(ncclCommInitAll(comms.data(), ranks, devices.data()), "ncclCommInitAll");
  std::vector<DeviceBuffer> in, out, scratch, ref;
  std::vector<void*> out_at(ranks);  // where the rows write their output (verified against ref)
  std::vector<cudaStream_t> streams(ranks);
  std::vector<std::optional<DistributedPermuter>> engines(ranks), two_comms(ranks), unpipelined(ranks), destroying_engines(ranks);
  DistributedOptions opt;
  opt.check_agreement = false;  // the timed calls; the check costs one all-gather and a stream sync per call
  opt.pieces = pieces;
  opt.depth = depth;
  DistributedOptions one = opt;
  one.pieces = 1;
  DistributedOptions two = opt;
  two.exchange_comms = 2;
  DistributedOptions destroy = one;
  destroy.destroy_input = true;
  std::string not_in_pieces;
  for (int r = 0; r < ranks; ++r) {
    ScopedDevice on(r);
    in.emplace_back(bytes);
    out.emplace_back(bytes);
    scratch.emplace_back(bytes);
    ref.emplace_back(bytes);
    out_at[r] = out[r].get();
    bench_detail::fill_rank_words<<<4096, 256>>>(in[r].as<u64>(), bytes / 8, r);
    BMMC_CUDA_CHECK(cudaGetLastError());
    BMMC_CUDA_CHECK(cudaStreamCreateWithFlags(&streams[r], cudaStreamNonBlocking));
    engines[r].emplace(portable(global, eb, comms[r], opt, r == 0 ? &not_in_pieces : nullptr));
    two_comms[r].emplace(portable(global, eb, comms[r], two, nullptr));
    unpipelined[r].emplace(portable(global, eb, comms[r], one, nullptr));
    destroying_engines[r].emplace(global, eb, comms[r], destroy);
  }
  // The reference: the same permutation on the GPUs of this process (itself verified against the CPU reference by
  // the door's tests and `bmmc bench --gpus`).
  {
    std::vector<const void*> ins;
    std::vector<void*> refs, scr;
    for (int r = 0; r < ranks; ++r) {
      ins.push_back(in[r].get());
      refs.push_back(ref[r].get());
      scr.push_back(scratch[r].get());
    }
    const DistributedPermuter single(global, eb, DeviceGroup{devices});
    single(ins, refs, single.scratch_bytes() ? scr : std::vector<void*>{});
    for (int r = 0; r < ranks; ++r) {
      ScopedDevice on(r);
      BMMC_CUDA_CHECK(cudaDeviceSynchronize());
    }
  }
  double crossing = 0;  // bytes every rank sends to other ranks, summed
  std::vector<AllToAllStep> steps;
  for (int r = 0; r < ranks; ++r) {
    steps.push_back(alltoall_step(plan, static_cast<BitVec>(r)));
    for (int d = 0; d < ranks; ++d)
      if (d != r) crossing += static_cast<double>(steps[r].send_counts[d]) * eb;
  }
  // Every rank's output (out_at) against the push engine's (ref), on the devices: "yes", "NO (…)" or "-" without
  // peer access (no reference then).
  auto verify_output = [&]() -> std::string {
    if (!peers) return "-";
    u64 wrong = 0;
    for (int r = 0; r < ranks; ++r) {
      ScopedDevice on(r);
      DeviceBuffer bad(sizeof(u64));
      bad.fill_bytes(0);
      bench_detail::count_differences<<<1024, 256>>>(static_cast<const unsigned char*>(out_at[r]),
                                                     ref[r].as<unsigned char>(), bytes, bad.as<u64>());
      BMMC_CUDA_CHECK(cudaGetLastError());
      u64 w = 0;
      bad.download(&w, sizeof w);
      wrong += w;
    }
    return wrong == 0 ? "yes" : "NO (" + std::to_string(wrong) + " bytes differ)";
  };
  // One thread per rank; `body(r)` enqueues on streams[r]; each rep: barrier, enqueue, sync, barrier.
  auto time_rows = [&](const char* name, const std::function<void(int)>& body, bool verify) {
    std::vector<std::vector<double>> ms(ranks);
    std::barrier sync_point(ranks);
    std::vector<std::exception_ptr> errors(ranks);
    std::vector<std::thread> threads;
    for (int r = 0; r < ranks; ++r)
      threads.emplace_back([&, r] {
        try {
          BMMC_CUDA_CHECK(cudaSetDevice(r));
          for (int i = 0; i < reps + 1; ++i) {
            sync_point.arrive_and_wait();
            const auto t0 = std::chrono::steady_clock::now();
            body(r);
            BMMC_CUDA_CHECK(cudaStreamSynchronize(streams[r]));
            sync_point.arrive_and_wait();
            ms[r].push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
          }
        } catch (...) {
          errors[r] = std::current_exception();
          sync_point.arrive_and_drop();
        }
      });
    for (auto& t : threads) t.join();
    for (auto& e : errors)
      if (e) std::rethrow_exception(e);
    std::vector<double> worst;  // per rep, the slowest rank (the collective is done when every rank is)
    for (int i = 1; i <= reps; ++i) {
      double w = 0;
      for (int r = 0; r < ranks; ++r) w = std::max(w, ms[r][i]);
      worst.push_back(w);
    }
    const std::string check = verify ? verify_output() : "-";
    const double med = median(worst);
    std::printf("%-24s %10.3f ms  %8.1f GB/s per rank sent  verified %s\n", name, med,
                crossing / ranks / (med * 1e6), check.c_str());
    std::fflush(stdout);
    return med;
  };
  std::printf("bmmc_nccl_bench: %s, n = %d, %d-byte elements, %d ranks of %.2f GiB, k = %d, %.2f GB cross in all\n",
              argv[1], n, eb, ranks, bytes / 1073741824.0, plan.k, crossing / 1e9);
  const double a2a = time_rows("nccl-alltoall", [&](int r) {
    const AllToAllStep& s = steps[r];
    const auto send_at = displacements(s.send_counts), recv_at = displacements(s.recv_counts);
    nccl_ok(ncclGroupStart(), "ncclGroupStart");
    for (int d = 0; d < ranks; ++d) {
      if (d == r) continue;
      if (s.send_counts[d])
        nccl_ok(ncclSend(in[r].as<unsigned char>() + send_at[d] * eb, s.send_counts[d] * eb, ncclUint8, d, comms[r],
                         streams[r]), "ncclSend");
      if (s.recv_counts[d])
        nccl_ok(ncclRecv(scratch[r].as<unsigned char>() + recv_at[d] * eb, s.recv_counts[d] * eb, ncclUint8, d,
                         comms[r], streams[r]), "ncclRecv");
    }
    nccl_ok(ncclGroupEnd(), "ncclGroupEnd");
  }, false);
  std::printf("nccl-engine: %s, %d pieces, ring of %d, scratch %.1f MiB per rank (%.3f of the local array)\n",
              engines[0]->engine() == DistEngine::Pieces ? "pipelined" : ("not pipelined: " + not_in_pieces).c_str(),
              engines[0]->pieces(), depth, engines[0]->scratch_bytes() / 1048576.0,
              static_cast<double>(engines[0]->scratch_bytes()) / bytes);
  // The exchange alone, cut into the engine's pieces (piece i = elements [b_i, b_i+1) of every chunk): NCCL's cost
  // of many smaller groups, without the packs and unpacks.
  const PieceSchedule cut = make_piece_schedule(plan, pieces, depth);
  // The same pieces alternating between two communicators (ncclCommSplit of the first) on two streams: whether
  // NCCL overlaps one group's ramp-down with the next one's ramp-up when they are independent.
  std::vector<ncclComm_t> comms2(ranks);
  std::vector<cudaStream_t> streams2(ranks);
  nccl_ok(ncclGroupStart(), "ncclGroupStart");
  for (int r = 0; r < ranks; ++r) nccl_ok(ncclCommSplit(comms[r], 0, r, &comms2[r], nullptr), "ncclCommSplit");
  nccl_ok(ncclGroupEnd(), "ncclGroupEnd (ncclCommSplit)");
  for (int r = 0; r < ranks; ++r) {
    ScopedDevice on(r);
    BMMC_CUDA_CHECK(cudaStreamCreateWithFlags(&streams2[r], cudaStreamNonBlocking));
  }
  // Rank r's exchange cut into the pieces, piece i on communicator and stream i mod `alternate` (1 or 2).
  const auto exchange_in_pieces = [&](int r, int alternate) {
    const AllToAllStep& s = steps[r];
    const auto send_at = displacements(s.send_counts), recv_at = displacements(s.recv_counts);
    for (int i = 0; i < cut.pieces; ++i) {
      const u64 lo = cut.bounds[i], len = cut.bounds[i + 1] - lo;
      ncclComm_t c = i % alternate ? comms2[r] : comms[r];
      cudaStream_t st = i % alternate ? streams2[r] : streams[r];
      nccl_ok(ncclGroupStart(), "ncclGroupStart");
      for (int d = 0; d < ranks; ++d) {
        if (d == r) continue;
        if (s.send_counts[d])
          nccl_ok(ncclSend(in[r].as<unsigned char>() + (send_at[d] + lo) * eb, len * eb, ncclUint8, d, c, st), "ncclSend");
        if (s.recv_counts[d])
          nccl_ok(ncclRecv(scratch[r].as<unsigned char>() + (recv_at[d] + lo) * eb, len * eb, ncclUint8, d, c, st),
                  "ncclRecv");
      }
      nccl_ok(ncclGroupEnd(), "ncclGroupEnd");
    }
    BMMC_CUDA_CHECK(cudaStreamSynchronize(streams2[r]));
  };
  time_rows("nccl-alltoall-in-pieces", [&](int r) { exchange_in_pieces(r, 1); }, false);
  time_rows("nccl-alltoall-in-pieces-2-comms", [&](int r) { exchange_in_pieces(r, 2); }, false);
  for (int r = 0; r < ranks; ++r) out[r].fill_bytes(0xA5);
  const double kept = time_rows("nccl-engine", [&](int r) {
    (*engines[r])({in[r].get()}, {out[r].get()}, {}, {streams[r]});  // its own, registered scratch
  }, true);
  for (int r = 0; r < ranks; ++r) out[r].fill_bytes(0xA5);
  time_rows("nccl-engine-2-comms", [&](int r) {
    (*two_comms[r])({in[r].get()}, {out[r].get()}, {}, {streams[r]});  // groups alternating between two communicators
  }, true);
  for (int r = 0; r < ranks; ++r) out[r].fill_bytes(0xA5);
  time_rows("nccl-engine-cudaMalloc-scratch", [&](int r) {
    (*engines[r])({in[r].get()}, {out[r].get()}, {scratch[r].get()}, {streams[r]});  // the caller's, unregistered
  }, true);
  for (int r = 0; r < ranks; ++r) out[r].fill_bytes(0xA5);
  const double kept1 = time_rows("nccl-engine-1-piece", [&](int r) {
    (*unpipelined[r])({in[r].get()}, {out[r].get()}, {scratch[r].get()}, {streams[r]});
  }, true);
  // Destroying: the input is the receive buffer, so each rep starts from a fresh copy of the input (scratch),
  // whose copy is timed with it; the copy's own time is measured alone and reported beside.
  for (int r = 0; r < ranks; ++r) out[r].fill_bytes(0xA5);
  const double destroying = time_rows("nccl-engine-destroying", [&](int r) {
    BMMC_CUDA_CHECK(cudaMemcpyAsync(scratch[r].get(), in[r].get(), bytes, cudaMemcpyDeviceToDevice, streams[r]));
    (*destroying_engines[r])({scratch[r].get()}, {out[r].get()}, {}, {streams[r]});
  }, true);
  const double copy = time_rows("  (its input copy alone)", [&](int r) {
    BMMC_CUDA_CHECK(cudaMemcpyAsync(scratch[r].get(), in[r].get(), bytes, cudaMemcpyDeviceToDevice, streams[r]));
  }, false);
  std::printf("nccl-engine: %.1f%% of the all-to-all's rate (input kept, %d pieces), %.1f%% in one piece, %.1f%% "
              "destroying (its copy subtracted)\n",
              100.0 * a2a / kept, engines[0]->pieces(), 100.0 * a2a / kept1, 100.0 * a2a / (destroying - copy));

  // Symmetric memory: out and scratch become NCCL windows (the cudaMalloc buffers go first: the memory is tight).
  out.clear();
  scratch.clear();
  std::vector<NcclWindow> out_win(ranks), scratch_win(ranks);
  std::vector<std::optional<DistributedPermuter>> fused(ranks);
  {
    std::vector<std::exception_ptr> errors(ranks);
    std::vector<std::thread> threads;
    for (int r = 0; r < ranks; ++r)  // collective: one thread per rank
      threads.emplace_back([&, r] {
        try {
          ScopedDevice on(r);
          out_win[r] = NcclWindow::allocate(comms[r], bytes);
          scratch_win[r] = NcclWindow::allocate(comms[r], bytes);
          fused[r].emplace(global, eb, comms[r], opt);
          out_at[r] = out_win[r].data();
        } catch (...) {
          errors[r] = std::current_exception();
        }
      });
    for (auto& t : threads) t.join();
    for (auto& e : errors)
      if (e) std::rethrow_exception(e);
  }
  const auto poison = [&] {
    for (int r = 0; r < ranks; ++r) {
      ScopedDevice on(r);
      BMMC_CUDA_CHECK(cudaMemset(out_win[r].data(), 0xA5, bytes));
    }
  };
  double push = 0;
  if (peers) {
    DistributedOptions push_only;
    push_only.engine = DistEngine::Push;  // the push (+ finish), as the fused engine ran it before its copy-engine path
    const DistributedPermuter peer(global, eb, DeviceGroup{devices}, push_only);
    std::vector<const void*> ins;
    std::vector<void*> outs, scr;
    for (int r = 0; r < ranks; ++r) {
      ins.push_back(in[r].get());
      outs.push_back(out_win[r].data());
      scr.push_back(scratch_win[r].data());
    }
    poison();
    // One thread drives every GPU: rank 0's thread enqueues the whole call, the others only wait for their stream.
    push = time_rows("peer-push", [&](int r) {
      if (r != 0) return;
      peer(ins, outs, peer.scratch_bytes() ? scr : std::vector<void*>{}, streams);
      for (int d = 0; d < ranks; ++d) BMMC_CUDA_CHECK(cudaStreamSynchronize(streams[d]));
    }, true);
  }
  std::printf("nccl-fused: %s, %s, scratch %.1f MiB per rank\n",
              fused[0]->fallback_reason().empty() ? "fused" : ("portable: " + fused[0]->fallback_reason()).c_str(),
              fused[0]->engine() == DistEngine::Pieces
                  ? ("copy engines in " + std::to_string(fused[0]->pieces()) + " pieces").c_str()
              : fused[0]->engine() != DistEngine::Push ? "the portable engine"
              : fused[0]->scratch_bytes() == 0        ? "one pass"
                                                      : "push + local finish",
              fused[0]->scratch_bytes() / 1048576.0);
  poison();
  const double fused_ms = time_rows("nccl-fused", [&](int r) {
    (*fused[r])(in[r].get(), out_win[r], &scratch_win[r], streams[r]);
  }, true);
  // In place (involutions only): the input copied into the out window once; the calls alternate f and f∘f = id,
  // so after an odd number of them the window holds f(in), which is verified.
  std::vector<std::optional<DistributedPermuter>> swaps(ranks);
  try {
    DistributedOptions in_place = opt;
    in_place.in_place = true;
    for (int r = 0; r < ranks; ++r) {
      ScopedDevice on(r);
      swaps[r].emplace(global, eb, comms[r], in_place);
    }
  } catch (const std::invalid_argument& e) {
    std::printf("nccl-in-place: not run (%s)\n", e.what());
    for (auto& sw : swaps) sw.reset();
  }
  if (swaps[0]) {
    std::printf("nccl-in-place: %s\n", swaps[0]->describe().c_str());
    for (int r = 0; r < ranks; ++r) {
      ScopedDevice on(r);
      BMMC_CUDA_CHECK(cudaMemcpy(out_win[r].data(), in[r].get(), bytes, cudaMemcpyDeviceToDevice));
    }
    const auto swap_once = [&](int r) { swaps[r]->permute_in_place(out_win[r], streams[r]); };
    time_rows("nccl-in-place", swap_once, false);  // reps + 1 calls
    if ((reps + 1) % 2 == 0) {  // one more call (collective: a thread per rank), so that the data hold f(in)
      std::vector<std::thread> threads;
      for (int r = 0; r < ranks; ++r)
        threads.emplace_back([&, r] {
          ScopedDevice on(r);
          swap_once(r);
          BMMC_CUDA_CHECK(cudaStreamSynchronize(streams[r]));
        });
      for (auto& t : threads) t.join();
    }
    std::printf("nccl-in-place: after an odd number of calls, verified %s\n", verify_output().c_str());
  }
  // The windows registered for point-to-point as well: NCCL may then move registered send/receive buffers without
  // its own staging buffers.
  std::vector<void*> out_reg(ranks), scratch_reg(ranks);
  for (int r = 0; r < ranks; ++r) {
    ScopedDevice on(r);
    nccl_ok(ncclCommRegister(comms[r], out_win[r].data(), bytes, &out_reg[r]), "ncclCommRegister (out)");
    nccl_ok(ncclCommRegister(comms[r], scratch_win[r].data(), bytes, &scratch_reg[r]), "ncclCommRegister (scratch)");
  }
  const double a2a_reg = time_rows("nccl-alltoall-registered", [&](int r) {
    const AllToAllStep& s = steps[r];
    const auto send_at = displacements(s.send_counts), recv_at = displacements(s.recv_counts);
    auto* send = static_cast<unsigned char*>(out_win[r].data());
    auto* recv = static_cast<unsigned char*>(scratch_win[r].data());
    nccl_ok(ncclGroupStart(), "ncclGroupStart");
    for (int d = 0; d < ranks; ++d) {
      if (d == r) continue;
      if (s.send_counts[d])
        nccl_ok(ncclSend(send + send_at[d] * eb, s.send_counts[d] * eb, ncclUint8, d, comms[r], streams[r]), "ncclSend");
      if (s.recv_counts[d])
        nccl_ok(ncclRecv(recv + recv_at[d] * eb, s.recv_counts[d] * eb, ncclUint8, d, comms[r], streams[r]), "ncclRecv");
    }
    nccl_ok(ncclGroupEnd(), "ncclGroupEnd");
  }, false);
  for (int r = 0; r < ranks; ++r) {
    ScopedDevice on(r);
    ncclCommDeregister(comms[r], out_reg[r]);
    ncclCommDeregister(comms[r], scratch_reg[r]);
  }
  std::printf("nccl-fused: %.2fx the all-to-all's time (%.1f%% of its rate)%s; registered: all-to-all %.3f ms, "
              "nccl-engine %.1f%% of its rate\n",
              fused_ms / a2a, 100.0 * a2a / fused_ms,
              push > 0 ? (", " + std::to_string(fused_ms / push).substr(0, 4) + "x the single-process push").c_str() : "",
              a2a_reg, 100.0 * a2a_reg / kept);
  {
    std::vector<std::thread> threads;
    for (int r = 0; r < ranks; ++r)  // window deregistration is collective
      threads.emplace_back([&, r] {  // the engines too: each destroys its second communicator
        ScopedDevice on(r);
        engines[r].reset();
        two_comms[r].reset();
        unpipelined[r].reset();
        destroying_engines[r].reset();
        fused[r].reset();
        swaps[r].reset();
        out_win[r] = NcclWindow();
        scratch_win[r] = NcclWindow();
      });
    for (auto& t : threads) t.join();
  }
  for (ncclComm_t c : comms2) ncclCommDestroy(c);
  for (ncclComm_t c : comms) ncclCommDestroy(c);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "bmmc_nccl_bench: %s\n", e.what());
  return 1;
}
