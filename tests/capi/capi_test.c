/* The C API (bmmc/bmmc.h) from C: compiled by a C compiler as C99 with -pedantic -Werror, so the header is
 * checked to be C as well as the calls. Worked examples verbatim, reconstruction over random maps (the
 * reference out[A·x ^ c] = in[x] is computed here from the map's rows, not by the library), in place, masked
 * index-bit swaps, the last error per thread, and every bad input (capi_bad_inputs.c): each must return its
 * status and a message and leave every output untouched. The CPU cases run in every build; `cuda` as the
 * argument runs them on the GPU (device buffers through the CUDA runtime's C API, enqueued on a stream). */
#define _POSIX_C_SOURCE 200112L /* pthread barriers under -std=c99 */

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capi_harness.h"

#if BMMC_CAPI_TEST_CUDA
#include <cuda_runtime_api.h>
#endif

/* ---- Version, statuses, maps ------------------------------------------------------------------------ */

static void test_version_and_statuses(void) {
  int s;
  CHECK(bmmcGetVersion() == BMMC_VERSION);
  for (s = BMMC_STATUS_SUCCESS; s <= BMMC_STATUS_INTERNAL_ERROR; ++s) {
    const char* name = bmmcGetStatusString((bmmcStatus_t)s);
    CHECK(strncmp(name, "BMMC_STATUS_", 12) == 0 && strcmp(name, "BMMC_STATUS_UNKNOWN") != 0);
    if (s > 0) CHECK(strcmp(name, bmmcGetStatusString((bmmcStatus_t)(s - 1))) != 0);
  }
  CHECK(strcmp(bmmcGetStatusString(BMMC_STATUS_INVALID_SPEC), "BMMC_STATUS_INVALID_SPEC") == 0);
  CHECK(strcmp(bmmcGetStatusString((bmmcStatus_t)99), "BMMC_STATUS_UNKNOWN") == 0);
}

static void test_maps(void) {
  /* docs/GUIDE.md "Conventions": transpose:2 on n = 4 prints as below and maps 6 to 9; the same map from its rows. */
  static const uint64_t transpose_rows[4] = {0x4, 0x8, 0x1, 0x2};
  static const char transpose_text[] = "..1.\n...1\n1...\n.1..\nc = 0x0\n";
  bmmcMap_t t = NULL, r = NULL, r2 = NULL, inv = NULL, id = NULL, g = NULL;
  uint64_t rows[64], c = 1, y = 0;
  char text[64];
  size_t length = 0;
  int n = -1, i;
  OK(bmmcMapCreateFromSpec(&t, "transpose:2", 4));
  OK(bmmcMapCreateFromRows(&r, 4, transpose_rows, 0));
  OK(bmmcMapGetN(t, &n));
  CHECK(n == 4);
  OK(bmmcMapGetRows(t, rows, &c));
  CHECK(memcmp(rows, transpose_rows, sizeof transpose_rows) == 0 && c == 0);
  OK(bmmcMapApply(r, 6, &y));
  CHECK(y == 9);
  OK(bmmcMapPrint(t, NULL, 0, &length)); /* a length query */
  CHECK(length == strlen(transpose_text));
  memset(text, 'x', sizeof text);
  OK(bmmcMapPrint(t, text, sizeof text, &length));
  CHECK(strcmp(text, transpose_text) == 0);

  /* n = -1: the spec defines n (bits:), or must. */
  OK(bmmcMapCreateFromSpec(&r2, "bits:2,0,1", -1));
  OK(bmmcMapGetN(r2, &n));
  CHECK(n == 3);
  OK(bmmcMapApply(r2, 1, &y)); /* input bit 0 goes to output bit 2 */
  CHECK(y == 4);
  OK(bmmcMapDestroy(r2));
  r2 = (bmmcMap_t)&text;
  FAILS(bmmcMapCreateFromSpec(&r2, "bit-reverse", -1), BMMC_STATUS_INVALID_SPEC);
  CHECK(r2 == (bmmcMap_t)&text);
  /* The messages about n name this function's argument n, not the command line's --n. */
  CHECK(strstr(bmmcGetLastErrorMessage(), "the spec does not define it and n is not given") != NULL);
  CHECK(strstr(bmmcGetLastErrorMessage(), "--n") == NULL && bmmcGetLastErrorColumn() == 1);
  FAILS(bmmcMapCreateFromSpec(&r2, "bits:1,0", 3), BMMC_STATUS_INVALID_SPEC);
  CHECK(strstr(bmmcGetLastErrorMessage(), "defines n = 2, but n is 3") != NULL);
  CHECK(strstr(bmmcGetLastErrorMessage(), "--n") == NULL && r2 == (bmmcMap_t)&text);

  /* A complement: gray ^ 0b101 composed with its inverse is the identity. */
  OK(bmmcMapCreateFromSpec(&g, "gray^0b101", 3));
  OK(bmmcMapInverse(&inv, g));
  OK(bmmcMapCompose(&id, inv, g));
  OK(bmmcMapGetRows(id, rows, &c));
  for (i = 0; i < 3; ++i) CHECK(rows[i] == ((uint64_t)1 << i));
  CHECK(c == 0);
  OK(bmmcMapApply(g, 4, &y)); /* gray(4) = 4 ^ 2 = 6, then ^ 5 */
  CHECK(y == (6 ^ 5));

  /* Random rows: the library accepts exactly the invertible ones (checked here by elimination). */
  for (i = 0; i < 200; ++i) {
    int k, nn = 1 + (int)(rnd() % 8);
    uint64_t rr[8], cc = rnd() & (((uint64_t)1 << nn) - 1);
    bmmcMap_t m = (bmmcMap_t)&text; /* a sentinel that a failing call must leave alone */
    bmmcStatus_t s;
    for (k = 0; k < nn; ++k) rr[k] = rnd() & (((uint64_t)1 << nn) - 1);
    s = bmmcMapCreateFromRows(&m, nn, rr, cc);
    if (invertible(nn, rr)) {
      CHECK(s == BMMC_STATUS_SUCCESS);
      if (s == BMMC_STATUS_SUCCESS) {
        uint64_t back[8], back_c;
        OK(bmmcMapGetRows(m, back, &back_c));
        CHECK(memcmp(back, rr, sizeof(uint64_t) * (size_t)nn) == 0 && back_c == cc);
        OK(bmmcMapDestroy(m));
      }
    } else {
      CHECK(s == BMMC_STATUS_INVALID_ARGUMENT && m == (bmmcMap_t)&text && bmmcGetLastErrorMessage()[0] != '\0');
    }
  }
  OK(bmmcMapDestroy(t));
  OK(bmmcMapDestroy(r));
  OK(bmmcMapDestroy(g));
  OK(bmmcMapDestroy(inv));
  OK(bmmcMapDestroy(id));
  OK(bmmcMapDestroy(NULL));
}

