// The digit spec parser: text → syntax tree → DigitMap.
//
// Pass 1 builds the tree and checks syntax (numbers lexed as in src/core/spec.cpp: a maximal run of letters and
// digits validated as a whole). Pass 2 evaluates in application order, carrying the current shape from right to
// left: each term is built on the shape it receives, so an axis or a list length is checked against the rank at
// that point. inv(X) is evaluated as X's terms inverted in reverse order, so the shape keeps flowing the same way.
#include "bmmc/core/digit_spec.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <climits>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

namespace bmmc {
namespace {

enum class Kind { Axes, Flip, Roll, FftShift, IfftShift, Identity, Inv, Product };

struct NameInfo {
  const char* name;
  Kind kind;
  const char* usage;
};

constexpr NameInfo kNames[] = {
    {"axes", Kind::Axes, "axes:Q0,Q1,... or axes:D0xD1x...:Q0,Q1,..."},
    {"flip", Kind::Flip, "flip or flip:J0,J1,..."},
    {"roll", Kind::Roll, "roll:S0,S1,..."},
    {"fftshift", Kind::FftShift, "fftshift"},
    {"ifftshift", Kind::IfftShift, "ifftshift"},
    {"identity", Kind::Identity, "identity"},
};

std::string known_names() {
  std::string s;
  for (const auto& k : kNames) s += (s.empty() ? "" : ", ") + std::string(k.usage);
  return s + ", inv(SPEC), (SPEC)";
}

// A number as written: its magnitude, its sign (only where negatives are allowed) and where it starts.
struct Num {
  std::uint64_t value;
  bool negative;
  std::size_t pos;
  std::string text;
};

struct Node {
  Kind kind = Kind::Product;
  std::size_t pos = 0;
  std::string text;
  bool has_list = false;   // flip with a list
  std::vector<Num> args;   // axes / flip / roll list
  std::vector<Num> dims;   // axes with a shape
  std::vector<std::unique_ptr<Node>> children;
};
using NodePtr = std::unique_ptr<Node>;

constexpr int kMaxDepth = 200;

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
           ": expected '*' (product) or the end of the spec");
    }
    return root;
  }

  // A shape on its own (parse_shape): extents separated by 'x' or ','.
  std::vector<Num> lone_shape() {
    skip_ws();
    std::vector<Num> dims{number(true, false, "an extent")};
    while (peek() == 'x' || peek() == 'X' || peek() == ',') {
      ++pos_;
      dims.push_back(number(true, false, "an extent"));
    }
    skip_ws();
    if (pos_ < s_.size())
      fail(pos_, fmt::format("unexpected {} in the shape", found()),
           ": expected extents separated by 'x' or ',' (e.g. 1000x1003x257)");
    return dims;
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
  void expect_close(std::size_t start, std::string_view opener) {
    if (peek() != ')')
      fail(pos_, "expected ')'", fmt::format(" to close the '{}' at column {}, found {}", opener, start + 1, found()));
    ++pos_;
  }

  NodePtr product(int depth) {
    if (depth > kMaxDepth) fail(pos_, fmt::format("spec nests deeper than {} levels", kMaxDepth));
    auto node = std::make_unique<Node>();
    node->pos = (skip_ws(), pos_);
    node->children.push_back(atom(depth));
    while (peek() == '*') {
      ++pos_;
      node->children.push_back(atom(depth));
    }
    node->text = std::string(s_.substr(node->pos, pos_ - node->pos));
    return node;
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
      node->kind = Kind::Inv;
      if (peek() != '(') fail(pos_, "expected '(' after 'inv'", fmt::format(", found {}", found()));
      ++pos_;
      node->children.push_back(product(depth + 1));
      expect_close(start, "inv(");
      node->text = std::string(s_.substr(start, pos_ - start));
      return node;
    }
    const NameInfo* info = nullptr;
    for (const auto& k : kNames)
      if (name == k.name) info = &k;
    if (!info) fail(start, fmt::format("unknown name {}", quoted(name)), fmt::format(" (known: {})", known_names()));
    node->kind = info->kind;
    const std::string what = fmt::format("a number for {}", info->usage);
    switch (info->kind) {
      case Kind::FftShift:
      case Kind::IfftShift:
      case Kind::Identity:
        if (peek() == ':') fail(pos_, fmt::format("{} takes no arguments but ':' follows it", quoted(name)));
        break;
      case Kind::Flip:
        if (peek() == ':') {
          ++pos_;
          node->has_list = true;
          node->args = list(true, what);
        }
        break;
      case Kind::Roll:
        expect_colon(name, *info);
        node->args = list(true, what);
        break;
      default: {  // axes: an optional shape ("4x5x6:"), then the axis permutation
        expect_colon(name, *info);
        std::vector<Num> first{number(true, false, what)};
        bool shape = false;
        while (peek() == 'x' || peek() == 'X') {
          shape = true;
          ++pos_;
          first.push_back(number(true, false, what));
        }
        if (peek() == ':') {  // what was read is the shape (possibly of rank 1)
          ++pos_;
          node->dims = std::move(first);
          node->args = list(false, what);
        } else if (shape) {
          fail(pos_, "expected 'x' or ':' after the shape of 'axes'",
               fmt::format(", found {} (usage: {})", found(), info->usage));
        } else {  // the first number was the first axis (re-lexed: shapes lex 0x... differently)
          pos_ = first[0].pos;
          node->args = list(false, what);
        }
      }
    }
    node->text = std::string(s_.substr(start, pos_ - start));
    return node;
  }

  void expect_colon(const std::string& name, const NameInfo& info) {
    if (peek() != ':')
      fail(pos_, fmt::format("expected ':' after {}", quoted(name)), fmt::format(" (usage: {})", info.usage));
    ++pos_;
  }

  std::vector<Num> list(bool signed_ok, const std::string& what) {
    std::vector<Num> v{number(false, signed_ok, what)};
    while (peek() == ',') {
      ++pos_;
      v.push_back(number(false, signed_ok, what));
    }
    return v;
  }

  // As in src/core/spec.cpp: a maximal run of letters and digits, validated as a whole; in a shape 'x' always
  // separates, so extents are decimal or 0b....
  Num number(bool in_shape, bool signed_ok, const std::string& what) {
    skip_ws();
    const std::size_t start = pos_;
    bool negative = false;
    if (signed_ok && pos_ < s_.size() && s_[pos_] == '-') {
      negative = true;
      ++pos_;
    }
    if (pos_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      if (!signed_ok && pos_ < s_.size() && s_[pos_] == '-')
        fail(pos_, fmt::format("expected {}, found a negative number", what), " (only roll shifts and flip axes may be negative)");
      fail(pos_, fmt::format("expected {}", what), fmt::format(", found {}", found()));
    }
    const std::size_t digits_start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) {
      const char ch = s_[pos_];
      if (in_shape && (ch == 'x' || ch == 'X')) break;
      ++pos_;
    }
    const std::string text(s_.substr(start, pos_ - start));
    const std::string body(s_.substr(digits_start, pos_ - digits_start));
    int base = 10;
    std::size_t skip = 0;
    if (body.size() >= 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X')) base = 16, skip = 2;
    if (body.size() >= 2 && body[0] == '0' && (body[1] == 'b' || body[1] == 'B')) base = 2, skip = 2;
    const auto malformed = [&] {
      fail(start, fmt::format("number {} is malformed", quoted(text)), " (numbers are decimal, 0x... or 0b...)");
    };
    if (skip == body.size()) malformed();
    std::uint64_t v = 0;
    for (std::size_t i = skip; i < body.size(); ++i) {
      const char ch = static_cast<char>(std::tolower(static_cast<unsigned char>(body[i])));
      int d = -1;
      if (ch >= '0' && ch <= '9') d = ch - '0';
      else if (ch >= 'a' && ch <= 'f') d = ch - 'a' + 10;
      if (d < 0 || d >= base) malformed();
      if (v > (static_cast<std::uint64_t>(INT64_MAX) - static_cast<std::uint64_t>(d)) / static_cast<std::uint64_t>(base))
        fail(start, fmt::format("number {} does not fit in 63 bits", quoted(text)));
      v = v * static_cast<std::uint64_t>(base) + static_cast<std::uint64_t>(d);
    }
    return Num{v, negative, start, text};
  }
};

