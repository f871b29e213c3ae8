// Rewrite rules (see rewrite.hpp).
#include "bmmc/combinators/rewrite.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "bmmc/core/named.hpp"

namespace bmmc {

Bmmc embed_low(const Bmmc& b, int n) {
  const int k = b.n();
  if (k > n) throw std::invalid_argument(fmt::format("embed_low: a bmmc on {} bits does not fit in {} bits", k, n));
  if (k == n) return b;
  BitMatrix a = BitMatrix::identity(n);
  for (int i = 0; i < k; ++i) a.set_row(i, b.matrix().row(i));
  return Bmmc(a, b.complement());
}

Bmmc fuse(const Bmmc& first, const Bmmc& second) { return compose(second, first); }

Bmmc parm_of_bmmc(BitVec mask, const Bmmc& b) {
  const int n = b.n() + 1;
  const Bmmc p = parm_matrix(n, mask);
  return compose(p.inverse(), compose(embed_low(b, n), p));
}

Program expand_parm(BitVec mask, const Program& f) {
  const int n = f.n() + 1;
  const Bmmc p = parm_matrix(n, mask);
  Program out = bmmc_program(p);
  out.append(two(f));
  out.push(BmmcStep{p.inverse()});
  return out;
}

Program expand_all(const Program& p) {
  Program out(p.n());
  for (const Step& s : p.steps()) {
    if (const auto* pm = std::get_if<ParmStep>(&s))
      out.append(expand_parm(pm->mask, expand_all(*pm->body)));
    else
      out.push(s);
  }
  return out;
}

namespace {

// Appends a step, fusing it into a trailing bmmc and dropping identities (fusion + cancellation).
void push_fused(Step s, std::vector<Step>& pending) {
  if (const auto* b = std::get_if<BmmcStep>(&s)) {
    if (!pending.empty())
      if (auto* last = std::get_if<BmmcStep>(&pending.back())) {
        last->bmmc = fuse(last->bmmc, b->bmmc);
        if (last->bmmc.is_identity()) pending.pop_back();
        return;
      }
    if (b->bmmc.is_identity()) return;
  }
  pending.push_back(std::move(s));
}

}  // namespace

Program simplify(const Program& p) {
  std::vector<Step> steps;
  Program out(p.n());
  for (const Step& s : p.steps()) {
    if (const auto* pm = std::get_if<ParmStep>(&s)) {
      const Program body = simplify(*pm->body);
      if (body.empty()) continue;  // parm m id = id
      if (body.steps().size() == 1)
        if (const auto* b = std::get_if<BmmcStep>(&body.steps()[0])) {
          push_fused(BmmcStep{parm_of_bmmc(pm->mask, b->bmmc)}, steps);
          continue;
        }
      push_fused(ParmStep{pm->mask, std::make_shared<const Program>(body)}, steps);
    } else {
      push_fused(s, steps);
    }
  }
  for (Step& s : steps) out.push(std::move(s));
  return out;
}

}  // namespace bmmc
