// The distributed front door for Python (see dist_ext.hpp).
#include "dist_ext.hpp"

#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "bmmc/core/bmmc.hpp"
#include "bmmc/distributed.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace bmmc_python {
namespace {

using bmmc::Bmmc;
using bmmc::DistributedPermuter;

// The callables of the door call in progress on this thread: exchange(send: int, send_bytes: list[int], recv: int,
// recv_bytes: list[int], stream: int) -> None, and gather(words: list[int]) -> list[int] (every rank's words, rank
// order; None where the call does not agree). Pointers and the stream travel as integers. The door calls them on the
// thread that called it, with the GIL held (its calls from Python keep it); their exceptions reach Python unchanged.
struct Collectives {
  nb::handle exchange, gather;
};
thread_local const Collectives* t_current = nullptr;

class CollectivesScope {
 public:
  explicit CollectivesScope(const Collectives& c) : previous_(t_current) { t_current = &c; }
  ~CollectivesScope() { t_current = previous_; }
  CollectivesScope(const CollectivesScope&) = delete;
  CollectivesScope& operator=(const CollectivesScope&) = delete;

 private:
  const Collectives* previous_;
};

nb::handle current(nb::handle Collectives::*which, const char* name) {
  const nb::handle h = t_current ? t_current->*which : nb::handle();
  if (!h.is_valid() || h.is_none())
    throw std::logic_error(std::string("bmmc.distributed: the door asked for the ") + name +
                           " collective outside a call that supplied it");
  return h;
}

// The group every cached permuter runs over: collectives that forward to the calling thread's callables.
bmmc::ExchangeGroup thread_group(int rank, int ranks, bool gathers) {
  bmmc::ExchangeGroup g;
  g.rank = rank;
  g.ranks = ranks;
  g.exchange = [](const void* send, std::span<const std::size_t> send_bytes, void* recv,
                  std::span<const std::size_t> recv_bytes, bmmc::StreamHandle stream) {
    current(&Collectives::exchange, "exchange")(
        reinterpret_cast<std::uintptr_t>(send), std::vector<std::size_t>(send_bytes.begin(), send_bytes.end()),
        reinterpret_cast<std::uintptr_t>(recv), std::vector<std::size_t>(recv_bytes.begin(), recv_bytes.end()),
        reinterpret_cast<std::uintptr_t>(stream));
  };
  if (gathers)
    g.gather = [](std::span<const std::uint64_t> mine, std::span<std::uint64_t> every) {
      const auto words = nb::cast<std::vector<std::uint64_t>>(
          current(&Collectives::gather, "gather")(std::vector<std::uint64_t>(mine.begin(), mine.end())));
      if (words.size() != every.size())
        throw std::invalid_argument("the gather returned " + std::to_string(words.size()) + " words; expected " +
                                    std::to_string(every.size()) + " (every rank's, rank order)");
      std::copy(words.begin(), words.end(), every.begin());
    };
  return g;
}

// The native table of permuters: planning a rank's step costs more than a small call, and the key holds everything
// a permuter depends on (its group's collectives are the caller's per call). Emptied when full.
struct Key {
  Bmmc bmmc;
  int elem_bytes = 0, rank = 0, ranks = 0;
  bool check = true, destroy_input = false;
  friend bool operator==(const Key&, const Key&) = default;
};
struct KeyHash {
  std::size_t operator()(const Key& k) const noexcept {
    std::size_t h = std::hash<Bmmc>{}(k.bmmc);
    for (std::size_t v : {std::size_t(k.elem_bytes), std::size_t(k.rank), std::size_t(k.ranks),
                          std::size_t(k.check) * 2 + std::size_t(k.destroy_input)})
      h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h;
  }
};
constexpr std::size_t kCapacity = 64;
std::mutex g_mutex;
std::unordered_map<Key, std::shared_ptr<DistributedPermuter>, KeyHash>& table() {
  static std::unordered_map<Key, std::shared_ptr<DistributedPermuter>, KeyHash> t;
  return t;
}

// This rank's permuter, from the table or built (a build that refuses its own arguments announces the refusal
// through `gather` first, as DistributedPermuter's constructor does).
std::shared_ptr<DistributedPermuter> permuter_for(const Bmmc& b, int elem_bytes, int rank, int ranks, nb::handle gather,
                                                  bool check, bool destroy_input) {
  const Key key{b, elem_bytes, rank, ranks, check, destroy_input};
  {
    std::lock_guard lock(g_mutex);
    if (auto it = table().find(key); it != table().end()) return it->second;
  }
  bmmc::DistributedOptions o;
  o.check_agreement = check;
  o.destroy_input = destroy_input;
  const Collectives c{nb::handle(), gather};
  CollectivesScope scope(c);
  auto p = std::make_shared<DistributedPermuter>(b, elem_bytes, thread_group(rank, ranks, check), o);
  std::lock_guard lock(g_mutex);
  if (table().size() >= kCapacity) table().clear();
  table().emplace(key, p);
  return p;
}

}  // namespace

void bind_distributed(nb::module_& m) {
  nb::class_<DistributedPermuter>(
      m, "_DistributedPermuter",
      "The distributed front door (bmmc/distributed.hpp) for one rank of an ExchangeGroup whose all-gather and "
      "all-to-all are the Python callables each call supplies; used by bmmc.distributed.")
      .def("__call__",
           [](const DistributedPermuter& p, std::uintptr_t in, std::uintptr_t out, std::uintptr_t scratch,
              std::uintptr_t stream, nb::handle exchange, nb::handle gather) {
             const Collectives c{exchange, gather};
             CollectivesScope scope(c);
             p({reinterpret_cast<const void*>(in)}, {reinterpret_cast<void*>(out)},
               scratch ? std::vector<void*>{reinterpret_cast<void*>(scratch)} : std::vector<void*>{},
               {reinterpret_cast<bmmc::StreamHandle>(stream)});
           },
           "in_ptr"_a, "out_ptr"_a, "scratch_ptr"_a, "stream"_a, "exchange"_a, "gather"_a.none())
      .def_prop_ro("engine", [](const DistributedPermuter& p) { return std::string(bmmc::to_string(p.engine())); })
      .def_prop_ro("local_bytes", &DistributedPermuter::local_bytes)
      .def_prop_ro("scratch_bytes", &DistributedPermuter::scratch_bytes)
      .def("describe", &DistributedPermuter::describe);
  m.def("_dist_permuter", &permuter_for, "bmmc"_a, "elem_bytes"_a, "rank"_a, "ranks"_a, "gather"_a.none(),
        "check"_a = true, "destroy_input"_a = false,
        "This rank's DistributedPermuter over an ExchangeGroup (from a native table); a build that refuses its own "
        "arguments first gathers the refused record through `gather` (when check), so the peers raise.");
  m.def("_dist_permuter_count", [] {
    std::lock_guard lock(g_mutex);
    return table().size();
  }, "Permuters in the native table (tests).");
  m.def("_dist_refuse", [](int rank, int ranks, nb::handle gather) {
    const Collectives c{nb::handle(), gather};
    CollectivesScope scope(c);
    DistributedPermuter::refuse(thread_group(rank, ranks, true));
  }, "rank"_a, "ranks"_a, "gather"_a,
     "DistributedPermuter::refuse: this rank's refused record through `gather`, so that its peers raise ValueError "
     "naming it instead of waiting.");
}

}  // namespace bmmc_python
