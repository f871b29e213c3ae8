// The all-to-all form of a distributed plan (see alltoall.hpp).
#include "bmmc/dist/alltoall.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "bmmc/dist/schedule.hpp"

namespace bmmc {

namespace {

// The affine map on k bits given by its values on every input (values[v] for v < 2^k), as columns and a constant;
// std::logic_error if it is not affine (the algebra in alltoall.hpp says it always is).
struct Affine {
  std::vector<BitVec> cols;
  BitVec constant = 0;
};

Affine affine_from_table(const std::vector<BitVec>& values, int k, const char* what) {
  Affine a;
  a.constant = values[0];
  for (int i = 0; i < k; ++i) a.cols.push_back(values[std::size_t{1} << i] ^ a.constant);
  for (std::size_t v = 0; v < values.size(); ++v)
    if ((xor_of_columns(a.cols, v) ^ a.constant) != values[v])
      throw std::logic_error(fmt::format("all-to-all plan: the {} map is not affine at {}", what, v));
  return a;
}

// The m-bit map that applies `a` to the top k bits (the chunk or slot index) and keeps the low m − k bits.
Bmmc on_chunk_bits(const Affine& a, int m, int k) {
  std::vector<BitVec> cols;
  for (int j = 0; j < m - k; ++j) cols.push_back(BitVec{1} << j);
  for (int i = 0; i < k; ++i) cols.push_back(a.cols[i] << (m - k));
  return Bmmc(BitMatrix::from_cols(m, cols), a.constant << (m - k));
}

}  // namespace

std::vector<std::uint64_t> displacements(const std::vector<std::uint64_t>& counts) {
  std::vector<std::uint64_t> at(counts.size() + 1, 0);
  for (std::size_t i = 0; i < counts.size(); ++i) at[i + 1] = at[i] + counts[i];
  return at;
}

AllToAllStep alltoall_step(const DistPlan& plan, BitVec rank) {
  const std::vector<SendStep> sends = send_schedule(plan, rank);  // validates the rank
  const std::vector<RecvStep> recvs = recv_schedule(plan, rank);
  const int m = plan.local_bits, k = plan.k;
  AllToAllStep s;
  s.rank = rank;
  s.send_counts.assign(plan.ranks(), 0);
  s.recv_counts.assign(plan.ranks(), 0);

  // Sender: position of chunk t among the destinations sorted ascending.
  std::vector<BitVec> dests;
  for (const SendStep& x : sends) dests.push_back(x.dest);
  std::sort(dests.begin(), dests.end());
  std::vector<BitVec> position(sends.size());
  for (const SendStep& x : sends) {
    position[x.chunk] = static_cast<BitVec>(std::lower_bound(dests.begin(), dests.end(), x.dest) - dests.begin());
    s.send_counts[x.dest] += x.count;
  }
  s.pre = compose(on_chunk_bits(affine_from_table(position, k, "send-order"), m, k), plan.pre);

  // Receiver: the slot of the sender at each position of the sources sorted ascending.
  std::vector<RecvStep> by_source = recvs;
  std::sort(by_source.begin(), by_source.end(), [](const RecvStep& a, const RecvStep& b) { return a.source < b.source; });
  std::vector<BitVec> slot(by_source.size());
  for (std::size_t p = 0; p < by_source.size(); ++p) {
    slot[p] = by_source[p].slot;
    s.recv_counts[by_source[p].source] += by_source[p].count;
  }
  s.post = compose(post_for_rank(plan, rank), on_chunk_bits(affine_from_table(slot, k, "receive-order"), m, k));

  s.local_only = k == 0 && plan.dest_complement == 0;
  for (int i = 0; i < plan.rank_bits && s.local_only; ++i) s.local_only = plan.dest_rank_cols[i] == BitVec{1} << i;
  s.local = compose(s.post, s.pre);
  return s;
}

}  // namespace bmmc