/* ---- Worked examples ---------------------------------------------------------------------------------- */

/* Runs `spec` on in[i] = i (n bits, 4-byte elements) through a permuter and through bmmcPermute. */
static void check_example(Where w, const char* spec, int n, const uint32_t* expected) {
  uint32_t host_in[16], host_out[16];
  size_t bytes = sizeof(uint32_t) * ((size_t)1 << n);
  bmmcMap_t map = NULL;
  bmmcPermuter_t p = NULL;
  bmmcPermuterOptions_t o = options_for(w, 0);
  void *in = buf_alloc(w, bytes), *out = buf_alloc(w, bytes);
  uint32_t i;
  for (i = 0; i < (1u << n); ++i) host_in[i] = i;
  upload(w, in, host_in, bytes);
  OK(bmmcMapCreateFromSpec(&map, spec, n));
  OK(bmmcPermuterCreate(&p, map, 4, &o));
  OK(bmmcPermuterExecute(p, in, out, w.stream));
  download(w, host_out, out, bytes);
  CHECK(memcmp(host_out, expected, bytes) == 0);
  memset(host_out, 0, bytes);
  upload(w, out, host_out, bytes);
  OK(bmmcPermute(map, in, out, 4, &o, w.stream));
  download(w, host_out, out, bytes);
  CHECK(memcmp(host_out, expected, bytes) == 0);
  OK(bmmcPermuterDestroy(p));
  OK(bmmcMapDestroy(map));
  buf_free(w, in);
  buf_free(w, out);
}

static void test_worked_examples(Where w) {
  /* Bit-reverse of 16 elements: out[bitrev(x)] = x, i.e. out[i] = bitrev(i). */
  static const uint32_t bit_reverse[16] = {0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15};
  /* A 4×4 row-major matrix transposed (transpose:2), and a 2×4 one (transpose:1) into 4×2. */
  static const uint32_t transpose_4x4[16] = {0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15};
  static const uint32_t transpose_2x4[8] = {0, 4, 1, 5, 2, 6, 3, 7};
  check_example(w, "bit-reverse", 4, bit_reverse);
  check_example(w, "transpose:2", 4, transpose_4x4);
  check_example(w, "transpose:1", 3, transpose_2x4);
}

