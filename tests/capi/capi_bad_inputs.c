/* The C API's answers to bad input: each call returns its status and a message and writes nothing. */
#include <stdlib.h>
#include <string.h>

#include "capi_harness.h"

void test_bad_inputs(void) {
  enum { N = 6, B = 4, BYTES = (1 << N) * B };
  static const uint64_t singular[3] = {0x3, 0x3, 0x4};
  static const int overlapping_pairs[4] = {0, 1, 1, 2};
  static const int in_mask_pairs[2] = {0, 1};
  static const int pair_above_n[2] = {0, N};
  unsigned char in[2 * BYTES + 64], out[2 * BYTES + 64], text[8];
  bmmcMap_t map = NULL, other = NULL, untouched_map = (bmmcMap_t)text;
  bmmcPermuter_t p = NULL, pi = NULL, untouched_p = (bmmcPermuter_t)text;
  bmmcPermuterOptions_t o, bad;
  size_t length = 12345;
  int cuda = 0, n = -7;
  uint64_t y = 77;

  OK(bmmcPermuterOptionsInit(&o));
  o.backend = BMMC_BACKEND_CPU;
  fill_random(in, sizeof in);
  memset(out, 0xAB, sizeof out);
  OK(bmmcMapCreateFromSpec(&map, "random-bmmc:7", N));
  OK(bmmcMapCreateFromSpec(&other, "bit-reverse", N + 1));
  OK(bmmcPermuterCreate(&p, map, B, &o));
  o.in_place = 1;
  OK(bmmcPermuterCreate(&pi, map, B, &o));
  o.in_place = 0;

  /* Null handles and null result pointers. */
  FAILS(bmmcPermuterCreate(&untouched_p, NULL, B, &o), BMMC_STATUS_INVALID_ARGUMENT);
  CHECK(untouched_p == (bmmcPermuter_t)text);
  FAILS(bmmcPermuterCreate(NULL, map, B, &o), BMMC_STATUS_INVALID_ARGUMENT);
  FAILS(bmmcPermuterExecute(NULL, in, out, NULL), BMMC_STATUS_INVALID_ARGUMENT);
  FAILS(bmmcPermuterExecuteInPlace(NULL, out, NULL), BMMC_STATUS_INVALID_ARGUMENT);
  FAILS(bmmcPermute(NULL, in, out, B, &o, NULL), BMMC_STATUS_INVALID_ARGUMENT);
  FAILS(bmmcMapGetN(NULL, &n), BMMC_STATUS_INVALID_ARGUMENT);
  FAILS(bmmcMapGetN(map, NULL), BMMC_STATUS_INVALID_ARGUMENT);
  FAILS(bmmcMapInverse(NULL, map), BMMC_STATUS_INVALID_ARGUMENT);
  FAILS(bmmcMapCompose(&untouched_map, map, NULL), BMMC_STATUS_INVALID_ARGUMENT);
  FAILS(bmmcPermuterGetKernelName(p, NULL), BMMC_STATUS_INVALID_ARGUMENT);
  FAILS(bmmcBackendIsAvailable(BMMC_BACKEND_CPU, NULL), BMMC_STATUS_INVALID_ARGUMENT);
  FAILS(bmmcPermuterOptionsInit(NULL), BMMC_STATUS_INVALID_ARGUMENT);
  CHECK(n == -7);
  /* One kind of handle passed as the other. */
  FAILS(bmmcMapGetN((bmmcMap_t)p, &n), BMMC_STATUS_INVALID_ARGUMENT);
  FAILS(bmmcPermuterExecute((bmmcPermuter_t)map, in, out, NULL), BMMC_STATUS_INVALID_ARGUMENT);
  FAILS(bmmcMapDestroy((bmmcMap_t)p), BMMC_STATUS_INVALID_ARGUMENT);
  CHECK(n == -7);

  /* Buffers: null, overlapping, unaligned, in == out out of place, in != out in place. */
  FAILS(bmmcPermuterExecute(p, NULL, out, NULL), BMMC_STATUS_INVALID_ARGUMENT);
  FAILS(bmmcPermuterExecute(p, in, NULL, NULL), BMMC_STATUS_INVALID_ARGUMENT);
  FAILS(bmmcPermuterExecute(p, out, out + B, NULL), BMMC_STATUS_INVALID_ARGUMENT);
  FAILS(bmmcPermuterExecute(p, out + BYTES - B, out, NULL), BMMC_STATUS_INVALID_ARGUMENT);
  FAILS(bmmcPermuterExecute(p, in, out + 1, NULL), BMMC_STATUS_INVALID_ARGUMENT);
  FAILS(bmmcPermuterExecute(p, in + 2, out, NULL), BMMC_STATUS_INVALID_ARGUMENT);
  FAILS(bmmcPermuterExecute(p, out, out, NULL), BMMC_STATUS_INVALID_ARGUMENT);
  FAILS(bmmcPermuterExecute(pi, in, out, NULL), BMMC_STATUS_INVALID_ARGUMENT);
  FAILS(bmmcPermuterExecuteInPlace(p, out, NULL), BMMC_STATUS_INVALID_ARGUMENT);
  FAILS(bmmcPermuterExecuteInPlace(pi, NULL, NULL), BMMC_STATUS_INVALID_ARGUMENT);
  FAILS(bmmcPermuterExecuteInPlace(pi, out + 2, NULL), BMMC_STATUS_INVALID_ARGUMENT);
  FAILS(bmmcPermute(map, out, out + B, B, &o, NULL), BMMC_STATUS_INVALID_ARGUMENT);
  FAILS(bmmcPermute(map, in, out + 1, B, &o, NULL), BMMC_STATUS_INVALID_ARGUMENT);
  FAILS(bmmcPermute(map, NULL, out, B, &o, NULL), BMMC_STATUS_INVALID_ARGUMENT);
  CHECK(all_bytes(out, sizeof out, 0xAB));

  /* Bad specs: the status, the column, and the message naming it. */
  FAILS(bmmcMapCreateFromSpec(&untouched_map, "rotate;1", 4), BMMC_STATUS_INVALID_SPEC);
  CHECK(bmmcGetLastErrorColumn() == 7);
  CHECK(strstr(bmmcGetLastErrorMessage(), "column 7") != NULL);
  FAILS(bmmcMapCreateFromSpec(&untouched_map, "bit-reverse*nonsense", 4), BMMC_STATUS_INVALID_SPEC);
  CHECK(bmmcGetLastErrorColumn() == 13);
  CHECK(strstr(bmmcGetLastErrorMessage(), "column 13") != NULL);
  FAILS(bmmcMapCreateFromSpec(&untouched_map, "bits:1,0", 3), BMMC_STATUS_INVALID_SPEC);
  FAILS(bmmcMapCreateFromSpec(&untouched_map, NULL, 4), BMMC_STATUS_INVALID_ARGUMENT);
  CHECK(bmmcGetLastErrorColumn() == 0); /* cleared: not a spec error */
  FAILS(bmmcMapCreateFromSpec(&untouched_map, "identity", -2), BMMC_STATUS_INVALID_ARGUMENT);
  /* Singular matrices, bits at or above n, n out of range. */
  FAILS(bmmcMapCreateFromRows(&untouched_map, 3, singular, 0), BMMC_STATUS_INVALID_ARGUMENT);
  FAILS(bmmcMapCreateFromRows(&untouched_map, 2, singular, 0x4), BMMC_STATUS_INVALID_ARGUMENT);
  FAILS(bmmcMapCreateFromRows(&untouched_map, 1, singular, 0), BMMC_STATUS_INVALID_ARGUMENT);
  FAILS(bmmcMapCreateFromRows(&untouched_map, 65, singular, 0), BMMC_STATUS_INVALID_ARGUMENT);
  FAILS(bmmcMapCreateFromRows(&untouched_map, 2, NULL, 0), BMMC_STATUS_INVALID_ARGUMENT);
  FAILS(bmmcMapCompose(&untouched_map, map, other), BMMC_STATUS_INVALID_ARGUMENT);
  CHECK(untouched_map == (bmmcMap_t)text);
  FAILS(bmmcMapApply(map, (uint64_t)1 << N, &y), BMMC_STATUS_INVALID_ARGUMENT);
  CHECK(y == 77);

  /* Element sizes: unsupported ones are NOT_SUPPORTED, non-positive ones invalid. */
  FAILS(bmmcPermuterCreate(&untouched_p, map, 3, &o), BMMC_STATUS_NOT_SUPPORTED);
  FAILS(bmmcPermuterCreate(&untouched_p, map, 32, &o), BMMC_STATUS_NOT_SUPPORTED);
  FAILS(bmmcPermuterCreate(&untouched_p, map, 0, &o), BMMC_STATUS_INVALID_ARGUMENT);
  FAILS(bmmcPermuterCreate(&untouched_p, map, -4, &o), BMMC_STATUS_INVALID_ARGUMENT);
  CHECK(untouched_p == (bmmcPermuter_t)text);
  FAILS(bmmcPermute(map, in, out, 12, &o, NULL), BMMC_STATUS_NOT_SUPPORTED);
  FAILS(bmmcSwapIndexBits(out, N, 24, in_mask_pairs, 1, 0, 0, &o, NULL), BMMC_STATUS_NOT_SUPPORTED);

  /* Options: an enum value outside bmmcBackend_t, negative device or threads, CUDA where it cannot run. */
  bad = o;
  bad.backend = (bmmcBackend_t)7;
  FAILS(bmmcPermuterCreate(&untouched_p, map, B, &bad), BMMC_STATUS_INVALID_ARGUMENT);
  FAILS(bmmcBackendIsAvailable((bmmcBackend_t)7, &cuda), BMMC_STATUS_INVALID_ARGUMENT);
  bad = o;
  bad.cpu_threads = -1;
  FAILS(bmmcPermute(map, in, out, B, &bad, NULL), BMMC_STATUS_INVALID_ARGUMENT);
  bad = o;
  bad.device = -2;
  FAILS(bmmcPermuterCreate(&untouched_p, map, B, &bad), BMMC_STATUS_INVALID_ARGUMENT);
  /* A struct_size the library does not know (a header of another version, or options never initialised) is
   * refused by every call that takes options, naming the size; an initialiser of another size writes nothing. */
  {
    const bmmcPermuterOptions_t from_macro = BMMC_PERMUTER_OPTIONS_INIT;
    bmmcPermuterOptions_t sized;
    CHECK(o.struct_size == sizeof(bmmcPermuterOptions_t));
    CHECK(from_macro.struct_size == sizeof(bmmcPermuterOptions_t) && from_macro.backend == BMMC_BACKEND_AUTO &&
          from_macro.in_place == 0 && from_macro.device == -1 && from_macro.cpu_threads == 0 && from_macro.jit == 1);
    OK(bmmcPermuterOptionsInitSized(&sized, sizeof sized));
    CHECK(sized.struct_size == from_macro.struct_size && sized.backend == from_macro.backend &&
          sized.in_place == from_macro.in_place && sized.device == from_macro.device &&
          sized.cpu_threads == from_macro.cpu_threads && sized.jit == from_macro.jit);
    memset(&sized, 0x5A, sizeof sized);
    FAILS(bmmcPermuterOptionsInitSized(&sized, sizeof sized - sizeof(int)), BMMC_STATUS_INVALID_ARGUMENT);
    CHECK(strstr(bmmcGetLastErrorMessage(), "struct_size") != NULL);
    CHECK(sized.in_place == 0x5A5A5A5A);
    FAILS(bmmcPermuterOptionsInitSized(&sized, sizeof sized + 8), BMMC_STATUS_INVALID_ARGUMENT);
    bad = o;
    bad.struct_size = sizeof bad + 8;
    FAILS(bmmcPermuterCreate(&untouched_p, map, B, &bad), BMMC_STATUS_INVALID_ARGUMENT);
    CHECK(strstr(bmmcGetLastErrorMessage(), "options->struct_size") != NULL);
    CHECK(untouched_p == (bmmcPermuter_t)text);
    bad.struct_size = 0;
    FAILS(bmmcPermute(map, in, out, B, &bad, NULL), BMMC_STATUS_INVALID_ARGUMENT);
    CHECK(strstr(bmmcGetLastErrorMessage(), "options->struct_size = 0") != NULL);
  }
  OK(bmmcBackendIsAvailable(BMMC_BACKEND_CUDA, &cuda));
  if (!cuda) {
    bad = o;
    bad.backend = BMMC_BACKEND_CUDA;
    FAILS(bmmcPermuterCreate(&untouched_p, map, B, &bad), BMMC_STATUS_NOT_SUPPORTED);
    FAILS(bmmcPermute(map, in, out, B, &bad, NULL), BMMC_STATUS_NOT_SUPPORTED);
  }
  CHECK(untouched_p == (bmmcPermuter_t)text);

  /* Index-bit swaps: pairs sharing a bit, a bit at n, a mask on a swapped bit, a mask value without bits. */
  FAILS(bmmcSwapIndexBits(out, N, B, overlapping_pairs, 2, 0, 0, &o, NULL), BMMC_STATUS_INVALID_ARGUMENT);
  FAILS(bmmcSwapIndexBits(out, N, B, pair_above_n, 1, 0, 0, &o, NULL), BMMC_STATUS_INVALID_ARGUMENT);
  FAILS(bmmcSwapIndexBits(out, N, B, in_mask_pairs, 1, 0x2, 0x2, &o, NULL), BMMC_STATUS_INVALID_ARGUMENT);
  FAILS(bmmcSwapIndexBits(out, N, B, in_mask_pairs, 1, 0, 0x4, &o, NULL), BMMC_STATUS_INVALID_ARGUMENT);
  FAILS(bmmcSwapIndexBits(out, N, B, NULL, 1, 0, 0, &o, NULL), BMMC_STATUS_INVALID_ARGUMENT);
  FAILS(bmmcSwapIndexBits(out, N, B, in_mask_pairs, -1, 0, 0, &o, NULL), BMMC_STATUS_INVALID_ARGUMENT);
  FAILS(bmmcSwapIndexBits(NULL, N, B, in_mask_pairs, 1, 0, 0, &o, NULL), BMMC_STATUS_INVALID_ARGUMENT);
  FAILS(bmmcSwapIndexBits(out + 1, N, B, in_mask_pairs, 1, 0, 0, &o, NULL), BMMC_STATUS_INVALID_ARGUMENT);
  CHECK(all_bytes(out, sizeof out, 0xAB));

  /* Text into a buffer too small: the length needed comes back, the buffer stays as it was. */
  memset(text, 'z', sizeof text);
  FAILS(bmmcMapPrint(map, (char*)text, sizeof text, &length), BMMC_STATUS_INSUFFICIENT_BUFFER);
  CHECK(length > sizeof text && all_bytes(text, sizeof text, 'z'));
  FAILS(bmmcMapPrint(map, NULL, 4, &length), BMMC_STATUS_INVALID_ARGUMENT);

  /* A call that succeeds clears the last error. */
  FAILS(bmmcPermuterCreate(&untouched_p, map, 3, &o), BMMC_STATUS_NOT_SUPPORTED);
  OK(bmmcMapGetN(map, &n));
  CHECK(bmmcGetLastErrorMessage()[0] == '\0' && bmmcGetLastErrorColumn() == 0);

  OK(bmmcPermuterDestroy(p));
  OK(bmmcPermuterDestroy(pi));
  OK(bmmcPermuterDestroy(NULL));
  OK(bmmcMapDestroy(map));
  OK(bmmcMapDestroy(other));
}

