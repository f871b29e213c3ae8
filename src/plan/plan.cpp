#include "bmmc/plan/plan.hpp"

#include "bmmc/plan/planner.hpp"

#include <fmt/format.h>

#include <type_traits>

namespace bmmc {

std::uint64_t NaivePass::blocks() const {
  const std::uint64_t total = std::uint64_t{1} << n();
  return (total + threads_per_block - 1) / threads_per_block;
}

namespace {

std::string bits_list(const std::vector<int>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += fmt::format("{}{}", i ? "," : "", v[i]);
  return s.empty() ? "-" : s;
}

template <class T>
std::string hex_list(const std::vector<T>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += fmt::format("{}{:#x}", i ? " " : "", v[i]);
  return s.empty() ? "-" : s;
}

std::string describe_pass(const NaivePass& p) {
  return fmt::format("  naive: one element per thread, {} threads/block, {} blocks\n", p.threads_per_block,
                     p.blocks());
}

std::string describe_pass(const TilePass& p) {
  std::string s;
  s += fmt::format("  tile: n = {}, elem_bytes = {}, vector = 2^{} elements ({} bytes) per lane access\n",
                   p.n(), p.elem_bytes, p.vector_bits, p.vector_bytes());
  s += fmt::format("    V' = L + A^-1 L (+ iters): dim {} = s {} + rows m {} (q = {}, extra = {})\n",
                   p.segment_bits() + p.row_bits, p.segment_bits(), p.row_bits, p.q, p.row_bits - p.q);
  s += fmt::format("    runs: reads of 2^{} elements, writes of 2^{}\n", read_run_bits(p), write_run_bits(p));
  s += fmt::format("    read rows R:  {}\n", hex_list(p.read_rows));
  s += fmt::format("    write rows U: {}\n", hex_list(p.write_rows));
  s += fmt::format("    block bits W: {}\n", bits_list(p.block_positions));
  if (!p.block_order.empty()) s += fmt::format("    launch order M (launch bit -> block bits): {}\n", hex_list(p.block_order));
  s += fmt::format("    swizzle: {}{}; shared store rows {} elem {}; load rows {} lanes {}\n",
                   p.swizzle ? "xor" : "off", p.packed_bytes ? " (byte addresses: 1-byte elements four to a word)" : "", hex_list(p.store_row_cols), hex_list(p.store_elem_cols),
                   hex_list(p.load_row_cols), hex_list(p.load_lane_cols));
  s += fmt::format("    launch: {} blocks x {} threads, {} elements/thread, {} rows/warp, shared {} bytes\n",
                   p.blocks(), p.threads_per_block(), p.elems_per_thread(), p.iters(), p.shared_bytes());
  return s;
}

}  // namespace

std::string describe(const Plan& plan) {
  std::string s = fmt::format("plan: variant {}, n = {}, elem_bytes = {}, {} pass{}{}\n", to_string(plan.variant),
                              plan.n(), plan.elem_bytes, plan.passes.size(), plan.passes.size() == 1 ? "" : "es",
                              plan.needs_temp() ? " (through a temporary buffer)" : "");
  for (size_t i = 0; i < plan.passes.size(); ++i) {
    const Bmmc& b = std::visit([](const auto& p) -> const Bmmc& { return p.bmmc; }, plan.passes[i]);
    s += fmt::format(" pass {}: {} ({})\n", i + 1, to_string(b.classify()),
                     plan.passes.size() > 1 ? "factor" : "whole permutation");
    s += std::visit([](const auto& p) { return describe_pass(p); }, plan.passes[i]);
  }
  return s;
}

}  // namespace bmmc
