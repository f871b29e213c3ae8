// The spec parser: text → syntax tree → Bmmc.
//
// Parsing and evaluation are two passes because n may be defined by any term (bits:, axes:, matrix:), even
// one to the right of a term that needs it ("bit-reverse*bits:2,1,0"). Pass 1 builds the tree and checks
// syntax; pass 2 settles n (from the `n` argument and the defining terms, which must all agree) and evaluates.
#include "bmmc/core/spec.hpp"

#include <fmt/format.h>

#include <cctype>
#include <climits>
#include <memory>
#include <utility>
#include <vector>

#include "bmmc/core/involution.hpp"
#include "bmmc/core/named.hpp"

namespace bmmc {
namespace {

enum class Args { None, One, List, Axes };

struct NameInfo {
  const char* name;
  Args args;
  bool defines_n;
  const char* usage;
};

constexpr NameInfo kNames[] = {
    {"identity", Args::None, false, "identity"},
    {"bit-reverse", Args::None, false, "bit-reverse"},
    {"reverse", Args::None, false, "reverse"},
    {"rotate", Args::One, false, "rotate:K"},
    {"transpose", Args::One, false, "transpose:R"},
    {"gray", Args::None, false, "gray"},
    {"gray-inverse", Args::None, false, "gray-inverse"},
    {"parm", Args::One, false, "parm:MASK"},
    {"bits", Args::List, true, "bits:P0,P1,..."},
    {"axes", Args::Axes, true, "axes:D0xD1x...:Q0,Q1,..."},
    {"matrix", Args::List, true, "matrix:ROW0,ROW1,..."},
    {"random-bpc", Args::One, false, "random-bpc:SEED"},
    {"random-bmmc", Args::One, false, "random-bmmc:SEED"},
    {"swap", Args::List, false, "swap:I0,J0,I1,J1,..."},
};

std::string known_names() {
  std::string s;
  for (const auto& k : kNames) s += (s.empty() ? "" : ", ") + std::string(k.usage);
  return s + ", inv(SPEC)";
}

struct Num {
  std::uint64_t value;
  std::size_t pos;
  std::string text;
};

struct Node {
  enum Kind { Name, Inv, Product } kind;
  std::size_t pos = 0;                  // offset of the first character
  std::string text;                     // source text, for messages
  const NameInfo* info = nullptr;       // Name
  std::vector<Num> args;                // Name: the single number or the list
  std::vector<Num> dims;                // Name (axes): the shape
  std::vector<std::unique_ptr<Node>> children;  // Inv: one; Product: the terms, left to right
  std::optional<Num> xor_c;             // '^' number after the atom
  std::optional<Bmmc> defined;          // Name with defines_n: evaluated in pass 2's first step
};
using NodePtr = std::unique_ptr<Node>;

constexpr int kMaxDepth = 200;

// A piece of the spec quoted in a message, shortened when long so that a message stays readable (the column
// says where it starts): "'bit-reverse*bit-re...' (24006 characters)".
std::string quoted(std::string_view text) {
  constexpr std::size_t kShown = 40;
  if (text.size() <= kShown + 8) return fmt::format("'{}'", text);
  return fmt::format("'{}...' ({} characters)", text.substr(0, kShown), text.size());
}

[[noreturn]] void fail(std::size_t pos, const std::string& what, const std::string& after = "") {
  const int col = static_cast<int>(pos) + 1;
  throw SpecError(fmt::format("{} at column {}{}", what, col, after), col);
}

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  NodePtr spec() {
    NodePtr root = product(0);
    skip_ws();
    if (pos_ < s_.size()) {
      if (s_[pos_] == ')') fail(pos_, "unmatched ')'", ": no '(' or 'inv(' is open");
      fail(pos_, fmt::format("unexpected {} after a complete term", found()),
           ": expected '*' (product), '^' (complement) or the end of the spec");
    }
    return root;
  }

