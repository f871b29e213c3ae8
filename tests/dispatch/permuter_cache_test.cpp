// The front door's cache keys: every option field takes part in the key, and the cache is a bounded LRU.
//
// The key compares PermuterOptions (and the structs inside it) with defaulted ==, so a field can only be left
// out of the key by replacing that operator. field_count<T>() counts an aggregate's fields at compile time:
// when someone adds a field, the static_asserts below fail until a variation of the new field is added to
// kVariations — which then proves that it separates cache entries.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <thread>
#include <vector>

#include "bmmc/core/named.hpp"
#include "bmmc/dispatch/backend.hpp"
#include "bmmc/dispatch/permuter_cache.hpp"

namespace bmmc {
namespace {

// Aggregate field counting: the largest k for which T{any, ..., any} (k initialisers) compiles.
struct AnyField {
  template <class T>
  operator T() const;  // never defined: only used in unevaluated requires-expressions
};
template <class T, class... A>
constexpr std::size_t field_count() {
  if constexpr (requires { T{A{}..., AnyField{}}; })
    return field_count<T, A..., AnyField>();
  else
    return sizeof...(A);
}

static_assert(field_count<PermuterOptions>() == 4, "PermuterOptions changed: add its new field to kVariations");
static_assert(field_count<CpuPolicy>() == 5, "CpuPolicy changed: add its new field to kVariations");
static_assert(field_count<GpuOptions>() == 5, "GpuOptions changed: add its new field to kVariations");
static_assert(field_count<GpuPolicy>() == 8, "GpuPolicy changed: add its new field to kVariations");
static_assert(field_count<CodegenOptions>() == 1, "CodegenOptions changed: add its new field to kVariations");
static_assert(field_count<PermuterKey>() == 4, "PermuterKey changed: add its new field to kVariations");

// One change per leaf field of a PermuterKey.
const std::vector<std::pair<const char*, std::function<void(PermuterKey&)>>> kVariations = {
    {"bmmc", [](PermuterKey& k) { k.bmmc = bit_reverse(10); }},
    {"digits", [](PermuterKey& k) { k.digits = DigitMap::transpose({3, 5}, {1, 0}); }},
    {"elem_bytes", [](PermuterKey& k) { k.elem_bytes = 8; }},
    {"backend", [](PermuterKey& k) { k.options.backend = Backend::Cuda; }},
    {"in_place", [](PermuterKey& k) { k.options.in_place = true; }},
    {"cpu.threads", [](PermuterKey& k) { k.options.cpu.threads = 3; }},
    {"cpu.tile_bits", [](PermuterKey& k) { k.options.cpu.tile_bits = 9; }},
    {"cpu.register_transpose", [](PermuterKey& k) { k.options.cpu.register_transpose = false; }},
    {"cpu.direct", [](PermuterKey& k) { k.options.cpu.direct = false; }},
    {"cpu.avx512", [](PermuterKey& k) { k.options.cpu.avx512 = false; }},
    {"gpu.policy.variant", [](PermuterKey& k) { k.options.gpu.policy.variant = Variant::TwoPass; }},
    {"gpu.policy.elems_per_thread", [](PermuterKey& k) { k.options.gpu.policy.elems_per_thread = 4; }},
    {"gpu.policy.threads_per_block", [](PermuterKey& k) { k.options.gpu.policy.threads_per_block = 512; }},
    {"gpu.policy.vector_bits", [](PermuterKey& k) { k.options.gpu.policy.vector_bits = 0; }},
    {"gpu.policy.swizzle", [](PermuterKey& k) { k.options.gpu.policy.swizzle = false; }},
    {"gpu.policy.block_order", [](PermuterKey& k) { k.options.gpu.policy.block_order = BlockOrder::Input; }},
    {"gpu.policy.longer_runs", [](PermuterKey& k) { k.options.gpu.policy.longer_runs = RunSide::Write; }},
    {"gpu.policy.small_byte_lanes", [](PermuterKey& k) { k.options.gpu.policy.small_byte_lanes = false; }},
    {"gpu.jit", [](PermuterKey& k) { k.options.gpu.jit = false; }},
    {"gpu.codegen.streaming_hints", [](PermuterKey& k) { k.options.gpu.codegen.streaming_hints = true; }},
    {"gpu.cache", [](PermuterKey& k) { k.options.gpu.cache = reinterpret_cast<KernelCache*>(0x1000); }},
    {"gpu.device", [](PermuterKey& k) { k.options.gpu.device = 1; }},
};

PermuterKey base_key() { return PermuterKey{random_bmmc(10, 1), 4, PermuterOptions{Backend::Cpu}}; }

TEST(PermuterKey, EveryFieldSeparatesKeys) {
  // The leaves: bmmc, digits, elem_bytes; backend, in_place; 5 CPU fields; 8 GpuPolicy fields; jit, codegen's one,
  // cache, device.
  EXPECT_EQ(kVariations.size(), 3u + 2 + 5 + 8 + 4);
  for (const auto& [name, vary] : kVariations) {
    PermuterKey a = base_key(), b = base_key();
    vary(b);
    EXPECT_FALSE(a == b) << name << " is not part of the key";
    EXPECT_TRUE(a == base_key()) << name;
  }
}

TEST(PermuterKey, HashAgreesWithEquality) {
  const PermuterKeyHash h;
  EXPECT_EQ(h(base_key()), h(base_key()));
  // Distinct BMMCs (the common case for a full cache) rarely share a hash.
  std::vector<std::size_t> seen;
  for (int s = 0; s < 200; ++s) seen.push_back(h(PermuterKey{random_bmmc(12, s), 4, PermuterOptions{Backend::Cpu}}));
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(std::unique(seen.begin(), seen.end()), seen.end());
  EXPECT_EQ(std::hash<Bmmc>{}(random_bmmc(12, 5)), std::hash<Bmmc>{}(random_bmmc(12, 5)));
  EXPECT_NE(std::hash<Bmmc>{}(identity(12)), std::hash<Bmmc>{}(reverse(12)));  // c takes part
}

TEST(PermuterCache, EveryFieldMakesADistinctEntry) {
  // Each variation builds a real Permuter: a miss and a new entry. The base key is a CPU key, whose Permuter
  // ignores the GPU fields, so those build (CPU) Permuters here too and still must not share an entry. Only
  // the backend needs a GPU to build: CudaBackendMakesADistinctEntry below.
  PermuterCache cache(64);
  const auto first = cache.get(base_key());
  std::size_t varied = 0;
  for (const auto& [name, vary] : kVariations) {
    if (std::string(name) == "backend") continue;
    PermuterKey k = base_key();
    vary(k);
    const auto misses = cache.stats().misses;
    const auto p = cache.get(k);
    EXPECT_EQ(cache.stats().misses, misses + 1) << name;
    EXPECT_NE(p.get(), first.get()) << name;
    ++varied;
  }
  EXPECT_EQ(varied, kVariations.size() - 1);
  EXPECT_EQ(cache.stats().size, varied + 1);
  const auto hits = cache.stats().hits;
  EXPECT_EQ(cache.get(base_key()).get(), first.get());  // still there, a hit
  EXPECT_EQ(cache.stats().hits, hits + 1);
}

TEST(PermuterCache, CudaBackendMakesADistinctEntry) {
  if (!backend_available(Backend::Cuda)) GTEST_SKIP() << "no CUDA GPU: a Backend::Cuda Permuter cannot be built";
  PermuterCache cache(4);
  const auto cpu = cache.get(base_key());
  PermuterKey k = base_key();
  k.options.backend = Backend::Cuda;
  const auto cuda = cache.get(k);
  EXPECT_NE(cuda.get(), cpu.get());
  EXPECT_EQ(cache.stats().misses, 2u);
  EXPECT_EQ(cache.get(k).get(), cuda.get());
}

TEST(PermuterCache, EvictsTheLeastRecentlyUsed) {
  PermuterCache cache(3);
  auto key = [](int s) { return PermuterKey{random_bmmc(8, s), 4, PermuterOptions{Backend::Cpu}}; };
  const auto p1 = cache.get(key(1));
  cache.get(key(2));
  cache.get(key(3));
  cache.get(key(1));  // 1 is now the most recent: 2 is the oldest
  cache.get(key(4));  // evicts 2
  EXPECT_EQ(cache.stats().evictions, 1u);
  EXPECT_EQ(cache.stats().size, 3u);
  const auto misses = cache.stats().misses;
  EXPECT_EQ(cache.get(key(1)).get(), p1.get());
  cache.get(key(3));
  EXPECT_EQ(cache.stats().misses, misses);  // 1 and 3 stayed
  cache.get(key(2));
  EXPECT_EQ(cache.stats().misses, misses + 1);  // 2 was gone
  cache.set_capacity(1);
  EXPECT_EQ(cache.stats().size, 1u);
  EXPECT_EQ(cache.stats().capacity, 1u);
  EXPECT_THROW(cache.set_capacity(0), std::invalid_argument);
  EXPECT_THROW(PermuterCache(0), std::invalid_argument);
  // An evicted Permuter stays usable by whoever holds it.
  std::vector<int> in(256, 7), out(256);
  (*p1)(in.data(), out.data());
  cache.clear();
  EXPECT_EQ(cache.stats().size, 0u);
}

TEST(PermuterCache, AutoBackendIsRefusedInAKey) {
  PermuterCache cache;
  EXPECT_THROW(cache.get(PermuterKey{identity(6), 4, PermuterOptions{}}), std::invalid_argument);
}

TEST(PermuterCache, ConcurrentLookupsAgree) {
  PermuterCache cache(8);
  std::vector<std::thread> threads;
  std::vector<const Permuter*> got(8);
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] { got[t] = cache.get(base_key()).get(); });
  for (auto& t : threads) t.join();
  for (const Permuter* p : got) EXPECT_EQ(p, got[0]);  // one entry kept, whoever built it
  EXPECT_EQ(cache.stats().size, 1u);
}

}  // namespace
}  // namespace bmmc
