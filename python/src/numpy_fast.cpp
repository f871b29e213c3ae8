// The native hit path of bmmc.permute for NumPy arrays (see numpy_fast.hpp).
#include "numpy_fast.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <unordered_map>

// NumPy's C API, imported at run time (np_set_fallback); this file is its only user.
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include "bmmc/core/bmmc.hpp"
#include "prepared.hpp"

namespace bmmc_python {

namespace {

namespace nb = nanobind;
using namespace nb::literals;

constexpr int kMaxDims = 8;
constexpr std::size_t kCapacity = 512;

// What makes two calls share an entry: the spec object by value (equal strings, or one Bmmc), x's dtype
// object (NumPy's built-in dtypes are singletons, so equal dtypes are one object; an equal dtype that is
// another object only makes another entry), the shape and the caller's thread count. The key holds its own
// references, so a dtype's address is never reused while it is a key.
struct Key {
  nb::object spec, dtype;
  Py_hash_t spec_hash = 0;
  int ndim = 0;
  std::array<npy_intp, kMaxDims> shape{};
  long threads = 0;

  bool operator==(const Key& o) const {
    if (spec_hash != o.spec_hash || dtype.ptr() != o.dtype.ptr() || ndim != o.ndim || threads != o.threads ||
        shape != o.shape)
      return false;
    if (spec.ptr() == o.spec.ptr()) return true;
    const int eq = PyObject_RichCompareBool(spec.ptr(), o.spec.ptr(), Py_EQ);
    if (eq < 0) PyErr_Clear();
    return eq == 1;
  }
};

struct KeyHash {
  std::size_t operator()(const Key& k) const noexcept {
    std::size_t h = static_cast<std::size_t>(k.spec_hash);
    auto mix = [&h](std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
    for (int i = 0; i < k.ndim; ++i) mix(static_cast<std::size_t>(k.shape[i]));
    mix(std::hash<const void*>{}(k.dtype.ptr()));
    mix(static_cast<std::size_t>(k.threads));
    return h;
  }
};

// A prepared call; its output is allocated with the key's dtype and x's shape.
struct Entry {
  nb::object prepared;
};

struct State {
  std::unordered_map<Key, Entry, KeyHash> table;
  nb::object fallback;  // python/bmmc/_fast.py's numpy_permute
  bool api = false;     // NumPy's C API imported (by _np_set_fallback, once NumPy is loaded)
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

// x as an exact, C-contiguous ndarray of at most kMaxDims dimensions, or nullptr (the fallback decides).
PyArrayObject* plain_array(nb::handle x) {
  if (!PyArray_CheckExact(x.ptr())) return nullptr;
  auto* a = reinterpret_cast<PyArrayObject*>(x.ptr());
  return PyArray_IS_C_CONTIGUOUS(a) && PyArray_NDIM(a) <= kMaxDims ? a : nullptr;
}

// The key of a call on x, or false when spec or threads cannot make one (the fallback decides then).
bool make_key(PyArrayObject* x, nb::handle spec, nb::handle threads, Key& k) {
  if (!PyLong_CheckExact(threads.ptr())) return false;
  const long t = PyLong_AsLong(threads.ptr());
  if (t == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    return false;
  }
  const Py_hash_t h = PyObject_Hash(spec.ptr());
  if (h == -1) {
    PyErr_Clear();
    return false;
  }
  k.spec = nb::borrow(spec);
  k.dtype = nb::borrow(reinterpret_cast<PyObject*>(PyArray_DESCR(x)));
  k.spec_hash = h;
  k.ndim = PyArray_NDIM(x);
  std::copy_n(PyArray_DIMS(x), k.ndim, k.shape.begin());
  k.threads = t;
  return true;
}

// Only exact str and Bmmc specs are looked up or remembered: a subclass's Python __eq__ / __hash__ would run
// inside the table's operations (a comparison with a subclass tries its reflected __eq__ first), where it could
// change the table.
bool plain_spec(nb::handle spec) {
  static const auto* bmmc_type = reinterpret_cast<PyTypeObject*>(nb::type<bmmc::Bmmc>().ptr());
  return PyUnicode_CheckExact(spec.ptr()) || Py_TYPE(spec.ptr()) == bmmc_type;
}

nb::object np_permute(nb::handle x, nb::handle spec, nb::handle out, nb::handle threads) {
  State& s = state();
  // None (the general path) where no fallback is set: before bmmc._fast set it, or after exit emptied it.
  auto fall_back = [&] { return s.fallback.is_valid() ? s.fallback(x, spec, out, threads) : nb::none(); };
  PyArrayObject* ax = s.api ? plain_array(x) : nullptr;
  Key key;
  if (ax == nullptr || !plain_spec(spec) || !make_key(ax, spec, threads, key)) return fall_back();
  const auto it = s.table.find(key);
  if (it == s.table.end()) return fall_back();
  const Entry e = it->second;  // our own reference: the table may change while the GIL is released
  nb::object result;
  if (out.is_none()) {
    // numpy.empty(x.shape, x.dtype) without the call through Python: NewFromDescr takes a dtype reference.
    Py_INCREF(key.dtype.ptr());
    result = nb::steal(PyArray_NewFromDescr(&PyArray_Type, reinterpret_cast<PyArray_Descr*>(key.dtype.ptr()),
                                            key.ndim, key.shape.data(), nullptr, nullptr, 0, nullptr));
    if (!result.is_valid()) throw nb::python_error();
  } else {
    // Same exact type, dtype object and shape as x, writable and contiguous; anything else (out is x too) is
    // the fallback's to decide.
    PyArrayObject* ao = out.ptr() == x.ptr() ? nullptr : plain_array(out);
    if (ao == nullptr || !PyArray_ISWRITEABLE(ao) || PyArray_DESCR(ao) != PyArray_DESCR(ax) ||
        PyArray_NDIM(ao) != key.ndim || !std::equal(key.shape.begin(), key.shape.begin() + key.ndim, PyArray_DIMS(ao)))
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

// Called by the Python fast path once it has built and validated an entry for a call on x: later calls with
// the same key are served natively. False when x cannot be keyed (the Python path serves those).
bool np_remember(nb::handle x, nb::handle spec, nb::handle threads, nb::handle prepared) {
  State& s = state();
  if (!nb::isinstance<Prepared>(prepared)) throw nb::type_error("_np_remember: expected a _Prepared");
  if (s.closed || !s.api || !plain_spec(spec)) return false;
  PyArrayObject* ax = plain_array(x);
  Key key;
  if (ax == nullptr || !make_key(ax, spec, threads, key)) return false;
  if (s.table.size() >= kCapacity) s.table.clear();
  s.table.insert_or_assign(std::move(key), Entry{nb::borrow(prepared)});
  return true;
}

// Imports NumPy's C API (numpy_fast.hpp) the first time the fallback is set: bmmc._fast does that when it
// meets its first ndarray, so NumPy is loaded by then and `import bmmc` does not load it.
void np_set_fallback(nb::object f) {
  State& s = state();
  if (!s.api) {
    if (PyArray_ImportNumPyAPI() < 0) throw nb::python_error();
    s.api = true;
  }
  s.fallback = std::move(f);
}

}  // namespace

void bind_numpy_fast(nb::module_& m) {
  m.def("_np_permute", &np_permute, "x"_a, "spec"_a, "out"_a.none(), "threads"_a,
        "bmmc.permute for a NumPy x: the native hit path (python/src/numpy_fast.hpp); anything else goes to the "
        "fallback set with _np_set_fallback.");
  m.def("_np_remember", &np_remember, "x"_a, "spec"_a, "threads"_a, "prepared"_a);
  m.def("_np_set_fallback", &np_set_fallback, "fallback"_a);
  m.def("_np_clear", [] { state().table.clear(); });
  // The table outlives the module (numpy_fast.hpp); it lets go of its Python objects while the interpreter
  // still runs, at exit, so that nothing is released after it and nanobind sees no leaked instances.
  nb::module_::import_("atexit").attr("register")(nb::cpp_function([] {
    State& s = state();
    s.closed = true;
    s.table.clear();
    s.fallback = nb::object();
  }));
  m.def("_np_size", [] { return state().table.size(); });
}

}  // namespace bmmc_python
