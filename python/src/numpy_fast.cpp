// The native hit path of bmmc.permute for NumPy arrays (see numpy_fast.hpp).
#include "numpy_fast.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <unordered_map>

// NumPy's C API, imported at run time (np_set_fallbacks); this file is its only user. Built against NumPy 2
// headers for any NumPy from 1.23 on (the package's run-time requirement): the target is spelled out so that
// newer headers do not raise it silently.
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define NPY_TARGET_VERSION NPY_1_23_API_VERSION
#include <numpy/arrayobject.h>

#include "bmmc/core/bmmc.hpp"
#include "prepared.hpp"

namespace bmmc_python {

namespace {

namespace nb = nanobind;
using namespace nb::literals;

// NPY_MAXDIMS of NumPy 2 (NumPy 1.x allows 32): every array NumPy makes can be keyed, (2,) * n qubit tensors too.
constexpr int kMaxDims = 64;
constexpr std::size_t kCapacity = 512;

// The two calls served here; an entry of one never serves the other.
enum Op : int { kPermute = 0, kTranspose = 1 };

// What makes two calls share an entry: the operation; its argument by value (the spec: equal strings or one
// Bmmc; the axes: None or one tuple of ints); x's dtype as key_dtype names it; the shape and the caller's
// thread count. The key holds its own references, so a dtype's address is never reused while it is a key.
struct Key {
  int op = kPermute;
  nb::object arg, dtype;
  Py_hash_t arg_hash = 0;
  int ndim = 0;
  std::array<npy_intp, kMaxDims> shape{};
  long threads = 0;