  Num lone_number() {
    Num v = number(false, "a number");
    skip_ws();
    if (pos_ < s_.size())
      fail(pos_, fmt::format("unexpected {} after the number {}", found(), quoted(v.text)), ": expected the end");
    return v;
  }

 private:
  std::string_view s_;
  std::size_t pos_ = 0;

  void skip_ws() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  char peek() {
    skip_ws();
    return pos_ < s_.size() ? s_[pos_] : '\0';
  }
  std::string found() const {
    if (pos_ >= s_.size()) return "end of spec";
    return fmt::format("'{}'", s_[pos_]);
  }
  void expect(char c, const std::string& context) {
    if (peek() != c) fail(pos_, fmt::format("expected '{}'{}", c, context), fmt::format(", found {}", found()));
    ++pos_;
  }
  // The ')' of a bracket opened at `start` by `opener`: the message names both columns, the missing ')' first.
  void expect_close(std::size_t start, std::string_view opener) {
    if (peek() != ')')
      fail(pos_, "expected ')'", fmt::format(" to close the '{}' at column {}, found {}", opener, start + 1, found()));
    ++pos_;
  }

  NodePtr product(int depth) {
    if (depth > kMaxDepth) fail(pos_, fmt::format("spec nests deeper than {} levels", kMaxDepth));
    auto node = std::make_unique<Node>();
    node->kind = Node::Product;
    node->pos = (skip_ws(), pos_);
    node->children.push_back(term(depth));
    while (peek() == '*') {
      ++pos_;
      node->children.push_back(term(depth));
    }
    node->text = std::string(s_.substr(node->pos, pos_ - node->pos));
    return node;
  }

  NodePtr term(int depth) {
    NodePtr a = atom(depth);
    if (peek() == '^') {
      ++pos_;
      a->xor_c = number(false, "a complement number after '^'");
    }
    return a;
  }

