// The front door for arrays of any shape on the CPU: a DigitMap that is a Bmmc runs the bit planner, any other the
// digit planner; one-call permute (cached), host buffers, files, in place for involutions, and the refusals.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <vector>

#include <unistd.h>

#include "plan/digit_map_support.hpp"
#include "bmmc/dispatch/array_file.hpp"
#include "bmmc/dispatch/permuter_cache.hpp"
#include "bmmc/permute.hpp"

namespace bmmc {
namespace {

std::vector<unsigned char> random_bytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<unsigned char> v(n);
  for (auto& b : v) b = static_cast<unsigned char>(rng());
  return v;
}

const PermuterOptions kCpu{Backend::Cpu};

TEST(DigitDoor, BitFaceDecidesThePlanner) {
  EXPECT_TRUE(bit_face(DigitMap::transpose({4, 8}, {1, 0}), 4).has_value());
  EXPECT_TRUE(bit_face(DigitMap::roll({8, 4}, {4, 0}), 2).has_value());   // a roll by half an axis: a complement
  EXPECT_FALSE(bit_face(DigitMap::roll({8, 4}, {1, 0}), 2).has_value());  // any other roll is not F2-affine
  EXPECT_FALSE(bit_face(DigitMap::transpose({4, 8}, {1, 0}), 3).has_value());  // nor is a 3-byte element
  EXPECT_FALSE(bit_face(DigitMap::transpose({3, 8}, {1, 0}), 4).has_value());
  EXPECT_EQ(Permuter(DigitMap::transpose({3, 8}, {1, 0}), 4, kCpu).kernel_name(), "cpu-digit-tile");
  EXPECT_NE(Permuter(DigitMap::transpose({4, 8}, {1, 0}), 4, kCpu).kernel_name(), "cpu-digit-tile");
  EXPECT_EQ(Permuter(DigitMap::transpose({3, 8}, {1, 0}), 4, kCpu).n(), -1);
}

TEST(DigitDoor, EveryEntryPointMatchesTheDefinition) {
  const std::vector<DigitMap> maps = {DigitMap(std::vector<Extent>{7, 11, 5}, {2, 0, 1}, {1, 0, 0}, {0, 3, 0}),
                                      DigitMap::transpose({16, 8, 2}, {2, 0, 1}), DigitMap::roll({9, 10}, {4, -3})};
  for (const DigitMap& m : maps)
    for (int eb : {1, 3, 4, 16}) {
      const auto in = random_bytes(static_cast<std::size_t>(m.size() * eb), static_cast<std::uint64_t>(eb));
      const auto want = test::digit_reference(m, in, eb);
      std::vector<unsigned char> out(in.size(), 0xA5);
      Permuter(m, eb, kCpu)(in.data(), out.data());
      EXPECT_EQ(out, want) << m.to_string() << " elem " << eb;
      std::fill(out.begin(), out.end(), 0xA5);
      permute(m, in.data(), out.data(), eb, kCpu);
      EXPECT_EQ(out, want) << m.to_string() << " elem " << eb << " (one call)";
      std::fill(out.begin(), out.end(), 0xA5);
      EXPECT_EQ(permute_host(m, in.data(), out.data(), eb, kCpu), Backend::Cpu);
      EXPECT_EQ(out, want) << m.to_string() << " elem " << eb << " (host)";
    }
}

TEST(DigitDoor, OneCallPermutesAreCached) {
  const DigitMap m = DigitMap::transpose({5, 7}, {1, 0});
  std::vector<float> in(35, 1.0f), out(35);
  permute(m, in.data(), out.data(), 4, kCpu);
  const auto before = default_permuter_cache().stats();
  permute(m, in.data(), out.data(), 4, kCpu);
  EXPECT_EQ(default_permuter_cache().stats().hits, before.hits + 1);
}

TEST(DigitDoor, InPlaceForInvolutionsOnly) {
  const DigitMap flip = DigitMap::flip({7, 9}, {0, 1});
  auto data = random_bytes(63 * 4, 1);
  const auto want = test::digit_reference(flip, data, 4);
  permute(flip, data.data(), data.data(), 4, kCpu);
  EXPECT_EQ(data, want);
  const DigitMap roll = DigitMap::roll({7, 9}, {1, 0});
  const auto before = data;
  EXPECT_THROW(permute(roll, data.data(), data.data(), 4, kCpu), std::invalid_argument);
  EXPECT_THROW(permute_host(roll, data.data(), data.data(), 4, kCpu), std::invalid_argument);
  PermuterOptions in_place = kCpu;
  in_place.in_place = true;
  EXPECT_THROW(Permuter(roll, 4, in_place), std::invalid_argument);
  // options.in_place with two buffers is refused, not half-honoured.
  std::vector<unsigned char> out(data.size(), 7);
  EXPECT_THROW(permute(flip, data.data(), out.data(), 4, in_place), std::invalid_argument);
  EXPECT_THROW(permute_host(flip, data.data(), out.data(), 4, in_place), std::invalid_argument);
  EXPECT_EQ(data, before);
  EXPECT_EQ(out, std::vector<unsigned char>(data.size(), 7));
}

TEST(DigitDoor, FilesOfAnyShape) {
  const auto dir = std::filesystem::temp_directory_path() / ("bmmc_digit_door_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const DigitMap m = DigitMap(std::vector<Extent>{5, 6, 7}, {1, 2, 0}, {0, 1, 0});
  const auto in = random_bytes(210 * 3, 3);
  {
    std::ofstream f(dir / "in.bin", std::ios::binary);
    f.write(reinterpret_cast<const char*>(in.data()), static_cast<std::streamsize>(in.size()));
  }
  permute_file(m, 3, (dir / "in.bin").string(), (dir / "out.bin").string(), kCpu);
  std::ifstream f(dir / "out.bin", std::ios::binary);
  std::vector<unsigned char> got((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(got, test::digit_reference(m, in, 3));
  // A file of the wrong size is refused and the output left alone.
  EXPECT_THROW(permute_file(m, 4, (dir / "in.bin").string(), (dir / "other.bin").string(), kCpu), std::invalid_argument);
  EXPECT_FALSE(std::filesystem::exists(dir / "other.bin"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace bmmc