/* ---- Reconstruction and in place over random maps ----------------------------------------------------- */

static void test_random_maps(Where w) {
  static const int sizes[5] = {1, 2, 4, 8, 16};
  int trial;
  for (trial = 0; trial < 60; ++trial) {
    int n = (int)(rnd() % 13), b = sizes[rnd() % 5], is_bpc = (int)(rnd() & 1);
    size_t bytes = ((size_t)1 << n) * (size_t)b;
    char spec[64];
    bmmcMap_t f = NULL, inv = NULL;
    bmmcPermuter_t p = NULL, back = NULL, inplace = NULL;
    bmmcPermuterOptions_t o = options_for(w, 0), oi = options_for(w, 1);
    unsigned char *h_in = malloc(bytes), *h_out = malloc(bytes), *h_back = malloc(bytes);
    void *in = buf_alloc(w, bytes), *out = buf_alloc(w, bytes), *mid = buf_alloc(w, bytes);
    int in_place = -1, got_b = 0, got_n = -1;
    bmmcBackend_t ran = BMMC_BACKEND_AUTO;
    size_t align = 0;
    if (w.backend == BMMC_BACKEND_CUDA) o.jit = oi.jit = trial % 3 != 0;
    sprintf(spec, "%s:%u^%llu", is_bpc ? "random-bpc" : "random-bmmc", (unsigned)trial,
            (unsigned long long)(rnd() & (((uint64_t)1 << n) - 1)));
    fill_random(h_in, bytes);
    upload(w, in, h_in, bytes);
    OK(bmmcMapCreateFromSpec(&f, spec, n));
    OK(bmmcMapInverse(&inv, f));
    OK(bmmcPermuterCreate(&p, f, b, &o));
    OK(bmmcPermuterCreate(&back, inv, b, &o));
    OK(bmmcPermuterGetShape(p, &got_n, &got_b, &in_place));
    CHECK(got_n == n && got_b == b && in_place == 0);
    OK(bmmcPermuterGetBackend(p, &ran));
    CHECK(ran == (w.backend == BMMC_BACKEND_CUDA ? BMMC_BACKEND_CUDA : BMMC_BACKEND_CPU));
    OK(bmmcPermuterGetAlignment(p, &align));
    CHECK(align >= (size_t)b && align % (size_t)b == 0);
    if (w.backend == BMMC_BACKEND_CUDA) { /* every third trial on the precompiled kernels */
      const char* name = NULL;
      OK(bmmcPermuterGetKernelName(p, &name));
      CHECK(name != NULL && strcmp(name, o.jit ? "cuda-jit" : "cuda-generic") == 0);
    }

    /* By f, then by its inverse: the input again. */
    OK(bmmcPermuterExecute(p, in, out, w.stream));
    download(w, h_out, out, bytes);
    CHECK(is_permuted(f, h_in, h_out, b));
    OK(bmmcPermuterExecute(back, out, mid, w.stream));
    download(w, h_back, mid, bytes);
    CHECK(memcmp(h_back, h_in, bytes) == 0);

    /* In place, three ways: an in-place permuter (both calls), and the one-shot call with in == out. */
    OK(bmmcPermuterCreate(&inplace, f, b, &oi));
    OK(bmmcPermuterGetShape(inplace, NULL, NULL, &in_place));
    CHECK(in_place == 1);
    upload(w, mid, h_in, bytes);
    OK(bmmcPermuterExecuteInPlace(inplace, mid, w.stream));
    download(w, h_back, mid, bytes);
    CHECK(memcmp(h_back, h_out, bytes) == 0);
    upload(w, mid, h_in, bytes);
    OK(bmmcPermuterExecute(inplace, mid, mid, w.stream));
    download(w, h_back, mid, bytes);
    CHECK(memcmp(h_back, h_out, bytes) == 0);
    upload(w, mid, h_out, bytes);
    OK(bmmcPermute(inv, mid, mid, b, &o, w.stream));
    download(w, h_back, mid, bytes);
    CHECK(memcmp(h_back, h_in, bytes) == 0);

    OK(bmmcPermuterDestroy(p));
    OK(bmmcPermuterDestroy(back));
    OK(bmmcPermuterDestroy(inplace));
    OK(bmmcMapDestroy(f));
    OK(bmmcMapDestroy(inv));
    buf_free(w, in);
    buf_free(w, out);
    buf_free(w, mid);
    free(h_in);
    free(h_out);
    free(h_back);
  }
}

