// Replays the spec fuzzer's corpus (fuzz/corpus/spec, TESTING.md) through parse_spec in the ordinary test
// build, so every compiler and the ASan/UBSan CI job check those inputs even where libFuzzer (clang) is not
// used. Same input layout and contract as fuzz/spec_fuzz.cpp: byte 0 picks --n, the rest is the spec; the
// parser either returns a valid BMMC or throws SpecError with a column inside the text.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "bmmc/core/bmmc.hpp"
#include "bmmc/core/spec.hpp"

namespace bmmc {
namespace {

namespace fs = std::filesystem;

// fuzz/corpus/spec, found from this source file's path. ccache with base_dir set (a cache shared between
// checkouts) hands the compiler a path relative to the build folder, so a relative __FILE__ is tried from the
// working directory (the test binary's folder) and each folder above it.
fs::path corpus_dir() {
  const fs::path dir = fs::path(__FILE__).parent_path() / ".." / ".." / "fuzz" / "corpus" / "spec";
  if (dir.is_absolute()) return dir;
  for (fs::path d = fs::current_path();; d = d.parent_path()) {
    if (fs::is_directory(d / dir)) return d / dir;
    if (d == d.parent_path()) return dir;
  }
}

TEST(SpecFuzzCorpus, EveryInputParsesOrFailsCleanly) {
  const fs::path dir = corpus_dir();
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  int files = 0, accepted = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::ifstream f(entry.path(), std::ios::binary);
    const std::vector<char> bytes{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
    ++files;
    if (bytes.empty()) continue;
    std::optional<int> n;
    if (static_cast<unsigned char>(bytes[0]) < 210) n = static_cast<unsigned char>(bytes[0]) % 70 - 3;
    const std::string spec(bytes.begin() + 1, bytes.end());
    SCOPED_TRACE(entry.path().filename().string());
    try {
      const Bmmc p = parse_spec(spec, n);
      ++accepted;
      EXPECT_TRUE(p.n() >= 0 && p.n() <= 64);
      if (n) EXPECT_EQ(p.n(), *n);
      EXPECT_TRUE(p.matrix().invertible());
      EXPECT_EQ(p.complement() & ~low_mask(p.n()), 0u);
      const BitVec x = 0x5a5a5a5a5a5a5a5aULL & low_mask(p.n());
      EXPECT_EQ(p.inverse().apply(p.apply(x)), x);
    } catch (const SpecError& e) {
      EXPECT_GE(e.column(), 0) << e.what();
      EXPECT_LE(static_cast<std::size_t>(e.column()), spec.size() + 1) << e.what();
    }
    // Anything else propagates and fails the test.
  }
  // The corpus holds ~100 inputs, a good share of them valid specs: an empty or unreadable folder is a bug.
  EXPECT_GE(files, 50);
  EXPECT_GE(accepted, 10);
}

}  // namespace
}  // namespace bmmc
