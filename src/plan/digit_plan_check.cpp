// The digit plan checker (bmmc/plan/digit_plan_check.hpp).
#include "bmmc/plan/digit_plan_check.hpp"

#include "bmmc/plan/digit_tile_view.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <tuple>
#include <vector>

namespace bmmc {

namespace {

std::int64_t longest_run(const std::vector<Extent>& addrs) {
  std::int64_t best = addrs.empty() ? 0 : 1, cur = 1;
  for (std::size_t i = 1; i < addrs.size(); ++i) {
    cur = addrs[i] == addrs[i - 1] + 1 ? cur + 1 : 1;
    best = std::max(best, cur);
  }
  return best;
}

}  // namespace

DigitPlanReport check_digit_plan(const DigitPlan& p, std::int64_t max_elements) {
  DigitPlanReport r;
  const Extent n = p.elements();
  if (n > max_elements)
    throw std::invalid_argument(fmt::format("check_digit_plan: {} plan elements is more than the {} it checks", n,
                                            max_elements));
  auto fail = [&](std::string msg) {
    r.ok = false;
    r.error = std::move(msg);
    return r;
  };
  if (p.read_skew_step < 0 || p.read_skew_shift < 0 || p.read_skew_shift > 4 ||
      (p.read_skew_step > 0 && p.read_skew_step >= p.read_vector))
    return fail(fmt::format("read skew (lane >> {}) * {} is out of range: expected a shift 0 to 4 and a step 0 to {}",
                            p.read_skew_shift, p.read_skew_step, p.read_vector - 1));
  const DigitTileView view = tile_view(p);
  if (p.read_skew_step > 0 && !read_skew_possible(p, view))
    return fail(fmt::format("read skew (lane >> {}) * {} on read vectors the kernel does not skew: it skews vectors of "
                            "at least 4 bytes stored element by element ({} elements of {} bytes{})",
                            p.read_skew_shift, p.read_skew_step, p.read_vector, p.elem_bytes,
                            view.vector_slots_r != 0 ? ", stored whole" : ""));
  for (auto [cover, v, side] : {std::tuple{p.read_cover, p.read_vector, "read"},
                                std::tuple{p.write_cover, p.write_vector, "write"}})
    if (cover && (v < 2 || v > 16 || !std::has_single_bit(static_cast<unsigned>(v)) || v * p.elem_bytes > 16))
      return fail(fmt::format("covering {} vectors of {} elements of {} bytes: expected a power of two of 2 to 16 "
                              "elements and at most 16 bytes",
                              side, v, p.elem_bytes));
  if (p.write_cover && view.roll_run_w)
    return fail("covering write vectors on a write run with a roll: the kernel's covering writes do not wrap");
  const std::size_t k = p.axes.size();
  const Extent vol = p.tile_elements(), slots = p.smem_elements();
  auto slot_of = [&](Extent lin) { return p.pad_period > 0 ? lin + lin / p.pad_period * p.pad : lin; };
  std::vector<Extent> source(static_cast<std::size_t>(n), -1);  // output → input plan element
  std::vector<Extent> smem(static_cast<std::size_t>(slots));
  std::vector<Extent> origin(k), ce(k), l(k);
  for (Extent t = 0; t < p.tiles(); ++t) {
    Extent rest = t;
    for (std::size_t a = k; a-- > 0;) {
      origin[a] = rest % p.axes[a].tile_count() * p.axes[a].chunk;
      rest /= p.axes[a].tile_count();
      ce[a] = std::min(p.axes[a].chunk, p.axes[a].extent - origin[a]);
    }
    std::fill(smem.begin(), smem.end(), -1);
    std::vector<Extent> read_addr, write_addr;
    std::vector<Extent> rx(static_cast<std::size_t>(vol), -1), wy(static_cast<std::size_t>(vol), -1);
    for (Extent e = 0; e < vol; ++e) {  // read phase
      Extent re = e;
      bool ok = true;
      for (std::size_t j = p.read_order.size(); j-- > 0;) {
        const int a = p.read_order[j];
        l[a] = re % p.axes[a].chunk;
        re /= p.axes[a].chunk;
        ok = ok && l[a] < ce[a];
      }
      if (!ok) continue;
      Extent x = 0, w = 0;
      for (std::size_t a = 0; a < k; ++a) x += (origin[a] + (p.axes[a].chunk > 1 ? l[a] : 0)) * p.axes[a].in_stride;
      for (std::size_t j = 0; j < p.write_order.size(); ++j) {
        const int a = p.write_order[j];
        w += (p.axes[a].flip ? p.axes[a].chunk - 1 - l[a] : l[a]) * p.smem_stride[j];
      }
      const Extent s = slot_of(w);
      if (x < 0 || x >= n) return fail(fmt::format("tile {} reads element {} outside the array of {}", t, x, n));
      if (s < 0 || s >= slots) return fail(fmt::format("tile {} stores to slot {} outside its {} slots", t, s, slots));
      if (smem[s] >= 0) return fail(fmt::format("tile {} stores twice to slot {}", t, s));
      smem[s] = x;
      rx[static_cast<std::size_t>(e)] = x;
      if (t == 0) read_addr.push_back(x);
    }
    for (Extent e = 0; e < vol; ++e) {  // write phase
      Extent re = e;
      bool ok = true;
      std::vector<Extent> w(k, 0);
      for (std::size_t j = p.write_order.size(); j-- > 0;) {
        const int a = p.write_order[j];
        w[a] = re % p.axes[a].chunk;
        re /= p.axes[a].chunk;
        ok = ok && (p.axes[a].flip ? w[a] >= p.axes[a].chunk - ce[a] : w[a] < ce[a]);
      }
      if (!ok) continue;
      Extent y = 0;
      for (std::size_t a = 0; a < k; ++a) {
        const Extent la = p.axes[a].chunk > 1 ? (p.axes[a].flip ? p.axes[a].chunk - 1 - w[a] : w[a]) : 0;
        y += p.axes[a].image(origin[a] + la) * p.axes[a].out_stride;
      }
      const Extent s = slot_of(e);
      if (s >= slots || smem[s] < 0)
        return fail(fmt::format("tile {} loads slot {} that its read phase did not store", t, s));
      if (y < 0 || y >= n) return fail(fmt::format("tile {} writes element {} outside the array of {}", t, y, n));
      if (source[y] >= 0) return fail(fmt::format("output element {} is written twice (tile {})", y, t));
      source[y] = smem[s];
      wy[static_cast<std::size_t>(e)] = y;
      ++r.writes;
      if (t == 0) write_addr.push_back(y);
    }
    // Vector accesses: each group of v tile elements is all predicated off, or v consecutive aligned elements.
    // Covering read vectors instead need each read row's valid elements to be its first cols, at consecutive
    // input elements (the kernel loads col c of a row at the row's first element + c).
    if (p.read_cover) {
      for (Extent e = 0; e < vol; ++e) {
        const Extent c = e % view.cols_r;
        const Extent here = rx[static_cast<std::size_t>(e)];
        const Extent before = c > 0 ? rx[static_cast<std::size_t>(e - 1)] : -1;
        if (c > 0 && here >= 0 && (before < 0 || here != before + 1))
          return fail(fmt::format("tile {}: read row {} is not consecutive input elements from its first col, as "
                                  "covering read vectors need (col {} at {}, col {} at {})",
                                  t, e / view.cols_r, c - 1, before, c, here));
      }
    }
    // Covering write vectors need every write row's valid elements at output element (the row's base) + col.
    if (p.write_cover) {
      for (Extent row = 0; row < vol / view.cols_w; ++row) {
        Extent base = -1;
        for (Extent c = 0; c < view.cols_w; ++c) {
          const Extent y = wy[static_cast<std::size_t>(row * view.cols_w + c)];
          if (y < 0) continue;
          if (base < 0) base = y - c;
          if (y != base + c)
            return fail(fmt::format("tile {}: write row {} is not consecutive output elements, as covering write "
                                    "vectors need (col {} at {}, expected {})",
                                    t, row, c, y, base + c));
        }
      }
    }
    for (auto [addr, v, side] : {std::tuple{&rx, p.read_vector, "read"}, std::tuple{&wy, p.write_vector, "write"}}) {
      if ((addr == &rx && p.read_cover) || (addr == &wy && p.write_cover)) continue;
      if (v < 1 || vol % v != 0) return fail(fmt::format("{} vector of {} elements does not divide the tile of {}", side, v, vol));
      for (Extent e = 0; e < vol; e += v) {
        const Extent first = (*addr)[static_cast<std::size_t>(e)];
        for (Extent u = 0; u < v; ++u) {
          const Extent a = (*addr)[static_cast<std::size_t>(e + u)];
          if ((first < 0) != (a < 0) || (first >= 0 && (a != first + u || first % v != 0)))
            return fail(fmt::format("tile {}: the {} vector at tile element {} is not {} consecutive aligned elements "
                                    "(element {} at {}, the first at {})",
                                    t, side, e, v, e + u, a, first));
        }
      }
    }
    if (t == 0) {
      r.read_conflicts = digit_bank_ways(p, view, false);
      r.write_conflicts = digit_bank_ways(p, view, true);
      r.read_run = longest_run(read_addr);
      r.write_run = longest_run(write_addr);
    }
  }
  if (r.writes != n) return fail(fmt::format("{} of {} output elements are written", r.writes, n));
  // The plan against the caller's map, byte by byte: plan element X of pe bytes moves to Y; the caller's byte
  // X·pe + u belongs to element x = (X·pe + u) / eb at byte b and must land at byte map(x)·eb + b.
  const Extent pe = p.elem_bytes, eb = p.caller_elem_bytes;
  if (n * pe != p.map.size() * eb)
    return fail(fmt::format("the plan moves {} bytes but the caller's array has {}", n * pe, p.map.size() * eb));
  for (Extent y = 0; y < n; ++y) {
    const Extent x_plan = source[y];
    for (Extent u = 0; u < pe; ++u) {
      const Extent byte = x_plan * pe + u;
      const Extent want = p.map.apply_linear(byte / eb) * eb + byte % eb;
      if (want != y * pe + u)
        return fail(fmt::format("byte {} of the input lands at byte {}, but the map sends it to byte {}", byte,
                                y * pe + u, want));
    }
  }
  r.ok = true;
  return r;
}

}  // namespace bmmc
