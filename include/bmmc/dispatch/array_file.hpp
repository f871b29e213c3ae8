// Raw array files: an array of 2^n elements stored as its bytes, permuted file to file on any backend.
//
// The rules every caller (the CLI's `bmmc permute`, the fuzzer, scripts) gets from here: the input's size is
// checked against 2^n · elem_bytes before it is read (a stream, such as standard input, is read whole and its
// size checked before anything is written); a regular output file is only ever replaced whole — written to a
// temporary file beside it and renamed over it after everything succeeded — so on any error its path is exactly
// as it was. Standard output, devices and pipes cannot be replaced: they are written in order once everything
// before succeeded. Bad input (sizes, element size, missing or unreadable files, an unavailable backend) is
// std::invalid_argument; failures of the output location itself (a full disk, a directory in the way) are
// std::runtime_error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bmmc/core/bmmc.hpp"
#include "bmmc/distributed.hpp"
#include "bmmc/permute.hpp"

namespace bmmc {

/// The whole file. Throws std::invalid_argument when it cannot be opened or is a directory, or when
/// `expected_bytes` is given and the file has another size (for a regular file checked before reading). "-" is
/// standard input; it, a pipe, a terminal or a character device (/dev/stdin, a FIFO) is read in order to its end,
/// at most one byte past `expected_bytes` (a longer stream is refused without reading it all).
std::vector<std::byte> read_array_file(const std::string& path, std::optional<std::size_t> expected_bytes = {});

/// Writes `bytes` to `path` atomically (temporary file in the same directory, then rename). On any error
/// `path` is left as it was and the temporary file is removed; a replaced file keeps its mode. Symbolic links are
/// followed (the file they name is replaced, or created for a dangling link). A device, pipe or socket
/// (/dev/null, a FIFO) and a link into /proc or /dev (/dev/stdout, /dev/fd/N) are written into, appending, once
/// the caller is done — a reader that goes away midway leaves what was written and is an error (EPIPE, not
/// SIGPIPE). "-" is standard output, written in order the same way (it cannot be replaced: a failure midway
/// leaves what was written). A directory or a loop of links is an error.
void write_file_atomic(const std::string& path, const void* data, std::size_t bytes);

/// Reads `in_path` (2^n · elem_bytes bytes), permutes it on options.backend (permute_host) and writes
/// `out_path` atomically; `in_path` and `out_path` may name the same file. With options.in_place the loaded
/// array is permuted in place (permute_host_inplace: no second array in memory); the file is the same.
/// Returns the backend that ran.
Backend permute_file(const Bmmc& bmmc, int elem_bytes, const std::string& in_path, const std::string& out_path,
                     const PermuterOptions& options = {});

/// Any shape on a file: reads `in_path` (map.size() · elem_bytes bytes), permutes it on options.backend
/// (permute_host(DigitMap…); in place with options.in_place, involutions only) and writes `out_path` atomically.
/// Checks the map, the element size and in place before a file is read.
Backend permute_file(const DigitMap& map, int elem_bytes, const std::string& in_path, const std::string& out_path,
                     const PermuterOptions& options = {});

/// The distributed path (docs/DESIGN.md §9) on a file: reads the array, runs the distributed plan on `ranks` ranks —
/// rank r holds elements [r·2^m, (r+1)·2^m), m = n − log2(ranks) — and writes the output atomically: the same
/// bytes as permute_file. `ranks` must be a power of two, at most 2^n and 2^kMaxRankBits (dist_rank_bits). The
/// ranks are simulated on the CPU (a DistributedPermuter over SimulatedRanks, with `options`: engine, in place,
/// pieces, CPU policy): Backend::Cuda is refused (a file is not split over GPUs), Auto and Cpu run it. Checks
/// everything before touching a file.
Backend permute_file_distributed(const Bmmc& bmmc, int elem_bytes, const std::string& in_path,
                                 const std::string& out_path, std::uint64_t ranks, Backend backend = Backend::Auto,
                                 const DistributedOptions& options = {});

}  // namespace bmmc
