// The native hit path of bmmc.permute for NumPy arrays (see numpy_fast.hpp).
#include "numpy_fast.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <string_view>
#include <unordered_map>

#include "bmmc/core/bmmc.hpp"
#include "prepared.hpp"

namespace bmmc_python {

namespace {

namespace nb = nanobind;
using namespace nb::literals;

constexpr int kMaxDims = 8;
constexpr std::size_t kCapacity = 512;

// What makes two calls share an entry: the spec object by value (equal strings, or one Bmmc), the dtype as
// the buffer protocol spells it (format and item size), the shape and the caller's thread count.
struct Key {
  nb::object spec;
  Py_hash_t spec_hash = 0;
  std::array<char, 8> format{};
  Py_ssize_t itemsize = 0;
  int ndim = 0;
  std::array<Py_ssize_t, kMaxDims> shape{};
  long threads = 0;

  bool operator==(const Key& o) const {
    if (spec_hash != o.spec_hash || itemsize != o.itemsize || ndim != o.ndim || threads != o.threads ||
        format != o.format || shape != o.shape)
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
    mix(static_cast<std::size_t>(k.itemsize));
    mix(std::hash<std::string_view>{}(std::string_view(k.format.data())));
    mix(static_cast<std::size_t>(k.threads));
    return h;
  }
};

// A prepared call and what allocating its output takes: numpy.empty(shape, dtype).
struct Entry {
  nb::object prepared, shape, dtype;
};

struct State {
  std::unordered_map<Key, Entry, KeyHash> table;
  nb::object fallback;  // python/bmmc/_fast.py's numpy_permute
  nb::object empty;     // numpy.empty
  bool closed = false;  // set at exit: nothing is remembered any more, every call takes the general path
};

// Never destroyed (see numpy_fast.hpp).
State& state() {
  static State* s = new State;
  return *s;
}

// A Py_buffer released on scope exit (when it was obtained).
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

// The key of a call on x (a C-contiguous buffer with shape and format), or false when x, spec or threads
// cannot make one (the fallback decides then).
bool make_key(const Buffer& x, nb::handle spec, nb::handle threads, Key& k) {
  const Py_buffer& v = x.view;
  if (!PyLong_CheckExact(threads.ptr()) || v.ndim > kMaxDims || v.format == nullptr ||
      std::strlen(v.format) >= k.format.size())
    return false;
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
  k.spec_hash = h;
  std::strcpy(k.format.data(), v.format);
  k.itemsize = v.itemsize;
  k.ndim = v.ndim;
  for (int i = 0; i < v.ndim; ++i) k.shape[i] = v.shape[i];
  k.threads = t;
  return true;
}

constexpr int kShapeAndFormat = PyBUF_ND | PyBUF_FORMAT;  // C-contiguous only (no strides asked for)

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
  Buffer bx;
  Key key;
  if (!plain_spec(spec) || !bx.get(x.ptr(), kShapeAndFormat) || !make_key(bx, spec, threads, key))
    return fall_back();
  const auto it = s.table.find(key);
  if (it == s.table.end()) return fall_back();
  const Entry e = it->second;  // our own references: the table may change while the GIL is released
  Buffer bo;
  nb::object result;
  if (out.is_none()) {
    PyObject* args[] = {e.shape.ptr(), e.dtype.ptr()};
    result = nb::steal(PyObject_Vectorcall(s.empty.ptr(), args, 2, nullptr));
    if (!result.is_valid()) throw nb::python_error();
    if (!bo.get(result.ptr(), PyBUF_SIMPLE | PyBUF_WRITABLE)) return fall_back();
  } else {
    // Same exact type, shape and format as x, writable and contiguous; anything else (out is x too) is the
    // fallback's to decide.
    if (out.ptr() == x.ptr() || Py_TYPE(out.ptr()) != Py_TYPE(x.ptr()) ||
        !bo.get(out.ptr(), kShapeAndFormat | PyBUF_WRITABLE))
      return fall_back();
    const Py_buffer &vo = bo.view, &vx = bx.view;
    if (vo.ndim != vx.ndim || vo.itemsize != vx.itemsize || vo.format == nullptr ||
        std::strcmp(vo.format, vx.format) != 0 ||
        !std::equal(vo.shape, vo.shape + vo.ndim, vx.shape))
      return fall_back();
    result = nb::borrow(out);
  }
  const Prepared& p = nb::cast<const Prepared&>(e.prepared);
  if (static_cast<std::size_t>(bx.view.len) != p.bytes() || static_cast<std::size_t>(bo.view.len) != p.bytes())
    return fall_back();
  p.call(reinterpret_cast<std::uintptr_t>(bx.view.buf), reinterpret_cast<std::uintptr_t>(bo.view.buf), 0);
  return result;
}

// Called by the Python fast path once it has built and validated an entry for a call on x: later calls with
// the same key are served natively. False when x cannot be keyed (the Python path serves those).
bool np_remember(nb::handle x, nb::handle spec, nb::handle threads, nb::handle prepared, nb::handle dtype) {
  State& s = state();
  if (!nb::isinstance<Prepared>(prepared)) throw nb::type_error("_np_remember: expected a _Prepared");
  if (s.closed || !plain_spec(spec)) return false;
  if (!s.empty.is_valid()) s.empty = nb::module_::import_("numpy").attr("empty");
  Buffer bx;
  Key key;
  if (!bx.get(x.ptr(), kShapeAndFormat) || !make_key(bx, spec, threads, key)) return false;
  if (s.table.size() >= kCapacity) s.table.clear();
  s.table.insert_or_assign(std::move(key), Entry{nb::borrow(prepared), x.attr("shape"), nb::borrow(dtype)});
  return true;
}

}  // namespace

void bind_numpy_fast(nb::module_& m) {
  m.def("_np_permute", &np_permute, "x"_a, "spec"_a, "out"_a.none(), "threads"_a,
        "bmmc.permute for a NumPy x: the native hit path (python/src/numpy_fast.hpp); anything else goes to the "
        "fallback set with _np_set_fallback.");
  m.def("_np_remember", &np_remember, "x"_a, "spec"_a, "threads"_a, "prepared"_a, "dtype"_a);
  m.def("_np_set_fallback", [](nb::object f) { state().fallback = std::move(f); }, "fallback"_a);
  m.def("_np_clear", [] { state().table.clear(); });
  // The table outlives the module (numpy_fast.hpp); it lets go of its Python objects while the interpreter
  // still runs, at exit, so that nothing is released after it and nanobind sees no leaked instances.
  nb::module_::import_("atexit").attr("register")(nb::cpp_function([] {
    State& s = state();
    s.closed = true;
    s.table.clear();
    s.fallback = nb::object();
    s.empty = nb::object();
  }));
  m.def("_np_size", [] { return state().table.size(); });
}

}  // namespace bmmc_python
