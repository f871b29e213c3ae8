// The Python extension module bmmc._bmmc: nanobind bindings of the Bmmc algebra, the spec parser and the
// library's front doors: bmmc::permute (which picks the CPU executor or the CUDA runtime), and
// bmmc::DistributedPermuter over an ExchangeGroup whose collectives are Python callables (bmmc.distributed).
//
// The thin Python layer (python/bmmc/__init__.py) owns everything framework-specific: allocating `out` like
// `x` (numpy.empty_like / Tensor.new_empty / cupy.empty_like) and finding the framework's current CUDA
// stream. The general path (_permute) sees DLPack arrays through nb::ndarray (zero-copy for NumPy, PyTorch,
// CuPy...); the fast path (_Prepared, used by bmmc/_fast.py) takes raw pointers or NumPy buffers. It checks
// what the C++ API cannot: that both arrays live on the same device, are C-contiguous, have the
// same dtype and a power-of-two number of elements. Every failure is a ValueError or TypeError that says
// what was wrong and what was expected; spec errors are bmmc.SpecError, a subclass of ValueError.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <cstdio>
#include <string>
#include <vector>

#include "bmmc/core/bmmc.hpp"
#include "bmmc/core/buffers.hpp"
#include "bmmc/core/named.hpp"
#include "bmmc/core/spec.hpp"
#include "bmmc/dispatch/permuter_cache.hpp"
#include "bmmc/core/involution.hpp"
#include "bmmc/dist/alltoall.hpp"
#include "bmmc/permute.hpp"
#include "digit_ext.hpp"
#include "dist_ext.hpp"
#include "numpy_fast.hpp"
#include "prepared.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

using bmmc::Bmmc;
using bmmc::BitVec;
using bmmc_python::Prepared;

// snprintf, not iostreams: the wheel links libstdc++ statically, and inside a Python process that has
// loaded another libstdc++ (PyTorch's) the static copy's stream facets printed nothing — seen on the H100
// machine as repr "bmmc.from_rows([0x, 0x, ...])".
std::string hex(BitVec v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// An evaluable repr: bmmc.from_rows([...], c=0x...) rebuilds the same BMMC.
std::string repr(const Bmmc& b) {
  std::string r = "bmmc.from_rows([";
  for (int i = 0; i < b.n(); ++i) r += (i ? ", " : "") + hex(b.matrix().row(i));
  return r + "], c=" + hex(b.complement()) + ")";
}

void check_index(const Bmmc& b, std::uint64_t x) {
  if (b.n() < 64 && (x >> b.n()) != 0)
    throw std::invalid_argument("index " + std::to_string(x) + " is out of range for a BMMC on n = " +
                                std::to_string(b.n()) + " bits: expected 0 <= x < 2^" + std::to_string(b.n()));
}

// apply over a NumPy array (the Python layer converts to contiguous uint64 first); returns a new array.
nb::ndarray<nb::numpy, std::uint64_t> apply_array(const Bmmc& b,
                                                   nb::ndarray<const std::uint64_t, nb::c_contig, nb::device::cpu> x) {
  const std::size_t size = x.size();
  std::vector<std::size_t> shape(x.ndim());
  for (std::size_t i = 0; i < x.ndim(); ++i) shape[i] = x.shape(i);
  auto* y = new std::uint64_t[size > 0 ? size : 1];
  nb::capsule owner(y, [](void* p) noexcept { delete[] static_cast<std::uint64_t*>(p); });
  const std::uint64_t* in = x.data();
  for (std::size_t i = 0; i < size; ++i) check_index(b, in[i]);
  {
    nb::gil_scoped_release release;
    for (std::size_t i = 0; i < size; ++i) y[i] = b.apply(in[i]);
  }
  return nb::ndarray<nb::numpy, std::uint64_t>(y, shape.size(), shape.data(), owner);
}

// The matrix as a NumPy uint8 n×n array, a[i][j] = a_ij (row i = output bit i, column j = input bit j).
nb::ndarray<nb::numpy, std::uint8_t, nb::ndim<2>> matrix_array(const Bmmc& b) {
  const std::size_t n = static_cast<std::size_t>(b.n());
  auto* a = new std::uint8_t[n * n > 0 ? n * n : 1];
  nb::capsule owner(a, [](void* p) noexcept { delete[] static_cast<std::uint8_t*>(p); });
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) a[i * n + j] = b.matrix().get(int(i), int(j)) ? 1 : 0;
  return nb::ndarray<nb::numpy, std::uint8_t, nb::ndim<2>>(a, {n, n}, owner);
}

