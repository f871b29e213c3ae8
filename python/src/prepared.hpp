// The prepared call of the Python layer's fast path (python/bmmc/_fast.py and numpy_fast.hpp), bound as
// bmmc._bmmc._Prepared.
//
// A Prepared holds one bmmc::Permuter for (Bmmc, element size, backend, device, CPU threads), taken from the
// library's own PermuterCache with the key bmmc::permute would use for aligned pointers, so both paths share
// entries and kernels; or, for an any-shape map (bmmc::DigitMap: bmmc.transpose with odd extents, flips or
// rolls, bmmc.contiguous), the Permuter of the front door's DigitMap constructor from the same cache, out of place
// or in place (involutions only), for elements of any size. Its calls take raw integers (data pointers, a cudaStream_t) or, for NumPy, the two
// arrays through the buffer protocol: no DLPack export, no per-call Python-side validation. The Python layer
// validates once per cache entry (dtype, shape, device) and checks per call only what can change between
// calls with the same key (contiguity, `out`, alignment); the Permuter still checks null, overlapping and
// misaligned pointers (and device vs host memory) and raises ValueError for them.
//
// The GIL: a CUDA call only enqueues (a few µs) and runs with the GIL held — releasing it costs a
// release/re-acquire pair per call, and re-acquiring can wait for another thread's switch interval, which
// is worse than holding it for a few µs. A CPU call runs the permutation to completion and releases the GIL
// when the array has at least `nogil_bytes` bytes (python/bmmc/_fast.py passes 256 KiB; below that a call
// takes a few µs and the release/re-acquire pair is measurable overhead).
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "bmmc/core/bmmc.hpp"
#include "bmmc/core/buffers.hpp"
#include "bmmc/core/digit_map.hpp"
#include "bmmc/dispatch/permuter_cache.hpp"
#include "bmmc/permute.hpp"

namespace bmmc_python {

namespace nb = nanobind;

class Prepared {
 public:
  Prepared(const bmmc::Bmmc& b, int elem_bytes, int device, int threads, std::size_t nogil_bytes) {
    if (!bmmc::supported_elem_bytes(elem_bytes))
      throw nb::type_error(("elements of " + std::to_string(elem_bytes) +
                            " bytes are not supported; expected a dtype of 1, 2, 4, 8 or 16 bytes")
                               .c_str());
    const bmmc::PermuterOptions options = options_for(device, threads);
    cuda_ = device >= 0;
    bytes_ = (std::size_t{1} << b.n()) * static_cast<std::size_t>(elem_bytes);
    nogil_ = !cuda_ && bytes_ >= nogil_bytes;
    // Planning and (on CUDA) the JIT may take up to ~100 ms: other Python threads run meanwhile.
    nb::gil_scoped_release release;
    permuter_ = bmmc::default_permuter_cache().get(bmmc::PermuterKey{b, elem_bytes, options});
  }

  // An any-shape map of elem_bytes-byte elements (any size ≥ 1: the digit planner folds or splits them), out of
  // place or in place (the Python layer has checked that an in-place map is an involution of its shape). Its
  // Permuter comes from the library's PermuterCache under the key bmmc::permute(DigitMap, ...) uses.
  Prepared(const bmmc::DigitMap& map, int elem_bytes, int device, int threads, std::size_t nogil_bytes,
           bool in_place) {
    bmmc::PermuterOptions options = options_for(device, threads);
    options.in_place = in_place;
    cuda_ = device >= 0;
    in_place_ = in_place;
    bytes_ = static_cast<std::size_t>(map.size()) * static_cast<std::size_t>(elem_bytes);
    nogil_ = !cuda_ && bytes_ >= nogil_bytes;
    nb::gil_scoped_release release;
    permuter_ = bmmc::default_permuter_cache().get(bmmc::PermuterKey{bmmc::Bmmc{}, elem_bytes, options, map});
  }

