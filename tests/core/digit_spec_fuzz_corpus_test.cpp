// Replays the digit spec fuzzer's corpus (fuzz/corpus/digit_spec, TESTING.md) through parse_digit_spec in the
// ordinary test build, as spec_fuzz_corpus_test.cpp does for the BMMC spec. Same input layout and contract as
// fuzz/digit_spec_fuzz.cpp: byte 0 picks the shape's rank (then one byte per extent) or no shape, the rest is the
// spec; the parser either returns a valid map of that shape or throws SpecError with a column inside the text.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "bmmc/core/digit_map.hpp"
#include "bmmc/core/digit_spec.hpp"

namespace bmmc {
namespace {

namespace fs = std::filesystem;

// fuzz/corpus/digit_spec, found from this source file's path (relative when ccache's base_dir rewrote it).
fs::path corpus_dir() {
  const fs::path dir = fs::path(__FILE__).parent_path() / ".." / ".." / "fuzz" / "corpus" / "digit_spec";
  if (dir.is_absolute()) return dir;
  for (fs::path d = fs::current_path();; d = d.parent_path()) {
    if (fs::is_directory(d / dir)) return d / dir;
    if (d == d.parent_path()) return dir;
  }
}

TEST(DigitSpecFuzzCorpus, EveryInputParsesOrFailsCleanly) {
  const fs::path dir = corpus_dir();
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  int files = 0, accepted = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::ifstream f(entry.path(), std::ios::binary);
    const std::vector<unsigned char> bytes{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
    ++files;
    if (bytes.empty()) continue;
    std::size_t used = 1;
    std::optional<std::vector<Extent>> shape;
    if (bytes[0] < 224) {
      shape.emplace();
      for (int a = 0; a < bytes[0] % 6 && used < bytes.size(); ++a) shape->push_back(bytes[used++] % 13);
    }
    const std::string spec(bytes.begin() + static_cast<std::ptrdiff_t>(used), bytes.end());
    SCOPED_TRACE(entry.path().filename().string());
    try {
      const DigitMap m = parse_digit_spec(spec, shape);
      ++accepted;
      if (shape) EXPECT_EQ(m.shape(), *shape);
      const Extent x = m.size() / 2;
      EXPECT_EQ(m.inverse().apply_linear(m.apply_linear(x)), x);
      EXPECT_EQ(m.canonical().apply_linear(x), m.apply_linear(x));
      EXPECT_EQ(parse_digit_spec(m.to_string(), m.shape()), m);
    } catch (const SpecError& e) {
      EXPECT_GE(e.column(), 0) << e.what();
      EXPECT_LE(static_cast<std::size_t>(e.column()), spec.size() + 1) << e.what();
    }
    // Anything else propagates and fails the test.
  }
  EXPECT_GE(files, 50);
  EXPECT_GE(accepted, 10);
}

}  // namespace
}  // namespace bmmc