// From a 0/1 matrix (the Python layer converts bool / integer arrays to contiguous uint8).
Bmmc from_matrix_array(nb::ndarray<const std::uint8_t, nb::ndim<2>, nb::c_contig, nb::device::cpu> a, BitVec c) {
  const std::size_t rows = a.shape(0), cols = a.shape(1);
  if (rows != cols || rows > 64)
    throw std::invalid_argument("matrix must be square n×n with n <= 64, got shape (" + std::to_string(rows) + ", " +
                                std::to_string(cols) + ")");
  std::vector<BitVec> r(rows, 0);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) {
      const std::uint8_t v = a.data()[i * cols + j];
      if (v > 1)
        throw std::invalid_argument("matrix entries must be 0 or 1, got " + std::to_string(v) + " at [" +
                                    std::to_string(i) + ", " + std::to_string(j) + "]");
      r[i] |= BitVec(v) << j;
    }
  return bmmc::from_rows(r, c);
}

// ---- permute ---------------------------------------------------------------------------------------------

template <class Array>
std::string shape_text(const Array& a) {
  std::string s = "(";
  for (std::size_t i = 0; i < a.ndim(); ++i) s += (i ? ", " : "") + std::to_string(a.shape(i));
  return s + (a.ndim() == 1 ? ",)" : ")");
}

template <class Array>
bool c_contiguous(const Array& a) {
  // DLPack strides are in elements; dimensions of extent 1 may carry any stride.
  std::int64_t expect = 1;
  for (std::size_t k = a.ndim(); k-- > 0;) {
    if (a.shape(k) != 1 && a.stride(k) != expect) return false;
    expect *= static_cast<std::int64_t>(a.shape(k));
  }
  return true;
}

const char* device_name(int type) {
  switch (type) {
    case nb::device::cpu::value: return "cpu";
    case nb::device::cuda::value: return "cuda";
    case nb::device::cuda_host::value: return "cuda_host";
    case nb::device::cuda_managed::value: return "cuda_managed";
    default: return "an unsupported device";
  }
}

// A DLPack dtype as NumPy and PyTorch spell it (float32, int64, complex128, bool, bfloat16), for messages.
std::string dtype_name(nb::dlpack::dtype d) {
  std::string base;
  switch (static_cast<nb::dlpack::dtype_code>(d.code)) {
    case nb::dlpack::dtype_code::Int: base = "int"; break;
    case nb::dlpack::dtype_code::UInt: base = "uint"; break;
    case nb::dlpack::dtype_code::Float: base = "float"; break;
    case nb::dlpack::dtype_code::Bfloat: base = "bfloat"; break;
    case nb::dlpack::dtype_code::Complex: base = "complex"; break;
    case nb::dlpack::dtype_code::Bool: return d.lanes == 1 ? "bool" : "bool x" + std::to_string(d.lanes);
    default: base = "dlpack-type-" + std::to_string(d.code) + "-bits-"; break;
  }
  return base + std::to_string(d.bits) + (d.lanes == 1 ? "" : " x" + std::to_string(d.lanes));
}

// Returns log2 of the element count (the BMMC's n) after checking one array of a permute call.
template <class Array>
int check_array(const Array& a, const char* what) {
  if (!c_contiguous(a))
    throw std::invalid_argument(std::string(what) + " must be C-contiguous (shape " + shape_text(a) +
                                "); call .contiguous() / numpy.ascontiguousarray / cupy.ascontiguousarray first");
  const std::size_t size = a.size();
  if (size == 0 || !std::has_single_bit(size))
    throw std::invalid_argument(std::string(what) + " has " + std::to_string(size) + " elements (shape " +
                                shape_text(a) + "); a BMMC permutes arrays of 2^n elements");
  const int eb = static_cast<int>(a.itemsize());
  if (!bmmc::supported_elem_bytes(eb) || a.dtype().lanes != 1)
    throw nb::type_error((std::string(what) + " has elements of " + std::to_string(eb) +
                          " bytes; expected a dtype of 1, 2, 4, 8 or 16 bytes")
                             .c_str());
  return std::countr_zero(size);
}

