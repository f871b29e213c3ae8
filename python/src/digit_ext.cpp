// bmmc.DigitMap: the binding of the any-shape index class (see digit_ext.hpp).
#include "digit_ext.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "bmmc/core/bmmc.hpp"
#include "bmmc/core/digit_map.hpp"
#include "bmmc/core/digit_spec.hpp"

namespace bmmc_python {

namespace {

namespace nb = nanobind;
using namespace nb::literals;
using bmmc::DigitMap;
using bmmc::Extent;

std::string tuple_text(const std::vector<Extent>& v) {
  std::string s = "(";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + (v.size() == 1 ? ",)" : ")");
}

// flip as the constructor takes it: None (no flips), a sequence of output axes (negative ones count from the
// end), or one bool per output axis (what DigitMap.flips returns). Returns one 0/1 flag per output axis.
std::vector<std::uint8_t> flip_flags(const nb::handle flip, int rank) {
  std::vector<std::uint8_t> flags(static_cast<std::size_t>(rank), 0);
  if (flip.is_none()) return flags;
  if (!nb::isinstance<nb::sequence>(flip) || nb::isinstance<nb::str>(flip))
    throw nb::type_error("flip must be a sequence of output axes (ints) or one bool per output axis");
  const nb::sequence seq = nb::borrow<nb::sequence>(flip);
  const std::size_t len = nb::len(seq);
  bool all_bools = len == static_cast<std::size_t>(rank);
  for (nb::handle item : seq) all_bools = all_bools && PyBool_Check(item.ptr());
  if (all_bools && len > 0) {
    std::size_t j = 0;
    for (nb::handle item : seq) flags[j++] = item.ptr() == Py_True ? 1 : 0;
    return flags;
  }
  for (nb::handle item : seq) {
    if (PyBool_Check(item.ptr()) || !PyIndex_Check(item.ptr()))
      throw nb::type_error("flip must be a sequence of output axes (ints) or one bool per output axis");
    const long long a = nb::cast<long long>(nb::int_(item));
    if (a < -rank || a >= rank)
      throw std::invalid_argument("flip names axis " + std::to_string(a) + " but the result has " +
                                  std::to_string(rank) + " axes; expected axes in " + std::to_string(-rank) +
                                  ".." + std::to_string(rank - 1));
    const std::size_t j = static_cast<std::size_t>(a < 0 ? a + rank : a);
    if (flags[j])
      throw std::invalid_argument("flip names axis " + std::to_string(j) + " twice; expected each axis at most once");
    flags[j] = 1;
  }
  return flags;
}

std::vector<int> axes_or_reversed(const std::optional<std::vector<int>>& axes, int rank) {
  if (axes) return *axes;
  std::vector<int> r(static_cast<std::size_t>(rank));
  for (int j = 0; j < rank; ++j) r[static_cast<std::size_t>(j)] = rank - 1 - j;
  return r;
}

std::vector<Extent> checked_rolls(const std::optional<std::vector<Extent>>& roll, int rank) {
  if (!roll || roll->empty()) return {};
  if (roll->size() != static_cast<std::size_t>(rank))
    throw std::invalid_argument("roll has " + std::to_string(roll->size()) + " shifts but the result has " +
                                std::to_string(rank) + " axes; expected one shift per output axis, or none");
  return *roll;
}

DigitMap make_map(std::vector<Extent> shape, const std::optional<std::vector<int>>& axes, nb::handle flip,
                  const std::optional<std::vector<Extent>>& roll) {
  const int rank = static_cast<int>(shape.size());
  std::vector<int> a = axes_or_reversed(axes, rank);
  if (a.size() != shape.size())
    throw std::invalid_argument("axes has " + std::to_string(a.size()) + " entries but the shape " +
                                tuple_text(shape) + " has " + std::to_string(rank) + "; expected one per axis");
  for (int& q : a)
    if (q < 0 && q >= -rank) q += rank;  // NumPy's negative axes
  return DigitMap(std::move(shape), std::move(a), flip_flags(flip, rank), checked_rolls(roll, rank));
}

std::string repr(const DigitMap& m) {
  return "bmmc.DigitMap.parse('" + m.to_string() + "', " + tuple_text(m.shape()) + ")";
}

std::vector<Extent> apply_coords(const DigitMap& m, const std::vector<Extent>& in) {
  if (in.size() != m.shape().size())
    throw std::invalid_argument("coordinates " + tuple_text(in) + " have " + std::to_string(in.size()) +
                                " entries; expected one per axis of the shape " + tuple_text(m.shape()));
  for (std::size_t a = 0; a < in.size(); ++a)
    if (in[a] < 0 || in[a] >= m.shape()[a])
      throw std::invalid_argument("coordinate " + std::to_string(in[a]) + " on axis " + std::to_string(a) +
                                  " is out of range; expected 0 <= i < " + std::to_string(m.shape()[a]) +
                                  " (shape " + tuple_text(m.shape()) + ")");
  return m.apply(in);
}

Extent apply_linear(const DigitMap& m, Extent x) {
  if (x < 0 || x >= m.size())
    throw std::invalid_argument("index " + std::to_string(x) + " is out of range; expected 0 <= x < " +
                                std::to_string(m.size()) + " (shape " + tuple_text(m.shape()) + ")");
  return m.apply_linear(x);
}

DigitMap checked_compose(const DigitMap& f, const DigitMap& g) {
  if (f.shape() != g.out_shape())
    throw std::invalid_argument("f @ g applies g first, whose result has shape " + tuple_text(g.out_shape()) +
                                ", but f maps arrays of shape " + tuple_text(f.shape()) +
                                "; expected f.shape == g.out_shape");
  return bmmc::compose(f, g);
}

std::vector<bool> flips_as_bools(const DigitMap& m) {
  std::vector<bool> r;
  for (std::uint8_t f : m.flips()) r.push_back(f != 0);
  return r;
}

}  // namespace

void bind_digit_map(nb::module_& m) {
  nb::class_<DigitMap>(
      m, "DigitMap",
      "An any-shape permutation of a C-order array: an axis permutation with a flip and a roll on each output "
      "axis, out = numpy.roll(numpy.flip(numpy.transpose(x, axes), flip), roll, axis=range(x.ndim)).\n\n"
      "DigitMap(shape, axes=None, flip=None, roll=None): axes as numpy.transpose takes them (None reverses); "
      "flip the output axes to reverse (or one bool per output axis, as `flips` gives them); roll one shift per "
      "output axis (any integers) or None. DigitMap.parse('flip:0*axes:1,0', (2, 3)) reads the spec language.")
      .def(
          "__init__",
          [](DigitMap* self, std::vector<Extent> shape, std::optional<std::vector<int>> axes, nb::handle flip,
             std::optional<std::vector<Extent>> roll) {
            new (self) DigitMap(make_map(std::move(shape), axes, flip, roll));
          },
          "shape"_a, "axes"_a = nb::none(), "flip"_a.none() = nb::none(), "roll"_a = nb::none())
      .def_static(
          "parse",
          [](std::string_view spec, std::optional<std::vector<Extent>> shape) {
            return bmmc::parse_digit_spec(spec, std::move(shape), "shape");
          },
          "spec"_a, "shape"_a = nb::none(),
          "The map of a spec on an array of `shape` (e.g. 'fftshift*axes:2,0,1'); without shape the rightmost "
          "term must give one ('axes:4x5x6:2,0,1'). Raises SpecError (with .column) for a malformed spec.")
      .def_static("identity", &DigitMap::identity, "shape"_a, "The map that moves nothing.")
      .def_static(
          "transpose",
          [](std::vector<Extent> shape, std::optional<std::vector<int>> axes) {
            return make_map(std::move(shape), axes, nb::none(), std::nullopt);
          },
          "shape"_a, "axes"_a = nb::none(), "numpy.transpose(x, axes) (None reverses the axes).")
      .def_static(
          "flip",
          [](std::vector<Extent> shape, nb::handle axes) {
            const int rank = static_cast<int>(shape.size());
            std::vector<std::uint8_t> flags = axes.is_none() ? std::vector<std::uint8_t>(shape.size(), 1)
                                                             : flip_flags(axes, rank);
            std::vector<int> identity(shape.size());
            for (int j = 0; j < rank; ++j) identity[static_cast<std::size_t>(j)] = j;
            return DigitMap(std::move(shape), std::move(identity), std::move(flags));
          },
          "shape"_a, "axes"_a.none() = nb::none(), "numpy.flip(x, axes): the listed axes reversed (None: all).")
      .def_static(
          "roll",
          [](std::vector<Extent> shape, std::vector<Extent> shifts) {
            checked_rolls(shifts, static_cast<int>(shape.size()));
            return DigitMap::roll(std::move(shape), std::move(shifts));
          },
          "shape"_a, "shifts"_a, "numpy.roll(x, shifts, axis=range(x.ndim)): one shift per axis.")
      .def_prop_ro("shape", [](const DigitMap& d) { return d.shape(); }, "The input shape (a list).")
      .def_prop_ro("out_shape", &DigitMap::out_shape, "The output shape: shape[axes[j]].")
      .def_prop_ro("axes", [](const DigitMap& d) { return d.axes(); }, "Output axis j takes input axis axes[j].")
      .def_prop_ro("flips", &flips_as_bools, "Per output axis, whether it is reversed.")
      .def_prop_ro("rolls", [](const DigitMap& d) { return d.rolls(); },
                   "Per output axis, its roll in [0, extent).")
      .def_prop_ro("rank", &DigitMap::rank)
      .def_prop_ro("size", &DigitMap::size, "The number of elements.")
      .def("apply", &apply_coords, "coords"_a, "The output coordinates of the input coordinates `coords`.")
      .def("apply_linear", &apply_linear, "x"_a, "The flat C-order output index of the flat input index x.")
      .def("inverse", &DigitMap::inverse, "The inverse map: self.inverse() @ self is the identity.")
      .def("__matmul__", &checked_compose, nb::is_operator(), "f @ g = f ∘ g: apply g first, then f.")
      .def("canonical", &DigitMap::canonical,
           "The same map on the fewest axes (extent-1 axes dropped, axes that stay adjacent fused).")
      .def("as_bmmc", &DigitMap::as_bmmc, "The map as a bmmc.Bmmc when it is one (powers of two), else None.")
      .def("is_identity", &DigitMap::is_identity)
      .def("is_involution", &DigitMap::is_involution, "self @ self is the identity (such maps run in place).")
      .def("__eq__", [](const DigitMap& a, const DigitMap& b) { return a == b; }, nb::is_operator())
      .def("__ne__", [](const DigitMap& a, const DigitMap& b) { return !(a == b); }, nb::is_operator())
      .def("__hash__", [](const DigitMap& d) { return std::hash<DigitMap>{}(d); })
      .def("__repr__", &repr)
      .def("__str__", &DigitMap::to_string, "The map's spec text, e.g. 'roll:0,5,0*flip:0*axes:2,0,1'.")
      .def("__getstate__",
           [](const DigitMap& d) { return std::make_tuple(d.shape(), d.axes(), d.flips(), d.rolls()); })
      .def("__setstate__",
           [](DigitMap& self, const std::tuple<std::vector<Extent>, std::vector<int>, std::vector<std::uint8_t>,
                                               std::vector<Extent>>& s) {
             new (&self) DigitMap(std::get<0>(s), std::get<1>(s), std::get<2>(s), std::get<3>(s));
           });
}

}  // namespace bmmc_python
