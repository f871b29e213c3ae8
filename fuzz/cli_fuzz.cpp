// libFuzzer target for `bmmc permute`'s file handling: the bytes become a spec, an element size, an --n, a
// backend name and an input array file, and go through the library's parse_spec and permute_file
// (bmmc/dispatch/array_file.hpp) — the very functions `bmmc permute` runs after option parsing — on the CPU
// backend. It links the library only.
//
// Input layout (short inputs are padded with zeros):
//   byte 0: elem_bytes as a signed byte (-128..127; only 1, 2, 4, 8, 16 are valid)
//   byte 1: --n: 0..209 → n = b % 70 - 3 (-3..66), 210..255 → no --n
//   byte 2: bit 0: backend "cpu" (0) or "auto" (1, which is the CPU here); bit 1: a bogus backend name;
//           bits 2-3: output path: 0 a new file, 1 an existing file, 2 a file in a missing directory,
//           3 an existing directory; bit 4: the input path is missing
//   then the spec text up to the first '\n', then the input file's bytes.
// The contract checked:
//  - permute_file returns, or throws std::invalid_argument (CLI exit 2) for bad input, or std::runtime_error
//    (exit 1) only where the output location itself is unusable; never anything else, never a crash;
//  - on any error the output path is exactly as it was (absent, or the sentinel bytes, or a directory);
//  - on success the output has 2^n · elem_bytes bytes and out[A·x ⊕ c] = in[x] for every x.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "bmmc/core/bmmc.hpp"
#include "bmmc/core/spec.hpp"
#include "bmmc/dispatch/array_file.hpp"

namespace fs = std::filesystem;

namespace {

[[noreturn]] void bug(const std::string& what) {
  std::fprintf(stderr, "cli_fuzz: %s\n", what.c_str());
  std::abort();
}

// One scratch directory per process, removed at exit (libFuzzer's -jobs run several processes).
const fs::path& scratch() {
  static const fs::path dir = [] {
    std::string tmpl = (fs::temp_directory_path() / "bmmc-cli-fuzz-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) bug("mkdtemp failed");
    std::atexit([] { std::error_code ec; fs::remove_all(scratch(), ec); });
    return fs::path(tmpl);
  }();
  return dir;
}

void write_bytes(const fs::path& p, const std::uint8_t* data, std::size_t size) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!f) bug("cannot write the fuzz input file " + p.string());
}

std::vector<std::uint8_t> read_bytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

const std::vector<std::uint8_t> kSentinel = {'s', 'e', 'n', 't', 'i', 'n', 'e', 'l'};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::uint8_t head[3] = {0, 0, 0};
  std::memcpy(head, data, size < 3 ? size : 3);
  const std::size_t rest_at = size < 3 ? size : 3;
  const std::string_view rest(reinterpret_cast<const char*>(data) + rest_at, size - rest_at);
  const std::size_t nl = rest.find('\n');
  const std::string spec(rest.substr(0, nl));
  const std::uint8_t* file = data + rest_at + (nl == std::string_view::npos ? rest.size() : nl + 1);
  const std::size_t file_size = static_cast<std::size_t>(data + size - file);

  const int elem_bytes = static_cast<std::int8_t>(head[0]);
  std::optional<int> n;
  if (head[1] < 210) n = head[1] % 70 - 3;
  const std::string backend = (head[2] & 2) ? "gpu!" : (head[2] & 1) ? "auto" : "cpu";
  const int out_kind = (head[2] >> 2) & 3;
  const bool missing_input = head[2] & 16;

  const fs::path& dir = scratch();
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir)) fs::remove_all(e.path(), ec);
  const fs::path in = dir / "in.bin";
  if (!missing_input) write_bytes(in, file, file_size);
  fs::path out = dir / "out.bin";
  switch (out_kind) {
    case 0: break;
    case 1: write_bytes(out, kSentinel.data(), kSentinel.size()); break;
    case 2: out = dir / "missing" / "out.bin"; break;
    case 3: fs::create_directory(out); break;
  }

  bool ok = false;
  try {
    bmmc::PermuterOptions options;
    options.backend = bmmc::parse_backend(backend);
    bmmc::permute_file(bmmc::parse_spec(spec, n), elem_bytes, in.string(), out.string(), options);
    ok = true;
  } catch (const std::invalid_argument&) {
    // Bad input (CLI exit 2): the normal outcome for most fuzz inputs.
  } catch (const std::runtime_error& e) {
    // I/O failure (CLI exit 1): legitimate only when the output location cannot take a file.
    if (out_kind < 2) bug(std::string("runtime_error with a writable output path: ") + e.what());
  } catch (const std::exception& e) {
    bug(std::string("unexpected exception type: ") + e.what());
  }

  // What the output path holds now must match the outcome.
  switch (out_kind) {
    case 0:
      if (!ok && fs::exists(out)) bug("a failed permute created its output file");
      break;
    case 1:
      if (!ok && read_bytes(out) != kSentinel) bug("a failed permute changed its output file");
      break;
    case 2:
      if (ok || fs::exists(out.parent_path())) bug("permute into a missing directory succeeded or created it");
      break;
    case 3:
      if (ok || !fs::is_directory(out)) bug("permute over a directory succeeded or replaced it");
      break;
  }
  // No temporary file may be left behind (write_file_atomic removes it on every error path).
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.find(".bmmc-") != std::string::npos) bug("temporary file left behind: " + name);
  }
  if (!ok) return 0;

  // Success: the output is the permutation of the input.
  const bmmc::Bmmc p = bmmc::parse_spec(spec, n);
  const std::vector<std::uint8_t> got = read_bytes(out);
  if (got.size() != file_size) bug("output size differs from the input size");
  const auto eb = static_cast<std::size_t>(elem_bytes);
  if (file_size != (std::size_t{1} << p.n()) * eb) bug("permute accepted an input of the wrong size");
  for (std::size_t x = 0; x < (std::size_t{1} << p.n()); ++x) {
    const std::size_t y = p.apply(x);
    if (std::memcmp(got.data() + y * eb, file + x * eb, eb) != 0) bug("out[A·x ^ c] != in[x]");
  }
  return 0;
}