// out[A·x ⊕ c] = in[x] over the flat C-order index, through the library's front door (bmmc/permute.hpp):
// CPU arrays on the cpu backend, CUDA arrays on the cuda backend on their own device. `stream` is a
// cudaStream_t as an integer (0 = the legacy default stream); ignored for CPU arrays. Returns nothing: the
// The backend of an array's DLPack device: CPU memory (pinned too) → the CPU with `threads`, CUDA memory → CUDA
// on its device; anything else is refused.
bmmc::PermuterOptions options_for_device(int dev, std::int64_t device_id, int threads) {
  bmmc::PermuterOptions options;
  if (dev == nb::device::cpu::value || dev == nb::device::cuda_host::value) {
    options.backend = bmmc::Backend::Cpu;
    options.cpu.threads = threads;
  } else if (dev == nb::device::cuda::value || dev == nb::device::cuda_managed::value) {
    if (!bmmc::has_cuda_build())
      throw std::invalid_argument(
          "x is a CUDA array but this bmmc module was built without CUDA (no toolkit was found at build time); "
          "rebuild with a CUDA toolkit (pip install ./python -C cmake.define.BMMC_CUDA=ON) or pass a CPU array");
    options.backend = bmmc::Backend::Cuda;
    options.gpu.device = static_cast<int>(device_id);
  } else {
    throw std::invalid_argument(std::string("x is on ") + device_name(dev) + "; expected a CPU or CUDA array");
  }
  return options;
}

// Python layer returns `out`.
void permute_arrays(const Bmmc& b, nb::ndarray<nb::ro> x, nb::ndarray<> out, std::uintptr_t stream, int threads) {
  const int n = check_array(x, "x");
  const int n_out = check_array(out, "out");
  if (x.dtype() != out.dtype() || x.itemsize() != out.itemsize())
    throw nb::type_error(("out has dtype " + dtype_name(out.dtype()) + " but x has dtype " + dtype_name(x.dtype()) +
                          "; expected out of x's dtype, " + dtype_name(x.dtype()))
                             .c_str());
  if (n_out != n)
    throw std::invalid_argument("out has " + std::to_string(out.size()) + " elements but x has " +
                                std::to_string(x.size()) + "; expected the same size");
  if (x.device_type() != out.device_type() || x.device_id() != out.device_id())
    throw std::invalid_argument(std::string("x is on ") + device_name(x.device_type()) + ":" +
                                std::to_string(x.device_id()) + " but out is on " + device_name(out.device_type()) +
                                ":" + std::to_string(out.device_id()) + "; expected the same device");
  if (b.n() != n)
    throw std::invalid_argument("the BMMC has n = " + std::to_string(b.n()) + " bits but the array has 2^" +
                                std::to_string(n) + " elements; expected a BMMC on n = " + std::to_string(n));
  const bmmc::PermuterOptions options = options_for_device(x.device_type(), x.device_id(), threads);
  nb::gil_scoped_release release;
  bmmc::permute(b, x.data(), out.data(), static_cast<int>(x.itemsize()), options,
                reinterpret_cast<bmmc::StreamHandle>(stream));
}

// swap_index_bits(x, pairs, mask_bits, mask_value): cuStateVec's bit swaps, in place on x.
void swap_bits_array(nb::ndarray<> x, const std::vector<std::pair<int, int>>& pairs, BitVec mask_bits,
                     BitVec mask_value, std::uintptr_t stream, int threads) {
  const int n = check_array(x, "x");
  const bmmc::PermuterOptions options = options_for_device(x.device_type(), x.device_id(), threads);
  nb::gil_scoped_release release;
  bmmc::swap_index_bits(x.data(), n, static_cast<int>(x.itemsize()), pairs, mask_bits, mask_value, options,
                        reinterpret_cast<bmmc::StreamHandle>(stream));
}