/* ---- Index-bit swaps with a mask ---------------------------------------------------------------------- */

static uint64_t swap_bits(uint64_t x, const int* pairs, int num_pairs) {
  int k;
  for (k = 0; k < num_pairs; ++k) {
    uint64_t i = (x >> pairs[2 * k]) & 1, j = (x >> pairs[2 * k + 1]) & 1;
    if (i != j) x ^= ((uint64_t)1 << pairs[2 * k]) | ((uint64_t)1 << pairs[2 * k + 1]);
  }
  return x;
}

static void test_swap_index_bits(Where w) {
  /* README: swap:0,3 on n = 4 sends 1 to 8. */
  static const int one_pair[2] = {0, 3};
  static const int pairs[4] = {0, 5, 1, 3};
  uint32_t h[64], ref[64], got[64];
  bmmcPermuterOptions_t o = options_for(w, 0);
  void* d = buf_alloc(w, sizeof h);
  uint64_t x;
  int masked;
  for (x = 0; x < 16; ++x) h[x] = (uint32_t)x;
  upload(w, d, h, 16 * sizeof(uint32_t));
  OK(bmmcSwapIndexBits(d, 4, 4, one_pair, 1, 0, 0, &o, w.stream));
  download(w, got, d, 16 * sizeof(uint32_t));
  CHECK(got[8] == 1 && got[1] == 8 && got[0] == 0 && got[9] == 9);

  /* n = 6: swap 0 <-> 5 and 1 <-> 3, for every index, then only where bit 2 is 1 and bit 4 is 0. */
  for (masked = 0; masked < 2; ++masked) {
    uint64_t mask_bits = masked ? 0x14 : 0, mask_value = masked ? 0x04 : 0;
    for (x = 0; x < 64; ++x) h[x] = (uint32_t)(rnd() >> 7);
    for (x = 0; x < 64; ++x) ref[(x & mask_bits) == mask_value ? swap_bits(x, pairs, 2) : x] = h[x];
    upload(w, d, h, sizeof h);
    OK(bmmcSwapIndexBits(d, 6, 4, pairs, 2, mask_bits, mask_value, &o, w.stream));
    download(w, got, d, sizeof got);
    CHECK(memcmp(got, ref, sizeof ref) == 0);
  }
  buf_free(w, d);
}

/* ---- Queries on the CPU ------------------------------------------------------------------------------- */

static void test_cpu_queries(void) {
  bmmcMap_t map = NULL;
  bmmcPermuter_t p = NULL;
  bmmcPermuterOptions_t o;
  const char* name = NULL;
  size_t align = 0, temp = 1;
  OK(bmmcPermuterOptionsInit(&o));
  CHECK(o.backend == BMMC_BACKEND_AUTO && o.in_place == 0 && o.device == -1 && o.cpu_threads == 0 && o.jit == 1);
  o.backend = BMMC_BACKEND_CPU;
  o.in_place = 1;
  OK(bmmcMapCreateFromSpec(&map, "gray", 10));
  OK(bmmcPermuterCreate(&p, map, 8, &o));
  OK(bmmcMapDestroy(map)); /* the permuter keeps what it needs */
  OK(bmmcPermuterGetKernelName(p, &name));
  CHECK(name != NULL && strcmp(name, "cpu-inplace") == 0);
  OK(bmmcPermuterGetAlignment(p, &align));
  CHECK(align == 8);
  OK(bmmcPermuterGetTempBytes(p, &temp));
  CHECK(temp == 0);
  OK(bmmcPermuterDestroy(p));
}

/* ---- Threads: the last error is per thread; a permuter serves several threads at once ----------------- */

static pthread_barrier_t lockstep;

typedef struct {
  int role; /* 0, 1: the two lockstep threads (one fails while the other succeeds); 2: permutes freely */
  bmmcPermuter_t shared;
  int mismatches; /* counted here, not by CHECK: its counters are not shared between threads */
} ThreadJob;

/* Permutes 256 int32 by the shared bit-reverse permuter and checks the result and a clean last error. */
static int permute_shared(bmmcPermuter_t p) {
  uint32_t in[256], out[256];
  int i, bad = 0;
  for (i = 0; i < 256; ++i) in[i] = (uint32_t)i * 2654435761u;
  if (bmmcPermuterExecute(p, in, out, NULL) != BMMC_STATUS_SUCCESS || bmmcGetLastErrorMessage()[0] != '\0' ||
      bmmcGetLastErrorColumn() != 0)
    ++bad;
  for (i = 0; i < 256; ++i) /* out[bitrev8(i)] = in[i] */
    if (out[((uint64_t)i * 0x0202020202ULL & 0x010884422010ULL) % 1023] != in[i]) ++bad;
  return bad;
}

