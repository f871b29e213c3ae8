// Options shared by the commands that build a GPU Plan (plan, gen): --elem-bytes, --variant and the
// GpuPolicy knobs, so every command spells them the same way.
#pragma once

#include <fmt/format.h>

#include <initializer_list>
#include <string>
#include <utility>

#include "bmmc/plan/gpu_policy.hpp"
#include "commands.hpp"

namespace bmmc::cli {

struct PlanCliOptions {
  int elem_bytes = 4;
  std::string variant = "auto";
  int elems_per_thread = 0;
  int threads = 0;
  int vector_bits = -1;
  std::string swizzle = "default";  // default|on|off
  std::string block_order = "default";
  std::string longer_runs = "read";
};

inline void add_plan_options(CLI::App* sub, PlanCliOptions& o) {
  sub->add_option("--elem-bytes,-b", o.elem_bytes, "element size in bytes: 1, 2, 4, 8 or 16")->capture_default_str();
  sub->add_option("--variant", o.variant,
                  "naive, tiled, tiled-banks, tiled-banks-iters, two-pass, one-pass or auto (= one-pass)")
      ->capture_default_str();
  sub->add_option("--elems-per-thread", o.elems_per_thread, "elements each thread moves (power of two; 0 = default)");
  sub->add_option("--threads", o.threads, "threads per block (power of two, 32..1024; 0 = default: 256, more for 1-byte maps with large tiles)");
  sub->add_option("--vector-bits", o.vector_bits,
                  "2^K consecutive elements per lane access (-1 = default: 8-byte accesses)");
  sub->add_option("--swizzle", o.swizzle, "XOR swizzle of the shared tile: default, on or off")->capture_default_str();
  sub->add_option("--block-order", o.block_order, "launch order of the blocks: default (input for 4+ byte elements, else coordinate), coordinate, input, output or balanced")
      ->capture_default_str();
  sub->add_option("--longer-runs", o.longer_runs,
                  "which runs the tile rows beyond the forced ones lengthen: read, write or both (alternately); only a tile "
                  "larger than the permutation forces has such rows (e.g. --elems-per-thread 32)")
      ->capture_default_str()
      ->check(CLI::IsMember({"read", "write", "both"}));
}

/// For a map the digit planner runs (--shape, not a BMMC): the bit planner's options are refused rather than
/// ignored, naming the option and `what` (the map and its shape). `others` are the caller's own such options.
inline void refuse_bit_planner_options(const PlanCliOptions& o, const std::string& what,
                                       std::initializer_list<std::pair<bool, const char*>> others = {}) {
  const PlanCliOptions d;
  const std::pair<bool, const char*> bit_only[] = {
      {o.variant != d.variant, "--variant"},           {o.elems_per_thread != d.elems_per_thread, "--elems-per-thread"},
      {o.threads != d.threads, "--threads"},           {o.vector_bits != d.vector_bits, "--vector-bits"},
      {o.swizzle != d.swizzle, "--swizzle"},           {o.block_order != d.block_order, "--block-order"},
      {o.longer_runs != d.longer_runs, "--longer-runs"}};
  const auto refuse = [&](const std::pair<bool, const char*>& option) {
    if (option.first)
      throw UsageError(fmt::format("{} applies to BMMC plans; {} is not a BMMC and runs on the digit planner, which "
                                   "takes no such option",
                                   option.second, what));
  };
  for (const auto& option : bit_only) refuse(option);
  for (const auto& option : others) refuse(option);
}

inline GpuPolicy to_gpu_policy(const PlanCliOptions& o) {
  GpuPolicy p;
  p.variant = parse_variant(o.variant);
  p.elems_per_thread = o.elems_per_thread;
  p.threads_per_block = o.threads;
  p.vector_bits = o.vector_bits;
  if (o.block_order != "default") p.block_order = parse_block_order(o.block_order);
  p.longer_runs = parse_run_side(o.longer_runs);
  if (o.swizzle == "on")
    p.swizzle = true;
  else if (o.swizzle == "off")
    p.swizzle = false;
  else if (o.swizzle != "default")
    throw UsageError("--swizzle must be default, on or off, got '" + o.swizzle + "'");
  return p;
}

}  // namespace bmmc::cli
