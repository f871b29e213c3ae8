// The ranks' agreement on what a distributed call is about to do, checked before any data moves: ranks that run
// different maps, sizes or engines would post unpaired exchanges and hang, or write into each other's arrays with
// different maps. Every rank states an Agreement, the caller's collective gathers every rank's words (an
// ncclAllGather in the NCCL engines, torch.distributed's all_gather in the Python module), and compare_agreements
// builds the one error every rank throws. This file holds the record and the comparison; moving the words is the
// caller's.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "bmmc/dist/engine.hpp"

namespace bmmc {

/// What a rank states before a call moves data: the plan's hash, n, the element size, the engine (Auto: the rank
/// refused its own arguments and takes part only so that its peers throw instead of waiting for it), how an
/// exchange runs (its piece count, communicators, and whether it goes through the engine's own registered scratch:
/// NCCL forbids mixing registered and unregistered buffers across ranks), and one word of engine detail (the push
/// engine's line bits, which decide its push/finish split); 0 where they do not apply.
struct Agreement {
  std::uint64_t hash = 0, n = 0, elem_bytes = 0;
  DistEngine engine = DistEngine::Auto;
  std::uint64_t pieces = 0, comms = 0, registered = 0, detail = 0;

  static constexpr int kWords = 8;
  using Words = std::array<std::uint64_t, kWords>;
  Words words() const noexcept;
  static Agreement from_words(const Words& w) noexcept;
  friend bool operator==(const Agreement&, const Agreement&) = default;
};

/// The agreement of a rank that refused its own arguments.
inline Agreement refused_agreement() noexcept { return Agreement{}; }

/// `every` holds the words of every rank (rank r at [r·kWords, (r+1)·kWords)); returns when they are all equal,
/// else throws std::invalid_argument naming every rank's view, saying which rank this is and ending with `advice`
/// (what every rank must do alike). Throws std::invalid_argument too when `every` is not a whole number of records.
void compare_agreements(std::span<const std::uint64_t> every, int rank, std::string_view advice);

}  // namespace bmmc