bool gpu_available() { return bmmc::backend_available(bmmc::Backend::Cuda); }

}  // namespace

NB_MODULE(_bmmc, m) {
  m.doc() = "bmmc: BMMC permutations y = A·x ⊕ c of arrays of 2^n elements (native part; use the bmmc package)";
  // bmmc/_fast.py's exit handler turns nanobind's leak report off where torch.compile traced bmmc's ops: compiled
  // code keeps the caller's module globals (a Bmmc among them) alive past nanobind's check at teardown.
  m.def("_set_leak_warnings", [](bool on) { nb::set_leak_warnings(on); }, nb::arg("on"));

  // SpecError (a std::invalid_argument) keeps its own Python class, a ValueError subclass, so callers may
  // catch either; its message already names the column, and .column carries it as the C++ column() does.
  // The translator registered last is tried first, so this one (which sets .column) replaces the plain one
  // that nb::exception installs.
  static nb::exception<bmmc::SpecError> spec_error(m, "SpecError", PyExc_ValueError);
  spec_error.attr("column") = 0;
  spec_error.attr("__doc__") =
      "A spec that cannot be parsed or evaluated (a ValueError). str(e) is the full message; e.column is the "
      "1-based column of the offending character in the spec text, 0 when the fault is not in the text.";
  nb::register_exception_translator(
      [](const std::exception_ptr& p, void* type) {
        try {
          std::rethrow_exception(p);
        } catch (const bmmc::SpecError& e) {
          PyObject* error = PyObject_CallFunction(static_cast<PyObject*>(type), "s", e.what());
          if (error == nullptr) return;  // the Python error raised while building it stands
          PyObject* column = PyLong_FromLong(e.column());
          if (column == nullptr || PyObject_SetAttrString(error, "column", column) != 0) {
            Py_XDECREF(column);
            Py_DECREF(error);
            return;
          }
          Py_DECREF(column);
          PyErr_SetObject(static_cast<PyObject*>(type), error);
          Py_DECREF(error);
        }
      },
      spec_error.ptr());

  nb::class_<Bmmc>(m, "Bmmc",
                   "An affine permutation y = A·x ⊕ c of the indices of an array of 2^n elements: out[A·x ⊕ c] = "
                   "in[x].\n\nBmmc(spec, n=None) parses the spec language (e.g. 'bit-reverse', "
                   "'rotate:3*gray^0b101'); n supplies the number of index bits where the spec does not define it.")
      .def(
          "__init__",
          [](Bmmc* self, const std::string& spec, std::optional<int> n) { new (self) Bmmc(bmmc::parse_spec(spec, n)); },
          "spec"_a, "n"_a = nb::none())
      .def_static("_from_matrix_u8", &from_matrix_array, "a"_a, "c"_a = 0)
      .def_static(
          "from_rows", [](const std::vector<BitVec>& rows, BitVec c) { return bmmc::from_rows(rows, c); }, "rows"_a,
          "c"_a = 0, "From rows as integers (bit j of rows[i] = a_ij) and the complement c.")
      .def_prop_ro("n", &Bmmc::n, "Number of index bits: the BMMC permutes arrays of 2^n elements.")
      .def_prop_ro("c", &Bmmc::complement, "The complement vector c as an integer.")
      .def_prop_ro("rows", [](const Bmmc& b) { return b.matrix().row_list(); },
                   "Rows of A as integers: bit j of rows[i] = a_ij.")
      .def_prop_ro("matrix", [](const Bmmc& b) { return nb::cast(matrix_array(b), nb::rv_policy::move); }, "A as a NumPy uint8 n×n array: matrix[i, j] = a_ij.")
      .def("_apply_int",
           [](const Bmmc& b, std::uint64_t x) {
             check_index(b, x);
             return b.apply(x);
           })
      .def("_apply_u64", &apply_array)
      .def("inverse", &Bmmc::inverse, "The inverse BMMC: self @ self.inverse() is the identity.")
      .def(
          "__matmul__", [](const Bmmc& f, const Bmmc& g) { return bmmc::compose(f, g); }, nb::is_operator(),
          "f @ g = f ∘ g: apply g first, then f.")
      .def(
          "classify", [](const Bmmc& b, int tile_bits) { return std::string(bmmc::to_string(b.classify(tile_bits))); },
          "tile_bits"_a = 5, "'BP', 'BPC', 'tiled' or 'general' (the paper's classes; tiles of 2^tile_bits).")
      .def("is_bp", &Bmmc::is_bp)
      .def("is_bpc", &Bmmc::is_bpc)
      .def("__eq__", [](const Bmmc& a, const Bmmc& b) { return a == b; }, nb::is_operator())
      .def("__ne__", [](const Bmmc& a, const Bmmc& b) { return !(a == b); }, nb::is_operator())
      .def("__hash__", [](const Bmmc& b) { return std::hash<Bmmc>{}(b); })
      .def("__repr__", &repr)
      .def("__str__", [](const Bmmc& b) { return "n = " + std::to_string(b.n()) + "\n" + b.to_string(); })
      .def("__getstate__", [](const Bmmc& b) { return std::make_pair(b.matrix().row_list(), b.complement()); })
      .def("__setstate__", [](Bmmc& self, const std::pair<std::vector<BitVec>, BitVec>& s) {
        new (&self) Bmmc(bmmc::from_rows(s.first, s.second));
      });

  m.def(
      "parse_spec", [](std::string_view text, std::optional<int> n) { return bmmc::parse_spec(text, n); }, "text"_a,
      "n"_a = nb::none(), "Parse a spec (docs/DESIGN.md §2) into a Bmmc.");
  // For bmmc.permute, whose n is the array's size: its messages name that ("but n = log2(x.size) is 4").
  m.def("_parse_spec_named", &bmmc::parse_spec, "text"_a, "n"_a, "n_name"_a);
  m.def("identity", &bmmc::identity, "n"_a);
  m.def("bit_reverse", &bmmc::bit_reverse, "n"_a, "y_i = x_{n-1-i}.");
  m.def("reverse", &bmmc::reverse, "n"_a, "x ↦ 2^n − 1 − x (identity matrix, c = all ones).");
  m.def("rotate", &bmmc::rotate, "n"_a, "k"_a = 1, "Cyclic shift of the bits towards the LSB by k: y_i = x_{(i+k) mod n}.");
  m.def("transpose_matrix", &bmmc::transpose, "n"_a, "r"_a,
        "Transpose of a row-major 2^r × 2^(n−r) matrix (the spec's transpose:R).");
  m.def("gray", &bmmc::gray, "n"_a, "Gray code y = x ⊕ (x >> 1).");
  m.def("gray_inverse", &bmmc::gray_inverse, "n"_a);
  m.def("parm_matrix", &bmmc::parm_matrix, "n"_a, "mask"_a, "The paper's §7.2 matrix for parm with this mask.");
  m.def("bit_permutation", &bmmc::bit_permutation, "p"_a, "Input bit i goes to output bit p[i].");
  m.def("axes_permutation", &bmmc::axes_permutation, "shape"_a, "axes"_a,
        "numpy.transpose(x, axes) of a C-order array of this shape (powers of two) as a BMMC.");
  m.def("from_rows", [](const std::vector<BitVec>& rows, BitVec c) { return bmmc::from_rows(rows, c); }, "rows"_a,
        "c"_a = 0);
  m.def("random_bpc", &bmmc::random_bpc, "n"_a, "seed"_a = 0, "A reproducible random BPC.");
  m.def("random_bmmc", &bmmc::random_bmmc, "n"_a, "seed"_a = 0, "A reproducible random BMMC.");

  m.def("_permute", &permute_arrays, "bmmc"_a, "x"_a, "out"_a, "stream"_a = 0, "threads"_a = 0);
  m.def("_swap_index_bits", &swap_bits_array, "x"_a, "pairs"_a, "mask_bits"_a = 0, "mask_value"_a = 0, "stream"_a = 0,
        "threads"_a = 0);
  m.def("swap_index_bits_matrix", [](int n, const std::vector<std::pair<int, int>>& pairs) {
    return bmmc::swap_index_bits(n, pairs);
  }, "n"_a, "pairs"_a, "The BMMC that swaps index bits pairs[i][0] <-> pairs[i][1] (disjoint pairs).");
  m.def("factor_involutions", [](const Bmmc& f) {
    const bmmc::InvolutionFactorization r = bmmc::factor_involutions_explained(f);
    return std::make_pair(r.factors, r.route);
  }, "bmmc"_a, "The in-place passes of f: involutions g_1..g_k with f = g_k ∘ … ∘ g_1, and the route taken.");

  m.def("_dist_alltoall_step", [](const Bmmc& b, int rank_bits, int elem_bytes, std::uint64_t rank) {
    const bmmc::DistPlan plan = bmmc::make_dist_plan(b, rank_bits, elem_bytes);
    const bmmc::AllToAllStep s = bmmc::alltoall_step(plan, rank);
    nb::dict d;
    d["k"] = plan.k;
    d["pre"] = s.pre;
    d["post"] = s.post;
    d["send_counts"] = s.send_counts;
    d["recv_counts"] = s.recv_counts;
    d["local_only"] = s.local_only;
    d["local"] = s.local;
    d["hash"] = bmmc::dist_plan_hash(plan);
    return d;
  }, "bmmc"_a, "rank_bits"_a, "elem_bytes"_a, "rank"_a,
     "Rank `rank`'s step of the distributed plan as one all-to-all with counts (bmmc/dist/alltoall.hpp): the local "
     "pre- and post-pass Bmmcs, elements sent to / received from each rank, the plan's hash (equal on every rank "
     "for equal plans), and whether the job is purely local. Used by bmmc.distributed.plan_step.");
  bmmc_python::bind_distributed(m);

  nb::class_<Prepared>(m, "_Prepared",
                       "A prepared permutation for the Python fast path (bmmc/_fast.py): Permuter for (bmmc, "
                       "elem_bytes, device (-1 = CPU), threads), called with raw pointers.")
      .def(nb::init<const Bmmc&, int, int, int, std::size_t>(), "bmmc"_a, "elem_bytes"_a, "device"_a = -1,
           "threads"_a = 0, "nogil_bytes"_a = std::size_t{1} << 18)
      .def(nb::init<const bmmc::DigitMap&, int, int, int, std::size_t, bool>(), "map"_a, "elem_bytes"_a,
           "device"_a = -1, "threads"_a = 0, "nogil_bytes"_a = std::size_t{1} << 18, "in_place"_a = false)
      .def("call_in_place", &Prepared::call_in_place, "data_ptr"_a, "stream"_a = 0)
      .def("__call__", &Prepared::call, "x_ptr"_a, "out_ptr"_a, "stream"_a = 0)
      .def("call_buffers", &Prepared::call_buffers, "x"_a, "out"_a)
      .def_prop_ro("alignment", &Prepared::alignment, "Bytes x and out must be aligned to.")
      .def_prop_ro("bytes", &Prepared::bytes, "Bytes of one array.")
      .def_prop_ro("releases_gil", &Prepared::releases_gil)
      .def_prop_ro("in_place", [](const Prepared& p) { return p.permuter().in_place(); })
      .def_prop_ro("n", [](const Prepared& p) { return p.permuter().n(); })
      .def_prop_ro("elem_bytes", [](const Prepared& p) { return p.permuter().elem_bytes(); })
      .def_prop_ro("backend", [](const Prepared& p) { return std::string(bmmc::to_string(p.permuter().backend())); })
      .def_prop_ro("kernel_name", [](const Prepared& p) { return p.permuter().kernel_name(); });
  m.def("_permuter_cache_stats", [] {
    const bmmc::PermuterCacheStats st = bmmc::default_permuter_cache().stats();
    nb::dict d;
    d["hits"] = st.hits;
    d["misses"] = st.misses;
    d["evictions"] = st.evictions;
    d["size"] = st.size;
    d["capacity"] = st.capacity;
    return d;
  }, "The library's Permuter cache (bmmc/dispatch/permuter_cache.hpp), which every path of this module shares.");
  bmmc_python::bind_digit_map(m);
  bmmc_python::bind_numpy_fast(m);
  m.def("has_cuda", &bmmc::has_cuda_build, "Was this module built with the CUDA runtime?");
  m.def("gpu_available", &gpu_available, "Is a CUDA GPU usable from this process (False when built without CUDA)?");
}