static int has_spec_error(void) {
  return strstr(bmmcGetLastErrorMessage(), "column 10") != NULL && bmmcGetLastErrorColumn() == 10;
}

static void* thread_body(void* arg) {
  ThreadJob* job = (ThreadJob*)arg;
  int round;
  for (round = 0; round < 200; ++round) {
    if (job->role == 2) {
      job->mismatches += permute_shared(job->shared);
    } else if ((round + job->role) % 2 == 0) {
      /* Fail, let the other thread succeed, and find this thread's error still here. */
      bmmcMap_t m = NULL;
      if (bmmcMapCreateFromSpec(&m, "rotate:1*bogus", 8) != BMMC_STATUS_INVALID_SPEC || !has_spec_error())
        ++job->mismatches;
      pthread_barrier_wait(&lockstep);
      pthread_barrier_wait(&lockstep);
      if (!has_spec_error()) ++job->mismatches;
    } else {
      pthread_barrier_wait(&lockstep);
      job->mismatches += permute_shared(job->shared);
      pthread_barrier_wait(&lockstep);
    }
  }
  return NULL;
}

static void test_threads(void) {
  enum { THREADS = 4 };
  pthread_t threads[THREADS];
  ThreadJob jobs[THREADS];
  bmmcMap_t map = NULL;
  bmmcPermuter_t p = NULL;
  bmmcPermuterOptions_t o;
  int t;
  OK(bmmcPermuterOptionsInit(&o));
  o.backend = BMMC_BACKEND_CPU;
  OK(bmmcMapCreateFromSpec(&map, "bit-reverse", 8));
  OK(bmmcPermuterCreate(&p, map, 4, &o));
  CHECK(pthread_barrier_init(&lockstep, NULL, 2) == 0);
  for (t = 0; t < THREADS; ++t) {
    jobs[t].role = t < 2 ? t : 2;
    jobs[t].shared = p;
    jobs[t].mismatches = 0;
    CHECK(pthread_create(&threads[t], NULL, thread_body, &jobs[t]) == 0);
  }
  for (t = 0; t < THREADS; ++t) {
    CHECK(pthread_join(threads[t], NULL) == 0);
    CHECK(jobs[t].mismatches == 0);
  }
  pthread_barrier_destroy(&lockstep);
  OK(bmmcPermuterDestroy(p));
  OK(bmmcMapDestroy(map));
}

/* `bmmc_capi_test`: the CPU cases (every build). `bmmc_capi_test cuda`: the CUDA cases, or exit code 77 (which
 * ctest reports as Skipped) where no GPU is usable. */
int main(int argc, char** argv) {
  int cuda = 0;
  OK(bmmcBackendIsAvailable(BMMC_BACKEND_CUDA, &cuda));
  if (argc > 1 && strcmp(argv[1], "cuda") == 0) {
#if BMMC_CAPI_TEST_CUDA
    Where gpu;
    cudaStream_t stream;
    if (!cuda) {
      printf("capi: no usable GPU: the CUDA cases are skipped\n");
      return 77;
    }
    CHECK(cudaStreamCreate(&stream) == cudaSuccess);
    gpu.backend = BMMC_BACKEND_CUDA;
    gpu.stream = (bmmcStream_t)stream;
    test_worked_examples(gpu);
    test_random_maps(gpu);
    test_swap_index_bits(gpu);
    test_cuda_pointers(gpu);
    CHECK(cudaStreamDestroy(stream) == cudaSuccess);
    printf("capi (cuda): %d checks, %d failed\n", checks, failures);
    return failures == 0 && checks > 500 ? 0 : 1;
#else
    fprintf(stderr, "capi: this build has no CUDA runtime\n");
    return 1;
#endif
  } else {
    Where cpu;
    cpu.backend = BMMC_BACKEND_CPU;
    cpu.stream = NULL;
#if !BMMC_CAPI_TEST_CUDA
    CHECK(!cuda); /* a build without CUDA must not claim it */
#endif
    test_version_and_statuses();
    test_maps();
    test_cpu_queries();
    test_worked_examples(cpu);
    test_random_maps(cpu);
    test_swap_index_bits(cpu);
    test_bad_inputs();
    test_threads();
    printf("capi (cpu): %d checks, %d failed\n", checks, failures);
    return failures == 0 && checks > 1000 ? 0 : 1;
  }
}
