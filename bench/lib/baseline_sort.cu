// CUB and Thrust sorting baselines (see baseline_sort.hpp).
#include "bmmc/bench/baseline_sort.hpp"

#include <cub/device/device_radix_sort.cuh>
#include <thrust/device_ptr.h>
#include <thrust/execution_policy.h>
#include <thrust/sort.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "bmmc/cuda/error.hpp"

namespace bmmc {

namespace {

template <class T>
bool sorted_on_host(const T* d, std::size_t count) {
  std::vector<T> h(count);
  check(cudaMemcpy(h.data(), d, count * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy(check sorted)");
  return std::is_sorted(h.begin(), h.end());
}

struct Events {
  cudaEvent_t a = nullptr, b = nullptr;
  Events() {
    check(cudaEventCreate(&a), "cudaEventCreate");
    check(cudaEventCreate(&b), "cudaEventCreate");
  }
  ~Events() {
    cudaEventDestroy(a);
    cudaEventDestroy(b);
  }
  float ms() {
    check(cudaEventSynchronize(b), "cudaEventSynchronize");
    float v = 0;
    check(cudaEventElapsedTime(&v, a, b), "cudaEventElapsedTime");
    return v;
  }
};

template <class T>
BaselineTiming cub_sort(const T* in, std::size_t count, int reps) {
  T* out = nullptr;
  void* temp = nullptr;
  std::size_t temp_bytes = 0;
  check(cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, in, out, static_cast<std::int64_t>(count)),
        "cub::DeviceRadixSort::SortKeys (size query)");
  check(cudaMalloc(&out, count * sizeof(T)), "cudaMalloc(cub out)");
  check(cudaMalloc(&temp, temp_bytes), "cudaMalloc(cub temp)");
  BaselineTiming r;
  Events ev;
  for (int i = -1; i < reps; ++i) {
    check(cudaEventRecord(ev.a), "cudaEventRecord");
    check(cub::DeviceRadixSort::SortKeys(temp, temp_bytes, in, out, static_cast<std::int64_t>(count)),
          "cub::DeviceRadixSort::SortKeys");
    check(cudaEventRecord(ev.b), "cudaEventRecord");
    const float ms = ev.ms();
    if (i >= 0) r.ms.push_back(ms);
  }
  r.sorted = sorted_on_host(out, count);
  cudaFree(out);
  cudaFree(temp);
  return r;
}

template <class T>
BaselineTiming thrust_sort(const T* in, std::size_t count, int reps) {
  T* work = nullptr;
  check(cudaMalloc(&work, count * sizeof(T)), "cudaMalloc(thrust work)");
  BaselineTiming r;
  Events ev;
  for (int i = -1; i < reps; ++i) {
    check(cudaMemcpy(work, in, count * sizeof(T), cudaMemcpyDeviceToDevice), "cudaMemcpy(thrust input)");
    check(cudaEventRecord(ev.a), "cudaEventRecord");
    thrust::sort(thrust::device, thrust::device_ptr<T>(work), thrust::device_ptr<T>(work) + count);
    check(cudaEventRecord(ev.b), "cudaEventRecord");
    const float ms = ev.ms();
    if (i >= 0) r.ms.push_back(ms);
  }
  r.sorted = sorted_on_host(work, count);
  cudaFree(work);
  return r;
}


}  // namespace

BaselineTiming time_cub_radix_sort(const void* d_in, std::size_t count, DType t, int reps) {
  return visit_dtype(t, [&](auto v) { return cub_sort(static_cast<const decltype(v)*>(d_in), count, reps); });
}

BaselineTiming time_thrust_sort(const void* d_in, std::size_t count, DType t, int reps) {
  return visit_dtype(t, [&](auto v) { return thrust_sort(static_cast<const decltype(v)*>(d_in), count, reps); });
}

}  // namespace bmmc
