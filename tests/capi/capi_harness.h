/* The C API test's harness: check macros that count, deterministic random numbers, buffers on the CPU or a
 * GPU (through the CUDA runtime's C API), and the reference permutation computed from a map's rows, not by the
 * library. C99, like the cases that use it (capi_test.c, capi_bad_inputs.c). */
#ifndef BMMC_CAPI_HARNESS_H
#define BMMC_CAPI_HARNESS_H

#include <bmmc/bmmc.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

extern int checks;   /* every CHECK, OK and FAILS */
extern int failures; /* those that failed */

#define CHECK(cond)                                                                      \
  do {                                                                                   \
    ++checks;                                                                            \
    if (!(cond)) {                                                                       \
      ++failures;                                                                        \
      fprintf(stderr, "%s:%d: CHECK(%s) failed (last error: %s)\n", __FILE__, __LINE__, \
              #cond, bmmcGetLastErrorMessage());                                         \
    }                                                                                    \
  } while (0)

/* A call that must succeed. */
#define OK(call) CHECK((call) == BMMC_STATUS_SUCCESS)

/* A call that must fail with `status` and say why. */
#define FAILS(call, status)                                                                             \
  do {                                                                                                  \
    bmmcStatus_t got_ = (call);                                                                         \
    ++checks;                                                                                           \
    if (got_ != (status) || bmmcGetLastErrorMessage()[0] == '\0') {                                     \
      ++failures;                                                                                       \
      fprintf(stderr, "%s:%d: %s returned %s (expected %s), message \"%s\"\n", __FILE__, __LINE__, #call, \
              bmmcGetStatusString(got_), bmmcGetStatusString(status), bmmcGetLastErrorMessage());       \
    }                                                                                                   \
  } while (0)

/* splitmix64: the same sequence on every run. */
uint64_t rnd(void);

/* Where buffers live and calls run: host memory and the CPU, or device memory and a CUDA stream. */
typedef struct {
  bmmcBackend_t backend;
  bmmcStream_t stream;
} Where;

void* buf_alloc(Where w, size_t bytes); /* bytes + 64, so that offset views fit */
void buf_free(Where w, void* p);
void upload(Where w, void* dst, const void* src, size_t bytes);
void download(Where w, void* dst, const void* src, size_t bytes); /* waits for the stream first */
/* The default options with this backend and in-place flag. */
bmmcPermuterOptions_t options_for(Where w, int in_place);

/* y = A·x ^ c from the rows of A. */
uint64_t apply_rows(int n, const uint64_t* rows, uint64_t c, uint64_t x);
/* Is the n×n matrix with these rows invertible over F2? (Gaussian elimination.) */
int invertible(int n, const uint64_t* rows);
void fill_random(unsigned char* p, size_t bytes);
/* Is out[A·x ^ c] = in[x] for every x (elements of b bytes), A and c read back from the map? */
int is_permuted(bmmcMap_t map, const unsigned char* in, const unsigned char* out, int b);
/* Are all `bytes` bytes at p equal to v? */
int all_bytes(const unsigned char* p, size_t bytes, unsigned char v);

/* The cases of capi_bad_inputs.c. */
void test_bad_inputs(void);
#if BMMC_CAPI_TEST_CUDA
void test_cuda_pointers(Where w);
#endif

#endif /* BMMC_CAPI_HARNESS_H */
