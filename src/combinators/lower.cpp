// Lowering (see lower.hpp).
#include "bmmc/combinators/lower.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "bmmc/combinators/rewrite.hpp"
#include "bmmc/core/named.hpp"

namespace bmmc {

namespace {

// `p` sits under two^(n - p.n()): its bmmcs act on the low p.n() bits (embed_low), its leaves unchanged.
void flatten_into(const Program& p, int n, std::vector<Atom>& out) {
  for (const Step& s : p.steps()) {
    if (const auto* b = std::get_if<BmmcStep>(&s)) {
      out.emplace_back(embed_low(b->bmmc, n));
    } else if (const auto* l = std::get_if<LeafStep>(&s)) {
      out.emplace_back(l->leaf);
    } else {
      // parm → two (rewrite.hpp): bmmc(P) ; two body ; bmmc(P⁻¹). The "two" is not expanded again (it is a
      // parm itself): its body is flattened one level of two deeper, i.e. on the same low bits.
      const auto& pm = std::get<ParmStep>(s);
      const Program expanded = expand_parm(pm.mask, *pm.body);
      for (const Step& e : expanded.steps()) {
        if (const auto* two_body = std::get_if<ParmStep>(&e))
          flatten_into(*two_body->body, n, out);
        else
          out.emplace_back(embed_low(std::get<BmmcStep>(e).bmmc, n));
      }
    }
  }
}

}  // namespace

std::vector<Atom> flatten(const Program& p) {
  std::vector<Atom> out;
  flatten_into(p, p.n(), out);
  return out;
}

LoweredProgram lower(const Program& p) {
  LoweredProgram lp;
  lp.n = p.n();
  Bmmc cur = identity(p.n());
  for (const Atom& a : flatten(p)) {
    if (const auto* b = std::get_if<Bmmc>(&a)) {
      ++lp.bmmc_atoms;
      cur = fuse(cur, *b);
    } else {
      ++lp.leaf_atoms;
      lp.stages.push_back(Stage{cur, std::get<Leaf>(a)});
      cur = identity(p.n());
    }
  }
  if (!cur.is_identity()) lp.stages.push_back(Stage{cur, std::nullopt});
  return lp;
}

std::size_t LoweredProgram::permutations() const {
  return static_cast<std::size_t>(std::count_if(stages.begin(), stages.end(), [](const Stage& s) { return !s.perm.is_identity(); }));
}

std::size_t LoweredProgram::passes_permute_then_leaf() const {
  std::size_t leaves = 0;
  for (const Stage& s : stages) leaves += s.leaf.has_value();
  return permutations() + leaves;
}

Bmmc LoweredProgram::total_permutation() const {
  Bmmc m = identity(n);
  for (const Stage& s : stages) m = fuse(m, s.perm);
  return m;
}

std::size_t LoweredProgram::passes_folded() const {
  std::size_t leaves = 0;
  for (const Stage& s : stages) leaves += s.leaf.has_value();
  return leaves + (total_permutation().is_identity() ? 0 : 1);
}

std::string to_string(const LoweredProgram& lp, std::size_t max_stages) {
  std::string out;
  for (std::size_t i = 0; i < lp.stages.size(); ++i) {
    if (i == max_stages) {
      out += fmt::format("  ... {} more stages\n", lp.stages.size() - i);
      break;
    }
    const Stage& s = lp.stages[i];
    out += fmt::format("  stage {:4}: permute {:8}", i, s.perm.is_identity() ? "identity" : to_string(s.perm.classify()));
    if (!s.perm.is_identity()) {
      std::string rows;
      for (int r = 0; r < lp.n; ++r) rows += fmt::format("{}{:x}", r ? "," : "", s.perm.matrix().row(r));
      out += fmt::format(" [{}]", rows);
      if (s.perm.complement()) out += fmt::format(" c={:#x}", s.perm.complement());
    }
    if (s.leaf) out += fmt::format(" ; {}", to_string(s.leaf->kind));
    out += "\n";
  }
  out += fmt::format("  n = {}: {} bmmc + {} leaf atoms before fusion; {} stages ({} permutations) after; passes: "
                     "unfused {}, permute-then-leaf {}, folded {}\n",
                     lp.n, lp.bmmc_atoms, lp.leaf_atoms, lp.stages.size(), lp.permutations(), lp.passes_unfused(),
                     lp.passes_permute_then_leaf(), lp.passes_folded());
  return out;
}

LeafGeometry leaf_geometry(const Bmmc& layout, int bits) {
  const int n = layout.n();
  if (bits < 0 || bits > 8 || bits > n)
    throw std::invalid_argument(fmt::format("leaf chunks of 2^{} elements do not fit (n = {}, at most 2^8)", bits, n));
  LeafGeometry g;
  g.n = n;
  g.bits = bits;
  const Bmmc inv = layout.inverse();
  BitVec echelon[8];
  for (int i = 0; i < bits; ++i) {
    g.dirs[i] = inv.matrix().col(i);
    g.rows[i] = layout.matrix().row(i);
    echelon[i] = g.dirs[i];
  }
  g.low_c = layout.complement() & low_mask(bits);
  // Highest-bit echelon form: each pivot appears in exactly one reduced vector, so the projection of the
  // chunk directions onto the pivot bits is invertible and "zeros at the pivots" picks one member per chunk.
  for (int i = 0; i < bits; ++i) {
    int best = i;
    for (int j = i + 1; j < bits; ++j)
      if (echelon[j] > echelon[best]) best = j;
    std::swap(echelon[i], echelon[best]);
    const int pivot = 63 - __builtin_clzll(echelon[i]);
    g.pivots[i] = pivot;
    for (int j = 0; j < bits; ++j)
      if (j != i && ((echelon[j] >> pivot) & 1)) echelon[j] ^= echelon[i];
  }
  std::sort(g.pivots, g.pivots + bits);
  return g;
}

}  // namespace bmmc
