// The ranks' agreement record and its comparison (see agreement.hpp).
#include "bmmc/dist/agreement.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace bmmc {

Agreement::Words Agreement::words() const noexcept {
  return {hash, n, elem_bytes, static_cast<std::uint64_t>(engine), pieces, comms, registered, detail};
}

Agreement Agreement::from_words(const Words& w) noexcept {
  Agreement a;
  a.hash = w[0];
  a.n = w[1];
  a.elem_bytes = w[2];
  a.engine = static_cast<DistEngine>(w[3]);
  a.pieces = w[4];
  a.comms = w[5];
  a.registered = w[6];
  a.detail = w[7];
  return a;
}

namespace {

std::string describe_engine(const Agreement& a) {
  switch (a.engine) {
    case DistEngine::Auto: return "refused its own arguments";  // listed as a refusal by compare_agreements
    case DistEngine::Exchange:
    case DistEngine::Pieces:
      return fmt::format("the {} engine in {} piece(s) over {} communicator(s), {} scratch", to_string(a.engine),
                         a.pieces, a.comms, a.registered ? "its own registered" : "the caller's or unregistered");
    case DistEngine::Push: return fmt::format("the push engine, push line bits {}", a.detail);
    case DistEngine::Swap:
    case DistEngine::StagedSwap: return fmt::format("the {} engine", to_string(a.engine));
  }
  return fmt::format("engine {}", static_cast<std::uint64_t>(a.engine));
}

}  // namespace

void compare_agreements(std::span<const std::uint64_t> every, int rank, std::string_view advice) {
  constexpr std::size_t w = Agreement::kWords;
  if (every.empty() || every.size() % w != 0)
    throw std::invalid_argument(fmt::format(
        "the gathered agreement has {} words; expected {} per rank and at least one rank", every.size(), w));
  const std::size_t ranks = every.size() / w;
  bool agree = true;
  for (std::size_t i = w; i < every.size(); ++i) agree = agree && every[i] == every[i % w];
  if (agree) return;
  // The words that differ, by the record's field names, each with the first rank that differs from rank 0.
  static constexpr const char* kField[Agreement::kWords] = {"hash",   "n",     "elem_bytes", "engine",
                                                            "pieces", "comms", "registered", "detail"};
  std::string differing;
  for (std::size_t i = 0; i < w; ++i)
    for (std::size_t r = 1; r < ranks; ++r)
      if (every[w * r + i] != every[i]) {
        differing += fmt::format("{}{} (rank 0: {}, rank {}: {})", differing.empty() ? "" : ", ", kField[i], every[i],
                                 r, every[w * r + i]);
        break;
      }
  std::string views, refusing;
  for (std::size_t r = 0; r < ranks; ++r) {
    Agreement::Words words;
    for (std::size_t i = 0; i < w; ++i) words[i] = every[w * r + i];
    const Agreement a = Agreement::from_words(words);
    if (a.engine == DistEngine::Auto) {  // refused_agreement()
      views += fmt::format("{}rank {}: refused its own arguments (that rank's error says why)", r ? "; " : "", r);
      refusing += fmt::format("{}{}", refusing.empty() ? "" : ", ", r);
      continue;
    }
    views += fmt::format("{}rank {}: n = {}, {}-byte elements, plan hash {:#018x}, {}", r ? "; " : "", r, a.n,
                         a.elem_bytes, a.hash, describe_engine(a));
  }
  if (!refusing.empty())  // the other words differ only because of the refusal: not listed
    throw std::invalid_argument(fmt::format(
        "rank(s) {} refused their own arguments, so no rank permutes (this is rank {}); {}: {}", refusing, rank,
        advice, views));
  throw std::invalid_argument(
      fmt::format("the ranks disagree on the permutation, n, element size or engine (this is rank {}; differing: "
                  "{}); {}: {}",
                  rank, differing, advice, views));
}

}  // namespace bmmc