  // out[A·x ⊕ c] = in[x] with raw pointers (and a cudaStream_t as an integer, 0 = the legacy default
  // stream; ignored on the CPU).
  void call(std::uintptr_t in, std::uintptr_t out, std::uintptr_t stream) const {
    const auto* src = reinterpret_cast<const void*>(in);
    auto* dst = reinterpret_cast<void*>(out);
    const auto s = reinterpret_cast<bmmc::StreamHandle>(stream);
    if (nogil_) {
      nb::gil_scoped_release release;
      (*permuter_)(src, dst, s);
    } else if (cuda_) {
      // The Python layer checked once per cache entry that x is a tensor of this device and per call that
      // out is on x's device: the per-call pointer queries are skipped (run_trusted).
      permuter_->run_trusted(src, dst, s);
    } else {
      (*permuter_)(src, dst, s);
    }
  }

  // The CPU call for objects with the buffer protocol (NumPy): `in` any C-contiguous buffer, `out` a
  // writable C-contiguous one, both of exactly bytes() bytes. Returns False without doing anything when
  // either cannot be had that way (non-contiguous, read-only, wrong size, no buffer protocol) or both are one
  // buffer: the Python layer then takes its general path, which raises the error that says what was wrong, or
  // runs one buffer in place.
  bool call_buffers(nb::handle in, nb::handle out) const {
    Py_buffer bin, bout;
    if (PyObject_GetBuffer(in.ptr(), &bin, PyBUF_SIMPLE) != 0) {
      PyErr_Clear();
      return false;
    }
    if (PyObject_GetBuffer(out.ptr(), &bout, PyBUF_SIMPLE | PyBUF_WRITABLE) != 0) {
      PyErr_Clear();
      PyBuffer_Release(&bin);
      return false;
    }
    struct Release {
      Py_buffer* a;
      Py_buffer* b;
      ~Release() {
        PyBuffer_Release(a);
        PyBuffer_Release(b);
      }
    } release_buffers{&bin, &bout};
    if (static_cast<std::size_t>(bin.len) != bytes_ || static_cast<std::size_t>(bout.len) != bytes_) return false;
    if (bin.buf == bout.buf) return false;  // out is (a view of all of) x: the general path runs it in place
    call(reinterpret_cast<std::uintptr_t>(bin.buf), reinterpret_cast<std::uintptr_t>(bout.buf), 0);
    return true;
  }

  // An in-place Prepared (any-shape involutions): permutes the array at `data` (a raw pointer) in place.
  void call_in_place(std::uintptr_t data, std::uintptr_t stream) const {
    if (!in_place_) throw std::invalid_argument("this prepared map runs out of place: call it with x and out");
    auto* p = reinterpret_cast<void*>(data);
    const auto s = reinterpret_cast<bmmc::StreamHandle>(stream);
    if (nogil_) {
      nb::gil_scoped_release release;
      (*permuter_)(p, s);
    } else {
      (*permuter_)(p, s);
    }
  }

  std::size_t alignment() const noexcept { return permuter_->alignment(); }
  std::size_t bytes() const noexcept { return bytes_; }
  bool releases_gil() const noexcept { return nogil_; }
  const bmmc::Permuter& permuter() const noexcept { return *permuter_; }

 private:
  static bmmc::PermuterOptions options_for(int device, int threads) {
    bmmc::PermuterOptions options;
    if (device < 0) {
      options.backend = bmmc::Backend::Cpu;
      options.cpu.threads = threads;
    } else {
      if (!bmmc::has_cuda_build())
        throw std::invalid_argument(
            "x is a CUDA array but this bmmc module was built without CUDA (no toolkit was found at build "
            "time); rebuild with a CUDA toolkit (pip install ./python -C cmake.define.BMMC_CUDA=ON) or pass a "
            "CPU array");
      options.backend = bmmc::Backend::Cuda;
      options.gpu.device = device;
    }
    return options;
  }

  std::shared_ptr<const bmmc::Permuter> permuter_;
  std::size_t bytes_ = 0;
  bool cuda_ = false;
  bool in_place_ = false;
  bool nogil_ = false;
};

}  // namespace bmmc_python
