/* The C API test's harness (capi_harness.h). */
#include "capi_harness.h"

#include <stdlib.h>
#include <string.h>

#if BMMC_CAPI_TEST_CUDA
#include <cuda_runtime_api.h>
#endif

int checks = 0;
int failures = 0;

static uint64_t rng_state = 0x243f6a8885a308d3ULL;
uint64_t rnd(void) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* ---- Buffers on one backend: host memory for the CPU, device memory for CUDA ------------------------- */

void* buf_alloc(Where w, size_t bytes) {
#if BMMC_CAPI_TEST_CUDA
  if (w.backend == BMMC_BACKEND_CUDA) {
    void* p = NULL;
    if (cudaMalloc(&p, bytes + 64) != cudaSuccess) return NULL;
    return p;
  }
#endif
  (void)w;
  return malloc(bytes + 64); /* glibc: 16-byte aligned, enough for every element size */
}

void buf_free(Where w, void* p) {
#if BMMC_CAPI_TEST_CUDA
  if (w.backend == BMMC_BACKEND_CUDA) {
    cudaFree(p);
    return;
  }
#endif
  (void)w;
  free(p);
}

void upload(Where w, void* dst, const void* src, size_t bytes) {
#if BMMC_CAPI_TEST_CUDA
  if (w.backend == BMMC_BACKEND_CUDA) {
    CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice) == cudaSuccess);
    return;
  }
#endif
  (void)w;
  memcpy(dst, src, bytes);
}

/* Waits for the stream (CUDA) and copies back. */
void download(Where w, void* dst, const void* src, size_t bytes) {
#if BMMC_CAPI_TEST_CUDA
  if (w.backend == BMMC_BACKEND_CUDA) {
    CHECK(cudaStreamSynchronize((cudaStream_t)w.stream) == cudaSuccess);
    CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
    return;
  }
#endif
  (void)w;
  memcpy(dst, src, bytes);
}

bmmcPermuterOptions_t options_for(Where w, int in_place) {
  bmmcPermuterOptions_t o;
  OK(bmmcPermuterOptionsInit(&o));
  o.backend = w.backend;
  o.in_place = in_place;
  return o;
}

/* ---- The reference, from the map's rows -------------------------------------------------------------- */

static int parity64(uint64_t v) {
  int p = 0;
  while (v) {
    p ^= 1;
    v &= v - 1;
  }
  return p;
}

uint64_t apply_rows(int n, const uint64_t* rows, uint64_t c, uint64_t x) {
  uint64_t y = 0;
  int i;
  for (i = 0; i < n; ++i) y |= (uint64_t)parity64(rows[i] & x) << i;
  return y ^ c;
}

/* Is the n×n matrix with these rows invertible over F2? (Gaussian elimination, independent of the library.) */
int invertible(int n, const uint64_t* rows) {
  uint64_t r[64];
  int col, i, rank = 0;
  memcpy(r, rows, sizeof(uint64_t) * (size_t)n);
  for (col = 0; col < n; ++col) {
    int pivot = -1;
    for (i = rank; i < n; ++i)
      if ((r[i] >> col) & 1) {
        pivot = i;
        break;
      }
    if (pivot < 0) return 0;
    {
      uint64_t t = r[pivot];
      r[pivot] = r[rank];
      r[rank] = t;
    }
    for (i = 0; i < n; ++i)
      if (i != rank && ((r[i] >> col) & 1)) r[i] ^= r[rank];
    ++rank;
  }
  return 1;
}

/* Fills `bytes` bytes with a pattern that differs element by element. */
void fill_random(unsigned char* p, size_t bytes) {
  size_t i;
  for (i = 0; i < bytes; ++i) p[i] = (unsigned char)rnd();
}

/* Is out[A·x ^ c] = in[x] for every x (n bits, elements of b bytes)? */
int is_permuted(bmmcMap_t map, const unsigned char* in, const unsigned char* out, int b) {
  uint64_t rows[64], c, x;
  int n;
  OK(bmmcMapGetN(map, &n));
  OK(bmmcMapGetRows(map, rows, &c));
  for (x = 0; x < ((uint64_t)1 << n); ++x)
    if (memcmp(out + apply_rows(n, rows, c, x) * (uint64_t)b, in + x * (uint64_t)b, (size_t)b) != 0) return 0;
  return 1;
}

int all_bytes(const unsigned char* p, size_t bytes, unsigned char v) {
  size_t i;
  for (i = 0; i < bytes; ++i)
    if (p[i] != v) return 0;
  return 1;
}