#if BMMC_CAPI_TEST_CUDA
/* ---- CUDA: pointers of the wrong kind, and offset views ----------------------------------------------- */

void test_cuda_pointers(Where w) {
  enum { N = 8, B = 4, BYTES = (1 << N) * B };
  unsigned char h_in[BYTES], h_out[BYTES];
  char *d_in = buf_alloc(w, BYTES), *d_out = buf_alloc(w, BYTES);
  bmmcMap_t map = NULL;
  bmmcPermuter_t p = NULL;
  bmmcPermuterOptions_t o = options_for(w, 0), on_cpu, automatic;
  size_t align = 0;
  OK(bmmcPermuterOptionsInit(&automatic));
  on_cpu = automatic;
  on_cpu.backend = BMMC_BACKEND_CPU;
  fill_random(h_in, BYTES);
  memset(h_out, 0xAB, BYTES);
  upload(w, d_in, h_in, BYTES);
  OK(bmmcMapCreateFromSpec(&map, "random-bmmc:11", N));
  OK(bmmcPermuterCreate(&p, map, B, &o));
  FAILS(bmmcPermuterExecute(p, h_in, h_out, w.stream), BMMC_STATUS_INVALID_ARGUMENT); /* host memory on CUDA */
  FAILS(bmmcPermute(map, d_in, d_out, B, &on_cpu, NULL), BMMC_STATUS_INVALID_ARGUMENT); /* device memory on the CPU */
  FAILS(bmmcPermute(map, d_in, h_out, B, &automatic, w.stream), BMMC_STATUS_INVALID_ARGUMENT); /* one of each */
  CHECK(all_bytes(h_out, BYTES, 0xAB));
  /* A permuter needs its alignment; the one-shot call narrows its accesses to what offset pointers allow. */
  OK(bmmcPermuterGetAlignment(p, &align));
  if (align > B) FAILS(bmmcPermuterExecute(p, d_in + B, d_out, w.stream), BMMC_STATUS_INVALID_ARGUMENT);
  upload(w, d_in + B, h_in, BYTES);
  OK(bmmcPermute(map, d_in + B, d_out + B, B, &automatic, w.stream));
  download(w, h_out, d_out + B, BYTES);
  CHECK(is_permuted(map, h_in, h_out, B));
  OK(bmmcPermuterDestroy(p));
  OK(bmmcMapDestroy(map));
  buf_free(w, d_in);
  buf_free(w, d_out);
}
#endif
