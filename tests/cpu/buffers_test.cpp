// check_elem_bytes / array_bytes / check_buffers: every rejected case and its message.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "bmmc/core/buffers.hpp"

namespace bmmc {
namespace {

template <class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  ADD_FAILURE() << "no std::invalid_argument thrown";
  return "";
}

TEST(Buffers, ElemBytes) {
  for (int b : {1, 2, 4, 8, 16}) EXPECT_NO_THROW(check_elem_bytes(b));
  for (int b : {0, 3, 5, 12, 32, -4}) {
    const std::string m = message_of([&] { check_elem_bytes(b); });
    EXPECT_NE(m.find(std::to_string(b)), std::string::npos) << m;
    EXPECT_NE(m.find("1, 2, 4, 8 and 16"), std::string::npos) << m;
  }
}

TEST(Buffers, ArrayBytes) {
  EXPECT_EQ(array_bytes(0, 1), 1u);
  EXPECT_EQ(array_bytes(10, 4), 4096u);
  EXPECT_EQ(array_bytes(59, 16), std::size_t{1} << 63);
  EXPECT_NE(message_of([] { array_bytes(-1, 4); }).find("0 <= n <= 62"), std::string::npos);
  EXPECT_NE(message_of([] { array_bytes(63, 1); }).find("out of range"), std::string::npos);
  EXPECT_NE(message_of([] { array_bytes(62, 4); }).find("does not fit in size_t"), std::string::npos);
  EXPECT_NE(message_of([] { array_bytes(60, 16); }).find("does not fit in size_t"), std::string::npos);
  EXPECT_NE(message_of([] { array_bytes(4, 3); }).find("not supported"), std::string::npos);
}

TEST(Buffers, GoodBuffersPass) {
  std::vector<std::uint64_t> a(32), b(32);
  for (int e : {1, 2, 4, 8}) EXPECT_NO_THROW(check_buffers(a.data(), b.data(), 3, e));
  // Adjacent but disjoint ranges are fine.
  EXPECT_NO_THROW(check_buffers(a.data(), a.data() + 4, 5, 1));
  EXPECT_NO_THROW(check_buffers(a.data() + 4, a.data(), 5, 1));
}

TEST(Buffers, NullPointers) {
  std::vector<std::uint32_t> a(16);
  EXPECT_NE(message_of([&] { check_buffers(nullptr, a.data(), 2, 4); }).find("input pointer is null"),
            std::string::npos);
  EXPECT_NE(message_of([&] { check_buffers(a.data(), nullptr, 2, 4); }).find("output pointer is null"),
            std::string::npos);
}

TEST(Buffers, SameAndOverlapping) {
  std::vector<std::uint32_t> a(64);
  EXPECT_NE(message_of([&] { check_buffers(a.data(), a.data(), 3, 4); }).find("same buffer"), std::string::npos);
  EXPECT_NE(message_of([&] { check_buffers(a.data(), a.data() + 7, 3, 4); }).find("overlap"), std::string::npos);
  EXPECT_NE(message_of([&] { check_buffers(a.data() + 7, a.data(), 3, 4); }).find("overlap"), std::string::npos);
  EXPECT_NO_THROW(check_buffers(a.data(), a.data() + 8, 3, 4));
}

TEST(Buffers, Misaligned) {
  alignas(16) unsigned char raw[256];
  EXPECT_NE(message_of([&] { check_buffers(raw + 1, raw + 128, 3, 4); }).find("input pointer"),
            std::string::npos);
  EXPECT_NE(message_of([&] { check_buffers(raw, raw + 130, 3, 4); }).find("not aligned to the element size 4"),
            std::string::npos);
  EXPECT_NE(message_of([&] { check_buffers(raw + 8, raw + 128, 2, 16); }).find("not aligned"), std::string::npos);
  EXPECT_NO_THROW(check_buffers(raw + 1, raw + 130, 3, 1));
}

TEST(Buffers, NOutOfRange) {
  std::vector<std::uint32_t> a(4), b(4);
  EXPECT_NE(message_of([&] { check_buffers(a.data(), b.data(), 63, 1); }).find("out of range"), std::string::npos);
  EXPECT_NE(message_of([&] { check_buffers(a.data(), b.data(), -2, 1); }).find("out of range"), std::string::npos);
  EXPECT_NE(message_of([&] { check_buffers(a.data(), b.data(), 2, 3); }).find("not supported"), std::string::npos);
}

}  // namespace
}  // namespace bmmc