std::int64_t value(const Num& n) {
  return n.negative ? -static_cast<std::int64_t>(n.value) : static_cast<std::int64_t>(n.value);
}

// Extents from Nums: each ≥ 1, the product at most kMaxDigitElements; `whose` names the shape in messages.
std::vector<Extent> to_shape(const std::vector<Num>& dims, const std::string& whose) {
  std::vector<Extent> shape;
  Extent total = 1;
  for (const Num& d : dims) {
    if (d.value < 1) fail(d.pos, fmt::format("extent {} of {} is {}", shape.size(), whose, d.text), ": every extent must be at least 1");
    const auto e = static_cast<Extent>(d.value);
    if (__builtin_mul_overflow(total, e, &total) || total > kMaxDigitElements)
      fail(d.pos, fmt::format("{} has more than 2^62 elements (from extent {})", whose, quoted(d.text)),
           " (the most a shape may have)");
    shape.push_back(e);
  }
  return shape;
}

// Runs a DigitMap constructor, turning its std::invalid_argument into a SpecError that points at the term.
template <class F>
DigitMap located(const Node& node, F&& make) {
  try {
    return make();
  } catch (const SpecError&) {
    throw;
  } catch (const std::invalid_argument& e) {
    fail(node.pos, fmt::format("{} (in {}", e.what(), quoted(node.text)), ")");
  }
}