  NodePtr atom(int depth) {
    const char c = peek();
    const std::size_t start = pos_;
    if (c == '(') {
      ++pos_;
      NodePtr inner = product(depth + 1);
      expect_close(start, "(");
      inner->pos = start;
      inner->text = std::string(s_.substr(start, pos_ - start));
      return inner;
    }
    if (!std::isalpha(static_cast<unsigned char>(c))) {
      if (s_.find_first_not_of(" \t\r\n\f\v") == std::string_view::npos)
        fail(pos_, "empty spec", ": expected a name, 'inv(' or '('");
      fail(pos_, fmt::format("expected a name, 'inv(' or '(' but found {}", found()));
    }
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '-' ||
                                s_[pos_] == '_'))
      ++pos_;
    const std::string name(s_.substr(start, pos_ - start));
    auto node = std::make_unique<Node>();
    node->pos = start;
    if (name == "inv") {
      node->kind = Node::Inv;
      expect('(', " after 'inv'");
      node->children.push_back(product(depth + 1));
      expect_close(start, "inv(");
      node->text = std::string(s_.substr(start, pos_ - start));
      return node;
    }
    node->kind = Node::Name;
    for (const auto& k : kNames)
      if (name == k.name) node->info = &k;
    if (!node->info) fail(start, fmt::format("unknown name {}", quoted(name)), fmt::format(" (known: {})", known_names()));
    const NameInfo& info = *node->info;
    if (info.args == Args::None) {
      if (peek() == ':') fail(pos_, fmt::format("{} takes no arguments but ':' follows it", quoted(name)));
    } else {
      if (peek() != ':')
        fail(pos_, fmt::format("expected ':' after {}", quoted(name)), fmt::format(" (usage: {})", info.usage));
      ++pos_;
      const std::string what = fmt::format("a number for {}", info.usage);
      if (info.args == Args::One) {
        node->args.push_back(number(false, what));
      } else if (info.args == Args::List) {
        node->args = list(what);
      } else {  // axes: dims separated by 'x', then ':', then the axis permutation
        node->dims.push_back(number(true, what));
        while (peek() == 'x' || peek() == 'X') {
          ++pos_;
          node->dims.push_back(number(true, what));
        }
        if (peek() != ':')
          fail(pos_, "expected 'x' or ':' after the shape of 'axes'",
               fmt::format(", found {} (usage: {})", found(), info.usage));
        ++pos_;
        node->args = list(what);
      }
    }
    node->text = std::string(s_.substr(start, pos_ - start));
    return node;
  }

  std::vector<Num> list(const std::string& what) {
    std::vector<Num> v{number(false, what)};
    while (peek() == ',') {
      ++pos_;
      v.push_back(number(false, what));
    }
    return v;
  }

  // A number token: the maximal run of letters and digits, validated afterwards so that "0b12" is reported
  // as one malformed number rather than "0b1" followed by garbage. In a shape ("4x8x2") 'x' always separates
  // numbers: a 0x prefix there would read the typo "2x0x4" as 2 × 4 instead of refusing its 0, so shape
  // dimensions are decimal or 0b….
  Num number(bool in_shape, const std::string& what) {
    skip_ws();
    const std::size_t start = pos_;
    if (pos_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[pos_])))
      fail(pos_, fmt::format("expected {}", what), fmt::format(", found {}", found()));
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) {
      const char ch = s_[pos_];
      if (in_shape && (ch == 'x' || ch == 'X')) break;
      ++pos_;
    }
    const std::string text(s_.substr(start, pos_ - start));
    int base = 10;
    std::size_t digits = 0;
    if (text.size() >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) base = 16, digits = 2;
    if (text.size() >= 2 && text[0] == '0' && (text[1] == 'b' || text[1] == 'B')) base = 2, digits = 2;
    const auto malformed = [&] {
      fail(start, fmt::format("number {} is malformed", quoted(text)), " (numbers are decimal, 0x... or 0b...)");
    };
    if (digits == text.size()) malformed();
    std::uint64_t v = 0;
    for (std::size_t i = digits; i < text.size(); ++i) {
      const char ch = static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
      int d = -1;
      if (ch >= '0' && ch <= '9') d = ch - '0';
      else if (ch >= 'a' && ch <= 'f') d = ch - 'a' + 10;
      if (d < 0 || d >= base) malformed();
      if (v > (UINT64_MAX - static_cast<std::uint64_t>(d)) / static_cast<std::uint64_t>(base))
        fail(start, fmt::format("number {} does not fit in 64 bits", quoted(text)));
      v = v * static_cast<std::uint64_t>(base) + static_cast<std::uint64_t>(d);
    }
    return Num{v, start, text};
  }
};

int to_int(const Num& v, const char* what) {
  if (v.value > static_cast<std::uint64_t>(INT_MAX))
    fail(v.pos, fmt::format("{} {} is too large", what, quoted(v.text)));
  return static_cast<int>(v.value);
}

// Runs a named constructor, turning its std::invalid_argument into a SpecError that points at the term.
template <class F>
Bmmc located(const Node& node, F&& make) {
  try {
    return make();
  } catch (const SpecError&) {
    throw;
  } catch (const std::invalid_argument& e) {
    fail(node.pos, fmt::format("{} (in {}", e.what(), quoted(node.text)), ")");
  }
}

Bmmc make_defining(const Node& node) {
  return located(node, [&] {
    const std::string name = node.info->name;
    if (name == "bits") {
      std::vector<int> p;
      for (const Num& a : node.args) p.push_back(to_int(a, "bit position"));
      return bit_permutation(p);
    }
    if (name == "matrix") {
      if (node.args.size() > 64)
        fail(node.pos, fmt::format("'matrix' has {} rows; at most 64 are supported", node.args.size()));
      std::vector<BitVec> rows;
      for (const Num& a : node.args) rows.push_back(a.value);
      return from_rows(rows);
    }
    std::vector<std::uint64_t> shape;
    for (const Num& d : node.dims) shape.push_back(d.value);
    std::vector<int> axes;
    for (const Num& a : node.args) axes.push_back(to_int(a, "axis"));
    return axes_permutation(shape, axes);
  });
}

