#include <fmt/format.h>
#include "bmmc/core/named.hpp"
int main() { fmt::print("{}", bmmc::bit_reverse(4).to_string()); }