class Evaluator {
 public:
  Evaluator(std::optional<std::vector<Extent>> shape, std::string_view shape_name)
      : shape_(std::move(shape)), from_caller_(shape_.has_value()), shape_name_(shape_name) {}

  // The map of `node` on the current shape, inverted when `inv`; the current shape becomes its output shape.
  DigitMap eval(const Node& node, bool inv) {
    switch (node.kind) {
      case Kind::Product: {
        const auto& c = node.children;
        std::optional<DigitMap> r;
        for (std::size_t i = 0; i < c.size(); ++i) {  // inv(a*b) = inv(b)*inv(a): a first when inverted
          const DigitMap m = eval(*c[inv ? i : c.size() - 1 - i], inv);
          r = r ? compose(m, *r) : m;
        }
        return *r;
      }
      case Kind::Inv: return eval(*node.children[0], !inv);
      case Kind::Axes: return axes(node, inv);
      default: break;
    }
    const std::vector<Extent>& shape = current(node);
    const int k = static_cast<int>(shape.size());
    DigitMap m = located(node, [&] {
      switch (node.kind) {
        case Kind::Identity: return DigitMap::identity(shape);
        case Kind::Flip: {
          std::vector<int> list;
          std::vector<bool> seen(static_cast<std::size_t>(k), false);
          if (!node.has_list)
            for (int a = 0; a < k; ++a) list.push_back(a);
          for (const Num& n : node.args) {
            const int a = axis(n, k, shape, true);
            if (seen[static_cast<std::size_t>(a)])
              fail(n.pos, fmt::format("axis {} is flipped twice in {}", a, quoted(node.text)),
                   " (each axis at most once)");
            seen[static_cast<std::size_t>(a)] = true;
            list.push_back(a);
          }
          return DigitMap::flip(shape, list);
        }
        case Kind::Roll: {
          if (static_cast<int>(node.args.size()) != k)
            fail(node.pos, fmt::format("{} gives {} shifts but the shape {} has rank {}", quoted(node.text),
                                       node.args.size(), shape_to_string(shape), k),
                 " (one shift per axis)");
          std::vector<Extent> s;
          for (const Num& n : node.args) s.push_back(value(n));
          return DigitMap::roll(shape, s);
        }
        default: {  // fftshift / ifftshift: numpy's shift by d/2 on every axis (ifftshift by −(d/2))
          std::vector<Extent> s;
          for (const Extent d : shape) s.push_back(node.kind == Kind::FftShift ? d / 2 : -(d / 2));
          return DigitMap::roll(shape, s);
        }
      }
    });
    if (inv) m = m.inverse();
    shape_ = m.out_shape();
    from_caller_ = false;
    return m;
  }

 private:
  std::optional<std::vector<Extent>> shape_;
  bool from_caller_;
  std::string_view shape_name_;

  const std::vector<Extent>& current(const Node& node) {
    if (!shape_)
      fail(node.pos,
           fmt::format("{} needs the array's shape: {} is not given and no 'axes:D0xD1x...:' term applied before "
                       "it defines one",
                       quoted(node.text), shape_name_),
           " (the rightmost term must define the shape)");
    return *shape_;
  }

  std::string describe_current() const {
    return from_caller_ ? fmt::format("{} is {}", shape_name_, shape_to_string(*shape_))
                        : fmt::format("the terms to its right produce {}", shape_to_string(*shape_));
  }

