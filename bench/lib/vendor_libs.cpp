// dlopen of cuStateVec and NCCL for the benchmarks (see vendor_libs.hpp).
#include "vendor_libs.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <stdexcept>

namespace bmmc::bench_detail {

namespace {

void* open_library(const char* env_var, const char* soname, std::string* why) {
  const char* env = std::getenv(env_var);
  void* lib = dlopen(env ? env : soname, RTLD_NOW | RTLD_LOCAL);
  if (!lib && why) *why = dlerror();
  return lib;
}

template <class F>
F symbol(void* lib, const char* name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}

}  // namespace

std::optional<CuStateVec> load_custatevec(std::string* why) {
  void* lib = open_library("BMMC_CUSTATEVEC_LIB", "libcustatevec.so.1", why);
  if (!lib) return std::nullopt;
  CuStateVec c;
  c.create = symbol<CuStateVec::Create>(lib, "custatevecCreate");
  c.destroy = symbol<CuStateVec::Destroy>(lib, "custatevecDestroy");
  c.version = symbol<CuStateVec::Version>(lib, "custatevecGetVersion");
  c.swap = symbol<CuStateVec::Swap>(lib, "custatevecSwapIndexBits");
  c.multi_device_swap = symbol<CuStateVec::MultiDeviceSwap>(lib, "custatevecMultiDeviceSwapIndexBits");
  if (!c.create || !c.destroy || !c.version || !c.swap) {
    if (why) *why = "libcustatevec.so.1 lacks one of custatevecCreate/Destroy/GetVersion/SwapIndexBits";
    return std::nullopt;
  }
  return c;
}

void Nccl::check(int status, const char* call) const {
  if (status == 0) return;
  throw std::runtime_error(std::string(call) + " failed: " + (error_string ? error_string(status) : "?") + " (" +
                           std::to_string(status) + ")");
}

std::optional<Nccl> load_nccl(std::string* why) {
  void* lib = open_library("BMMC_NCCL_LIB", "libnccl.so.2", why);
  if (!lib) return std::nullopt;
  Nccl n;
  n.comm_init_all = symbol<Nccl::CommInitAll>(lib, "ncclCommInitAll");
  n.comm_destroy = symbol<Nccl::CommDestroy>(lib, "ncclCommDestroy");
  n.group_start = symbol<Nccl::Group>(lib, "ncclGroupStart");
  n.group_end = symbol<Nccl::Group>(lib, "ncclGroupEnd");
  n.send = symbol<Nccl::Send>(lib, "ncclSend");
  n.recv = symbol<Nccl::Recv>(lib, "ncclRecv");
  n.error_string = symbol<Nccl::ErrorString>(lib, "ncclGetErrorString");
  if (!n.comm_init_all || !n.comm_destroy || !n.group_start || !n.group_end || !n.send || !n.recv || !n.error_string) {
    if (why) *why = "libnccl.so.2 lacks one of ncclCommInitAll/CommDestroy/GroupStart/GroupEnd/Send/Recv";
    return std::nullopt;
  }
  return n;
}

}  // namespace bmmc::bench_detail