void collect_defining(Node& node, std::vector<Node*>& out) {
  if (node.kind == Node::Name && node.info->defines_n) {
    node.defined = make_defining(node);
    out.push_back(&node);
  }
  for (auto& c : node.children) collect_defining(*c, out);
}

class Evaluator {
 public:
  Evaluator(std::optional<int> n, std::string_view n_name) : n_(n), n_name_(n_name) {}

  Bmmc eval(const Node& node) {
    Bmmc b = eval_atom(node);
    if (!node.xor_c) return b;
    const Num& c = *node.xor_c;
    if (c.value & ~low_mask(b.n()))
      fail(c.pos, fmt::format("complement {} does not fit in n = {} bits", quoted(c.text), b.n()),
           fmt::format(" (it must be below 2^{})", b.n()));
    return Bmmc(b.matrix(), b.complement() ^ c.value);
  }

 private:
  std::optional<int> n_;
  std::string_view n_name_;

  Bmmc eval_atom(const Node& node) {
    switch (node.kind) {
      case Node::Product: {
        Bmmc r = eval(*node.children[0]);
        for (std::size_t i = 1; i < node.children.size(); ++i) r = compose(r, eval(*node.children[i]));
        return r;
      }
      case Node::Inv: return eval(*node.children[0]).inverse();
      case Node::Name: break;
    }
    if (node.defined) return *node.defined;
    const std::string name = node.info->name;
    if (!n_)
      fail(node.pos,
           fmt::format("{} needs n: the spec does not define it and {} is not given (the term {}", name, n_name_,
                       quoted(node.text)),
           "; only bits:, axes: and matrix: define n)");
    const int n = *n_;
    return located(node, [&] {
      if (name == "identity") return identity(n);
      if (name == "bit-reverse") return bit_reverse(n);
      if (name == "reverse") return reverse(n);
      if (name == "gray") return gray(n);
      if (name == "gray-inverse") return gray_inverse(n);
      if (name == "swap") {
        if (node.args.size() % 2)
          fail(node.pos, fmt::format("'swap' takes pairs of bit positions, got {} numbers", node.args.size()));
        std::vector<std::pair<int, int>> pairs;
        for (size_t i = 0; i < node.args.size(); i += 2)
          pairs.emplace_back(to_int(node.args[i], "bit position"), to_int(node.args[i + 1], "bit position"));
        return swap_index_bits(n, pairs);
      }
      const Num& a = node.args.at(0);
      if (name == "rotate") return rotate(n, to_int(a, "rotation"));
      if (name == "transpose") return transpose(n, to_int(a, "row bits"));
      if (name == "parm") return parm_matrix(n, a.value);
      if (name == "random-bpc") return random_bpc(n, a.value);
      return random_bmmc(n, a.value);
    });
  }
};

}  // namespace

Bmmc parse_spec(std::string_view text, std::optional<int> n, std::string_view n_name) {
  if (n && (*n < 0 || *n > 64))
    throw SpecError(fmt::format("{} must be between 0 and 64 index bits, got {}", n_name, *n), 0);
  NodePtr root = Parser(text).spec();

  // Settle n: the `n` argument first, else the first term that defines n; every defining term must agree with it.
  std::vector<Node*> defining;
  collect_defining(*root, defining);
  std::optional<int> spec_n = n;
  const Node* first = nullptr;
  for (const Node* d : defining) {
    const int dn = d->defined->n();
    if (!spec_n) {
      spec_n = dn;
      first = d;
    } else if (dn != *spec_n) {
      const std::string other = first ? fmt::format("{} at column {} defines n = {}", quoted(first->text),
                                                    first->pos + 1, *spec_n)
                                      : fmt::format("{} is {}", n_name, *spec_n);
      fail(d->pos, fmt::format("n mismatch: {}", quoted(d->text)), fmt::format(" defines n = {}, but {}", dn, other));
    }
  }
  return Evaluator(spec_n, n_name).eval(*root);
}

std::uint64_t parse_spec_number(std::string_view text) { return Parser(text).lone_number().value; }

}  // namespace bmmc