  bool operator==(const Key& o) const {
    if (op != o.op || arg_hash != o.arg_hash || dtype.ptr() != o.dtype.ptr() || ndim != o.ndim ||
        threads != o.threads || !std::equal(shape.begin(), shape.begin() + ndim, o.shape.begin()))
      return false;
    if (arg.ptr() == o.arg.ptr()) return true;
    const int eq = PyObject_RichCompareBool(arg.ptr(), o.arg.ptr(), Py_EQ);
    if (eq < 0) PyErr_Clear();
    return eq == 1;
  }
};

struct KeyHash {
  std::size_t operator()(const Key& k) const noexcept {
    std::size_t h = static_cast<std::size_t>(k.arg_hash);
    auto mix = [&h](std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
    for (int i = 0; i < k.ndim; ++i) mix(static_cast<std::size_t>(k.shape[i]));
    mix(std::hash<const void*>{}(k.dtype.ptr()));
    mix(static_cast<std::size_t>(k.threads));
    mix(static_cast<std::size_t>(k.op));
    return h;
  }
};

// A prepared call and the shape of its output (x's for a permute, the permuted shape for a transpose), which
// gets x's own dtype object (as numpy.empty(shape, x.dtype) would).
struct Entry {
  nb::object prepared;
  nb::object out_shape_tuple;  // the same shape as a Python tuple, for _np_lookup
  int out_ndim = 0;
  std::array<npy_intp, kMaxDims> out_shape{};
};

struct State {
  std::unordered_map<Key, Entry, KeyHash> table;
  std::array<nb::object, 2> fallback;  // python/bmmc/_fast.py's numpy_permute and numpy_transpose
  bool api = false;     // NumPy's C API imported (by _np_set_fallbacks, once NumPy is loaded)
  bool closed = false;  // set at exit: nothing is remembered any more, every call takes the general path
};

// Never destroyed (see numpy_fast.hpp).
State& state() {
  static State* s = new State;
  return *s;
}

// A Py_buffer released on scope exit (when it was obtained): what pins a large call's arrays while the GIL
// is released.
struct Buffer {
  Py_buffer view{};
  bool held = false;
  bool get(PyObject* o, int flags) {
    held = PyObject_GetBuffer(o, &view, flags) == 0;
    if (!held) PyErr_Clear();
    return held;
  }
  ~Buffer() {
    if (held) PyBuffer_Release(&view);
  }
};

// The dtype object that keys an array's entries: NumPy's own object for the array's built-in type where the
// array's dtype is equivalent to it (usually it is that object; an unpickled array has its own copy, and a dtype
// with metadata is another object equal to it), else the array's dtype object itself (byte-swapped, structured,
// ...: the Python path decides those). So equal dtypes share entries as they do in the Python path's dict.
nb::object key_dtype(PyArrayObject* a) {
  PyArray_Descr* d = PyArray_DESCR(a);
  PyArray_Descr* canon = PyArray_DescrFromType(PyArray_TYPE(a));  // a new reference, or null with an error set
  if (canon == nullptr) {
    PyErr_Clear();
    return nb::borrow(reinterpret_cast<PyObject*>(d));
  }
  if (canon == d || PyArray_EquivTypes(canon, d)) return nb::steal(reinterpret_cast<PyObject*>(canon));
  Py_DECREF(reinterpret_cast<PyObject*>(canon));
  return nb::borrow(reinterpret_cast<PyObject*>(d));
}

// x as an exact, C-contiguous ndarray of at most kMaxDims dimensions, or nullptr (the fallback decides).
PyArrayObject* plain_array(nb::handle x) {
  if (!PyArray_CheckExact(x.ptr())) return nullptr;
  auto* a = reinterpret_cast<PyArrayObject*>(x.ptr());
  return PyArray_IS_C_CONTIGUOUS(a) && PyArray_NDIM(a) <= kMaxDims ? a : nullptr;
}

// Only arguments whose hash and equality are NumPy-independent C code are looked up or remembered: for a
// permute an exact str or Bmmc spec, for a transpose None or an exact tuple of exact ints (a list of axes, or
// a tuple of NumPy integers, is the Python path's). A subclass's Python __eq__ / __hash__ would run inside the
// table's operations (a comparison with a subclass tries its reflected __eq__ first), where it could change
// the table.
bool plain_arg(int op, nb::handle arg) {
  static const auto* bmmc_type = reinterpret_cast<PyTypeObject*>(nb::type<bmmc::Bmmc>().ptr());
  PyObject* a = arg.ptr();
  if (op == kPermute) return PyUnicode_CheckExact(a) || Py_TYPE(a) == bmmc_type;
  if (a == Py_None) return true;
  if (!PyTuple_CheckExact(a)) return false;
  // PyTuple_Size / GetItem rather than the macros, which the limited API (the abi3 wheel) leaves out.
  const Py_ssize_t size = PyTuple_Size(a);
  for (Py_ssize_t i = 0; i < size; ++i)
    if (!PyLong_CheckExact(PyTuple_GetItem(a, i))) return false;
  return true;
}

// The key of a call on x, or false when arg or threads cannot make one (the fallback decides then).
bool make_key(int op, PyArrayObject* x, nb::handle arg, nb::handle threads, Key& k) {
  if (!plain_arg(op, arg) || !PyLong_CheckExact(threads.ptr())) return false;
  const long t = PyLong_AsLong(threads.ptr());
  if (t == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    return false;
  }
  if (t < 0) return false;  // the general path says what is wrong
  const Py_hash_t h = PyObject_Hash(arg.ptr());
  if (h == -1) {
    PyErr_Clear();
    return false;
  }
  k.op = op;
  k.arg = nb::borrow(arg);
  k.dtype = key_dtype(x);
  k.arg_hash = h;
  k.ndim = PyArray_NDIM(x);
  std::copy_n(PyArray_DIMS(x), k.ndim, k.shape.begin());
  k.threads = t;
  return true;
}

nb::object np_call(int op, nb::handle x, nb::handle arg, nb::handle out, nb::handle threads) {
  State& s = state();
  // None (the general path) where no fallback is set: before bmmc._fast set it, or after exit emptied it.
  auto fall_back = [&] {
    const nb::object& f = s.fallback[op];
    return f.is_valid() ? f(x, arg, out, threads) : nb::none();
  };
  PyArrayObject* ax = s.api ? plain_array(x) : nullptr;
  Key key;
  if (ax == nullptr || !make_key(op, ax, arg, threads, key)) return fall_back();
  const auto it = s.table.find(key);
  if (it == s.table.end()) return fall_back();
  const Entry e = it->second;  // our own references: the table may change while the GIL is released
  nb::object result;
  if (out.is_none()) {
    // numpy.empty(out_shape, x.dtype) without the call through Python: NewFromDescr takes a dtype reference.
    PyArray_Descr* d = PyArray_DESCR(ax);
    Py_INCREF(reinterpret_cast<PyObject*>(d));
    result = nb::steal(PyArray_NewFromDescr(&PyArray_Type, d, e.out_ndim, const_cast<npy_intp*>(e.out_shape.data()),
                                            nullptr, nullptr, 0, nullptr));
    if (!result.is_valid()) throw nb::python_error();
  } else {
    // Exact type, x's dtype (or one keyed alike), the output's shape, writable and contiguous, and not x's own
    // data (out is x, or a view of all of x: the general path runs those in place); anything else is the
    // fallback's to decide.
    PyArrayObject* ao = out.ptr() == x.ptr() ? nullptr : plain_array(out);
    if (ao == nullptr || !PyArray_ISWRITEABLE(ao) || PyArray_DATA(ao) == PyArray_DATA(ax) ||
        (PyArray_DESCR(ao) != PyArray_DESCR(ax) && key_dtype(ao).ptr() != key.dtype.ptr()) ||
        PyArray_NDIM(ao) != e.out_ndim || !std::equal(e.out_shape.begin(), e.out_shape.begin() + e.out_ndim, PyArray_DIMS(ao)))
      return fall_back();
    result = nb::borrow(out);
  }
  const Prepared& p = nb::cast<const Prepared&>(e.prepared);
  if (static_cast<std::size_t>(PyArray_NBYTES(ax)) != p.bytes()) return fall_back();
  // A call that releases the GIL holds buffer exports of both arrays meanwhile, as the Python path does,
  // so that no other thread can resize them under it; a call that keeps the GIL needs none.
  Buffer bx, bo;
  if (p.releases_gil() && (!bx.get(x.ptr(), PyBUF_SIMPLE) || !bo.get(result.ptr(), PyBUF_SIMPLE | PyBUF_WRITABLE)))
    return fall_back();
  p.call(reinterpret_cast<std::uintptr_t>(PyArray_DATA(ax)),
         reinterpret_cast<std::uintptr_t>(PyArray_DATA(reinterpret_cast<PyArrayObject*>(result.ptr()))), 0);
  return result;
}

// The entry for a call on x with (op, arg, threads) as (prepared, output shape), or None: how the Python fast
// path finds entries for the calls the hit path hands it (a list of axes, NumPy-integer axes, an `out` to be
// checked there), after it has made arg plain (axes as a tuple of ints). This table is the one store of NumPy
// entries; the Python fast path keeps none of its own.
nb::object np_lookup(int op, nb::handle x, nb::handle arg, nb::handle threads) {
  State& s = state();
  PyArrayObject* ax = s.api ? plain_array(x) : nullptr;
  Key key;
  if (ax == nullptr || !make_key(op, ax, arg, threads, key)) return nb::none();
  const auto it = s.table.find(key);
  if (it == s.table.end()) return nb::none();
  return nb::make_tuple(it->second.prepared, it->second.out_shape_tuple);
}

// Called by the Python fast path once it has built and validated an entry for a call on x: later calls with
// the same key are served natively. False when x or arg cannot be keyed (the Python path serves those).
bool np_remember(int op, nb::handle x, nb::handle arg, nb::handle threads, nb::handle prepared,
                 nb::handle out_shape) {
  State& s = state();
  if (op != kPermute && op != kTranspose) throw nb::value_error("_np_remember: op must be 0 (permute) or 1 (transpose)");
  if (!nb::isinstance<Prepared>(prepared)) throw nb::type_error("_np_remember: expected a _Prepared");
  if (s.closed || !s.api) return false;
  PyArrayObject* ax = plain_array(x);
  Key key;
  if (ax == nullptr || !make_key(op, ax, arg, threads, key)) return false;
  const nb::tuple shape = nb::cast<nb::tuple>(out_shape);
  Entry e{nb::borrow(prepared), shape};
  if (shape.size() > kMaxDims) return false;
  e.out_ndim = static_cast<int>(shape.size());
  for (int i = 0; i < e.out_ndim; ++i) e.out_shape[i] = nb::cast<npy_intp>(shape[i]);
  if (s.table.size() >= kCapacity) s.table.clear();
  s.table.insert_or_assign(std::move(key), std::move(e));
  return true;
}

// Imports NumPy's C API (numpy_fast.hpp) the first time the fallbacks are set: bmmc._fast does that when it
// meets its first ndarray, so NumPy is loaded by then and `import bmmc` does not load it.
void np_set_fallbacks(nb::object permute, nb::object transpose) {
  State& s = state();
  if (s.closed) return;  // after exit: nothing is kept any more
  if (!s.api) {
    if (PyArray_ImportNumPyAPI() < 0) throw nb::python_error();
    s.api = true;
  }
  s.fallback = {std::move(permute), std::move(transpose)};
}

}  // namespace

void bind_numpy_fast(nb::module_& m) {
  m.def("_np_permute", [](nb::handle x, nb::handle spec, nb::handle out, nb::handle threads) {
          return np_call(kPermute, x, spec, out, threads);
        }, "x"_a, "spec"_a.none(), "out"_a.none(), "threads"_a.none(),
        "bmmc.permute for a NumPy x: the native hit path (python/src/numpy_fast.hpp); anything else goes to the "
        "fallback set with _np_set_fallbacks.");
  m.def("_np_transpose", [](nb::handle x, nb::handle axes, nb::handle out, nb::handle threads) {
          return np_call(kTranspose, x, axes, out, threads);
        }, "x"_a, "axes"_a.none(), "out"_a.none(), "threads"_a.none(),
        "bmmc.transpose for a NumPy x: the native hit path; anything else goes to the fallback.");
  m.def("_np_lookup", &np_lookup, "op"_a, "x"_a, "arg"_a.none(), "threads"_a.none(),
        "(prepared, output shape) of the native entry for this call, or None (the Python fast path's lookup).");
  m.def("_np_remember", &np_remember, "op"_a, "x"_a, "arg"_a.none(), "threads"_a.none(), "prepared"_a, "out_shape"_a);
  m.def("_np_set_fallbacks", &np_set_fallbacks, "permute"_a, "transpose"_a);
  m.def("_np_clear", [] { state().table.clear(); });
  // The table outlives the module (numpy_fast.hpp); it lets go of its Python objects while the interpreter
  // still runs, at exit, so that nothing is released after it and nanobind sees no leaked instances.
  nb::module_::import_("atexit").attr("register")(nb::cpp_function([] {
    State& s = state();
    s.closed = true;
    s.table.clear();
    s.fallback = {};
  }));
  m.def("_np_size", [] { return state().table.size(); });
  m.def("_np_capacity", [] { return kCapacity; });
}

}  // namespace bmmc_python
