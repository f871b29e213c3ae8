// Program construction, printing and equality (see program.hpp).
#include "bmmc/combinators/program.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "bmmc/combinators/dtype.hpp"

namespace bmmc {

const char* to_string(LeafKind k) noexcept {
  switch (k) {
    case LeafKind::CompareSwap: return "cswap";
    case LeafKind::CompareSwapDesc: return "cswap-desc";
  }
  return "?";
}

const char* to_string(DType t) noexcept {
  switch (t) {
    case DType::Int32: return "int32";
    case DType::UInt32: return "uint32";
    case DType::Float32: return "float32";
    case DType::Int64: return "int64";
    case DType::UInt64: return "uint64";
    case DType::Float64: return "float64";
  }
  return "?";
}

DType parse_dtype(std::string_view name) {
  if (name == "int32") return DType::Int32;
  if (name == "uint32") return DType::UInt32;
  if (name == "float32" || name == "float") return DType::Float32;
  if (name == "int64") return DType::Int64;
  if (name == "uint64") return DType::UInt64;
  if (name == "float64" || name == "double") return DType::Float64;
  throw std::invalid_argument(
      fmt::format("unknown dtype '{}'; expected int32, uint32, float32, int64, uint64 or float64", name));
}

void check_dtype(DType t) {
  if (static_cast<unsigned>(t) > static_cast<unsigned>(DType::Float64))
    throw std::invalid_argument(fmt::format(
        "the element type holds {}, which names no DType; expected int32, uint32, float32, int64, uint64 or float64",
        static_cast<int>(t)));
}

void check_leaf(const Leaf& l) {
  if (static_cast<unsigned>(l.kind) > static_cast<unsigned>(LeafKind::CompareSwapDesc))
    throw std::invalid_argument(fmt::format(
        "the leaf's kind holds {}, which names no LeafKind; expected CompareSwap or CompareSwapDesc",
        static_cast<int>(l.kind)));
}

int dtype_bytes(DType t) noexcept {
  return t == DType::Int32 || t == DType::UInt32 || t == DType::Float32 ? 4 : 8;
}

Program::Program(int n) : n_(n) {
  if (n < 0 || n > 62) throw std::invalid_argument(fmt::format("program size n = {} is outside 0..62", n));
}

Program& Program::push(Step s) {
  std::visit(
      [&](const auto& st) {
        using S = std::decay_t<decltype(st)>;
        if constexpr (std::is_same_v<S, BmmcStep>) {
          if (st.bmmc.n() != n_)
            throw std::invalid_argument(
                fmt::format("bmmc step on {} bits inside a program on {} bits", st.bmmc.n(), n_));
        } else if constexpr (std::is_same_v<S, ParmStep>) {
          if (n_ < 1) throw std::invalid_argument("parm needs n >= 1");
          if (st.mask == 0 || (st.mask & ~low_mask(n_)))
            throw std::invalid_argument(
                fmt::format("parm mask {:#b} must be non-zero and below 2^{} (n = {})", st.mask, n_, n_));
          if (!st.body || st.body->n() != n_ - 1)
            throw std::invalid_argument(fmt::format("parm on {} bits needs a body on {} bits, got {}", n_, n_ - 1,
                                                    st.body ? st.body->n() : -1));
        } else {
          check_leaf(st.leaf);
          if (leaf_bits(st.leaf) > n_)
            throw std::invalid_argument(fmt::format("leaf {} reads chunks of 2^{} elements; the array has 2^{}",
                                                    bmmc::to_string(st.leaf.kind), leaf_bits(st.leaf), n_));
        }
      },
      s);
  steps_.push_back(std::move(s));
  return *this;
}

Program& Program::append(const Program& p) {
  if (p.n() != n_)
    throw std::invalid_argument(fmt::format("sequencing a program on {} bits after one on {} bits", p.n(), n_));
  for (const Step& s : p.steps()) steps_.push_back(s);
  return *this;
}

std::size_t Program::tree_size() const {
  std::size_t total = 0;
  for (const Step& s : steps_) {
    ++total;
    if (const auto* p = std::get_if<ParmStep>(&s)) total += p->body->tree_size();
  }
  return total;
}

namespace {

std::string bmmc_line(const Bmmc& b) {
  std::string rows;
  for (int i = 0; i < b.n(); ++i) rows += fmt::format("{}{:#x}", i ? "," : "", b.matrix().row(i));
  std::string s = fmt::format("bmmc {} rows [{}]", to_string(b.classify()), rows);
  if (b.complement()) s += fmt::format(" c={:#x}", b.complement());
  return s;
}

void print(const Program& p, int depth, int max_depth, std::string& out) {
  const std::string indent(2 * depth, ' ');
  if (p.empty()) out += indent + fmt::format("id (n={})\n", p.n());
  for (const Step& s : p.steps()) {
    if (const auto* b = std::get_if<BmmcStep>(&s)) {
      out += indent + bmmc_line(b->bmmc) + "\n";
    } else if (const auto* l = std::get_if<LeafStep>(&s)) {
      out += indent + fmt::format("{} (n={}, chunks of {})\n", bmmc::to_string(l->leaf.kind), p.n(), 1 << leaf_bits(l->leaf));
    } else {
      const auto& pm = std::get<ParmStep>(s);
      out += indent + fmt::format("parm {:#b} (n={})\n", pm.mask, p.n());
      if (max_depth >= 0 && depth + 1 > max_depth)
        out += indent + "  ...\n";
      else
        print(*pm.body, depth + 1, max_depth, out);
    }
  }
}

}  // namespace

std::string Program::to_string(int max_depth) const {
  std::string out;
  print(*this, 0, max_depth, out);
  return out;
}

Program bmmc_program(const Bmmc& b) {
  Program p(b.n());
  p.push(BmmcStep{b});
  return p;
}

Program parm(BitVec mask, Program f) {
  Program p(f.n() + 1);
  p.push(ParmStep{mask, std::make_shared<const Program>(std::move(f))});
  return p;
}

Program two(Program f) {
  const int n = f.n() + 1;
  return parm(BitVec{1} << (n - 1), std::move(f));
}

Program leaf(int n, Leaf l) {
  Program p(n);
  p.push(LeafStep{l});
  return p;
}

Program compare_swap(int n) { return leaf(n, Leaf{LeafKind::CompareSwap}); }

Program then(Program f, Program g) {
  f.append(g);
  return f;
}

bool operator==(const Program& a, const Program& b) {
  if (a.n() != b.n() || a.steps().size() != b.steps().size()) return false;
  for (std::size_t i = 0; i < a.steps().size(); ++i) {
    const Step &x = a.steps()[i], &y = b.steps()[i];
    if (x.index() != y.index()) return false;
    if (const auto* bx = std::get_if<BmmcStep>(&x)) {
      if (!(bx->bmmc == std::get<BmmcStep>(y).bmmc)) return false;
    } else if (const auto* lx = std::get_if<LeafStep>(&x)) {
      if (!(lx->leaf == std::get<LeafStep>(y).leaf)) return false;
    } else {
      const auto &px = std::get<ParmStep>(x), &py = std::get<ParmStep>(y);
      if (px.mask != py.mask) return false;
      if (px.body != py.body && !(*px.body == *py.body)) return false;
    }
  }
  return true;
}

}  // namespace bmmc