  // A 0-based axis of a rank-k shape; negative ones count from the end where allowed.
  static int axis(const Num& n, int k, const std::vector<Extent>& shape, bool negative_ok) {
    const std::int64_t v = value(n);
    const std::int64_t a = (negative_ok && v < 0) ? v + k : v;
    if (a < 0 || a >= k)
      fail(n.pos, fmt::format("axis {} is out of range for a rank-{} shape {}", n.text, k, shape_to_string(shape)),
           negative_ok ? fmt::format(" (expected -{}..{})", k, k - 1) : fmt::format(" (expected 0..{})", k - 1));
    return static_cast<int>(a);
  }

  DigitMap axes(const Node& node, bool inv) {
    // The transpose's input shape: given in the term, or the current one (its output shape when inverted).
    std::vector<Extent> in_shape;
    std::optional<std::vector<Extent>> given;
    if (!node.dims.empty()) given = to_shape(node.dims, fmt::format("the shape of {}", quoted(node.text)));
    const int k = given ? static_cast<int>(given->size()) : static_cast<int>(current(node).size());
    const std::vector<Extent>& rank_shape = given ? *given : *shape_;
    if (static_cast<int>(node.args.size()) != k)
      fail(node.pos, fmt::format("{} lists {} axes but the shape {} has rank {}", quoted(node.text), node.args.size(),
                                 shape_to_string(rank_shape), k),
           fmt::format(" (expected a permutation of 0..{})", k - 1));
    std::vector<int> q;
    std::vector<bool> seen(static_cast<std::size_t>(k), false);
    for (const Num& n : node.args) {
      const int a = axis(n, k, rank_shape, false);
      if (seen[static_cast<std::size_t>(a)])
        fail(n.pos, fmt::format("axis {} is repeated in {}", a, quoted(node.text)),
             fmt::format(" (expected a permutation of 0..{})", k - 1));
      seen[static_cast<std::size_t>(a)] = true;
      q.push_back(a);
    }
    if (given) {
      in_shape = *given;
      // The shape this term receives: the transpose's input, or its output when inverted.
      std::vector<Extent> receives = in_shape;
      if (inv)
        for (int j = 0; j < k; ++j) receives[static_cast<std::size_t>(j)] = in_shape[static_cast<std::size_t>(q[static_cast<std::size_t>(j)])];
      if (shape_ && *shape_ != receives)
        fail(node.dims[0].pos,
             fmt::format("{} {} the shape {} but {}", quoted(node.text), inv ? "inverted expects" : "gives",
                         shape_to_string(receives), describe_current()),
             " (the shapes must agree)");
    } else if (inv) {  // the transpose's output is the current shape: out[j] = in[q[j]]
      in_shape.assign(static_cast<std::size_t>(k), 0);
      for (int j = 0; j < k; ++j) in_shape[static_cast<std::size_t>(q[static_cast<std::size_t>(j)])] = (*shape_)[static_cast<std::size_t>(j)];
    } else {
      in_shape = *shape_;
    }
    DigitMap m = located(node, [&] { return DigitMap::transpose(in_shape, q); });
    if (inv) m = m.inverse();
    shape_ = m.out_shape();
    from_caller_ = false;
    return m;
  }
};

}  // namespace

DigitMap parse_digit_spec(std::string_view text, std::optional<std::vector<Extent>> shape,
                          std::string_view shape_name) {
  if (shape) {
    try {
      (void)DigitMap::identity(*shape);
    } catch (const std::invalid_argument& e) {
      throw SpecError(fmt::format("{} is not a valid shape: {}", shape_name, e.what()), 0);
    }
  }
  const NodePtr root = Parser(text).spec();
  return Evaluator(std::move(shape), shape_name).eval(*root, false);
}

std::vector<Extent> parse_shape(std::string_view text) {
  const std::size_t b = text.find_first_not_of(" \t\r\n\f\v");
  const std::size_t e = text.find_last_not_of(" \t\r\n\f\v");
  if (b != std::string_view::npos && text.substr(b, e - b + 1) == "scalar") return {};
  if (b == std::string_view::npos)
    throw SpecError("empty shape at column 1: expected extents separated by 'x' or ',' (e.g. 1000x1003x257), or "
                    "'scalar'",
                    1);
  return to_shape(Parser(text).lone_shape(), "the shape");
}

}  // namespace bmmc
