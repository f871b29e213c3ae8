/* bmmc.h: the C API of bmmc, for callers in C and in any language with a C foreign-function interface
 * (Futhark, Julia, Rust, Fortran, ...). It permutes arrays of 2^n elements by a BMMC, out[A·x ⊕ c] = in[x],
 * on the CPU or on CUDA, through the same front door as the C++ API (bmmc/permute.hpp), in the convention of
 * NCCL, cuTENSOR and cuStateVec:
 *  - Every function returns a bmmcStatus_t and hands results back through pointer arguments. No C++ exception
 *    ever crosses this interface: each failure becomes a status, and bmmcGetLastErrorMessage() gives the
 *    calling thread's text of it (what was wrong and what was expected). A failing call writes no output
 *    argument (but the length bmmcMapPrint reports) and no array element: every argument is checked before
 *    anything is written.
 *  - Handles are opaque: bmmcMap_t (a BMMC, y = A·x ⊕ c) and bmmcPermuter_t (a map prepared for one element
 *    size and backend). The caller owns each handle it gets from a Create/Compose/Inverse call and releases it
 *    with the matching Destroy; a permuter keeps what it needs of its map, so the map may be destroyed first.
 *    Destroying NULL does nothing and succeeds. A NULL handle, or one of the other kind, is
 *    BMMC_STATUS_INVALID_ARGUMENT; using a destroyed handle is undefined behaviour, as with free().
 *  - Threads: handles are immutable after creation; any number of threads may query and execute the same
 *    handle at once, as long as none destroys it meanwhile. The last-error text is per thread.
 *  - Streams: on CUDA, calls take device pointers and are enqueued on the caller's stream (bmmcStream_t is
 *    cudaStream_t; NULL is the legacy default stream), with no hidden device-wide synchronisation; on the CPU
 *    they take host pointers and run to completion.
 * Conventions (docs/DESIGN.md §1): index bit 0 is the least significant; row i of A is output bit i and bit j
 * of row i is a_ij; compose(f, g) applies g first. Elements are 1, 2, 4, 8 or 16 bytes. This header needs
 * only a C99 compiler: no C++ or CUDA header is included.
 */
#ifndef BMMC_BMMC_H
#define BMMC_BMMC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The version of this header; bmmcGetVersion() gives the library's. */
#define BMMC_VERSION_MAJOR 0
#define BMMC_VERSION_MINOR 1
#define BMMC_VERSION_PATCH 0
/** MAJOR * 10000 + MINOR * 100 + PATCH. */
#define BMMC_VERSION (BMMC_VERSION_MAJOR * 10000 + BMMC_VERSION_MINOR * 100 + BMMC_VERSION_PATCH)

/** What a call did. */
typedef enum {
  BMMC_STATUS_SUCCESS = 0,
  BMMC_STATUS_INVALID_ARGUMENT = 1, /**< a null, overlapping or misaligned pointer, a bad size or option, a singular matrix */
  BMMC_STATUS_INVALID_SPEC = 2,     /**< a spec that does not parse or evaluate; bmmcGetLastErrorColumn() says where */
  BMMC_STATUS_NOT_SUPPORTED = 3,    /**< a valid request this build or machine cannot serve (element size, backend) */
  BMMC_STATUS_OUT_OF_MEMORY = 4,    /**< host or device memory ran out */
  BMMC_STATUS_CUDA_ERROR = 5,       /**< the CUDA runtime failed */
  BMMC_STATUS_NVRTC_ERROR = 6,      /**< run-time compilation of a kernel failed (the message holds the log) */
  BMMC_STATUS_INSUFFICIENT_BUFFER = 7, /**< a caller's text buffer is too small; the length needed was returned */
  BMMC_STATUS_INTERNAL_ERROR = 8    /**< anything else (a bug: please report the message) */
} bmmcStatus_t;

/** Where a permutation runs. AUTO: CUDA when this build has it and a GPU is usable, else the CPU; the
 * one-shot calls resolve AUTO by where their pointers live. */
typedef enum { BMMC_BACKEND_AUTO = 0, BMMC_BACKEND_CPU = 1, BMMC_BACKEND_CUDA = 2 } bmmcBackend_t;

/** A CUDA stream (cudaStream_t) without the CUDA header. */
typedef struct CUstream_st* bmmcStream_t;

/** A BMMC y = A·x ⊕ c on n index bits (opaque). */
typedef struct bmmcMap_st* bmmcMap_t;
/** A map prepared for one element size, backend and in-place flag (opaque). */
typedef struct bmmcPermuter_st* bmmcPermuter_t;

/** Options of a permuter and of the one-shot calls; fill with bmmcPermuterOptionsInit (or initialise with
 * BMMC_PERMUTER_OPTIONS_INIT) before setting fields. struct_size comes first so that the struct may grow: the
 * library reads the fields of the size the caller was compiled with and refuses a size it does not know
 * (BMMC_STATUS_INVALID_ARGUMENT, the message naming both sizes). */
typedef struct {
  size_t struct_size;    /**< sizeof(bmmcPermuterOptions_t) of the caller's header: set by the initialisers */
  bmmcBackend_t backend; /**< default BMMC_BACKEND_AUTO */
  int in_place;          /**< nonzero: permute one buffer in place (no output buffer, no scratch); default 0 */
  int device;            /**< CUDA device ordinal; -1 (default): the calling thread's current device */
  int cpu_threads;       /**< CPU threads; 0 (default): as many as the array size is worth */
  int jit;               /**< CUDA: nonzero (default) JIT-specialised kernels, 0 the precompiled generic ones */
} bmmcPermuterOptions_t;

/** The default options as an initialiser: bmmcPermuterOptions_t o = BMMC_PERMUTER_OPTIONS_INIT; */
#define BMMC_PERMUTER_OPTIONS_INIT {sizeof(bmmcPermuterOptions_t), BMMC_BACKEND_AUTO, 0, -1, 0, 1}

/* ---- Version, status and errors ------------------------------------------------------------------------ */

/** The library's BMMC_VERSION (compare with the header's to catch a mismatched library). */
int bmmcGetVersion(void);
/** A constant name of `status`, e.g. "BMMC_STATUS_INVALID_SPEC" ("BMMC_STATUS_UNKNOWN" outside the enum). */
const char* bmmcGetStatusString(bmmcStatus_t status);
/** The message of the calling thread's last call: what was wrong and what was expected when it failed, ""
 * when it succeeded (the four getters of this section neither set nor clear it). Valid until the thread's
 * next call; never NULL. */
const char* bmmcGetLastErrorMessage(void);
/** The 1-based column of the offending character when the last call failed with BMMC_STATUS_INVALID_SPEC,
 * else 0. */
int bmmcGetLastErrorColumn(void);

/* ---- Backends ------------------------------------------------------------------------------------------- */

/** *available = 1 when `backend` can run here (AUTO and CPU always; CUDA needs a CUDA build and a GPU), else 0. */
bmmcStatus_t bmmcBackendIsAvailable(bmmcBackend_t backend, int* available);
/** Sets every field of *options to its default and options->struct_size to struct_size, the size of the
 * caller's bmmcPermuterOptions_t (a size this library does not know: BMMC_STATUS_INVALID_ARGUMENT, nothing
 * written). For callers from other languages; C and C++ call bmmcPermuterOptionsInit. */
bmmcStatus_t bmmcPermuterOptionsInitSized(bmmcPermuterOptions_t* options, size_t struct_size);
/** Sets every field of *options to its default, struct_size to this header's sizeof(bmmcPermuterOptions_t). */
static inline bmmcStatus_t bmmcPermuterOptionsInit(bmmcPermuterOptions_t* options) {
  return bmmcPermuterOptionsInitSized(options, sizeof(bmmcPermuterOptions_t));
}

/* ---- Maps ----------------------------------------------------------------------------------------------- */

/** A map from the spec language (README: "The spec language"), e.g. "rotate:1*bit-reverse^0b11". `n` gives
 * the index bits where the spec does not define them; -1 when it does (bits:, axes:, matrix:). */
bmmcStatus_t bmmcMapCreateFromSpec(bmmcMap_t* map, const char* spec, int n);
/** A map from its matrix: rows[i] (i < n) holds row i, bit j = a_ij; `c` the complement. A must be invertible,
 * 0 <= n <= 64, no row or c bit at or above n. `rows` may be NULL when n = 0. */
bmmcStatus_t bmmcMapCreateFromRows(bmmcMap_t* map, int n, const uint64_t* rows, uint64_t c);
/** *result = f ∘ g (g applied first); f and g must have the same n. */
bmmcStatus_t bmmcMapCompose(bmmcMap_t* result, bmmcMap_t f, bmmcMap_t g);
/** *result = the inverse of f. */
bmmcStatus_t bmmcMapInverse(bmmcMap_t* result, bmmcMap_t f);
/** Releases a map (NULL: nothing). */
bmmcStatus_t bmmcMapDestroy(bmmcMap_t map);
/** *n = the number of index bits. */
bmmcStatus_t bmmcMapGetN(bmmcMap_t map, int* n);
/** Copies the n rows of A into rows[0..n) and c into *c (either may be NULL to skip it). */
bmmcStatus_t bmmcMapGetRows(bmmcMap_t map, uint64_t* rows, uint64_t* c);
/** *y = A·x ⊕ c; x must be below 2^n. */
bmmcStatus_t bmmcMapApply(bmmcMap_t map, uint64_t x, uint64_t* y);
/** Writes the matrix (row 0 first, '1' or '.') and "c = 0x…" as NUL-terminated text into buffer[0..size).
 * *length (if not NULL) gets the text's length without the NUL; with buffer NULL and size 0 the call only
 * reports the length. A buffer too small: BMMC_STATUS_INSUFFICIENT_BUFFER, buffer untouched. */
bmmcStatus_t bmmcMapPrint(bmmcMap_t map, char* buffer, size_t size, size_t* length);

/* ---- Permuters ------------------------------------------------------------------------------------------ */

/** Plans `map` for elements of `elem_bytes` bytes on the options' backend and prepares it (CPU loop tables,
 * or JIT kernels for the device). options NULL: the defaults. */
bmmcStatus_t bmmcPermuterCreate(bmmcPermuter_t* permuter, bmmcMap_t map, int elem_bytes,
                                const bmmcPermuterOptions_t* options);
/** Releases a permuter (NULL: nothing). Stream-ordered work already enqueued is not affected. */
bmmcStatus_t bmmcPermuterDestroy(bmmcPermuter_t permuter);
/** out[A·x ⊕ c] = in[x] for the 2^n elements at `in` (disjoint buffers, aligned to the element size): host
 * pointers on the CPU (runs to completion), device pointers on CUDA (enqueued on `stream`). An in-place
 * permuter takes in == out here. */
bmmcStatus_t bmmcPermuterExecute(bmmcPermuter_t permuter, const void* in, void* out, bmmcStream_t stream);
/** Permutes the 2^n elements at `data` in place; only for permuters created with options.in_place. */
bmmcStatus_t bmmcPermuterExecuteInPlace(bmmcPermuter_t permuter, void* data, bmmcStream_t stream);
/** *backend = where it runs (CPU or CUDA, never AUTO). */
bmmcStatus_t bmmcPermuterGetBackend(bmmcPermuter_t permuter, bmmcBackend_t* backend);
/** *name = what runs (e.g. "cuda-jit", "cpu-inplace"): constant text owned by the permuter. */
bmmcStatus_t bmmcPermuterGetKernelName(bmmcPermuter_t permuter, const char** name);
/** *bytes = the scratch a call allocates for itself (stream-ordered on CUDA): 0 for one-pass plans and in place. */
bmmcStatus_t bmmcPermuterGetTempBytes(bmmcPermuter_t permuter, size_t* bytes);
/** *bytes = the alignment in bytes the buffers need (the widest lane access on CUDA, the element size on the CPU). */
bmmcStatus_t bmmcPermuterGetAlignment(bmmcPermuter_t permuter, size_t* bytes);
/** *n = the number of index bits, *elem_bytes = the element size, *in_place = 1 when it permutes in place
 * (any of them may be NULL). */
bmmcStatus_t bmmcPermuterGetShape(bmmcPermuter_t permuter, int* n, int* elem_bytes, int* in_place);

/* ---- One-shot calls (a bounded cache of permuters serves repeated ones) -------------------------------- */

/** out[A·x ⊕ c] = in[x]; in == out permutes in place. With BMMC_BACKEND_AUTO the backend is where `in`
 * lives. options NULL: the defaults (options->in_place is ignored: in == out decides). */
bmmcStatus_t bmmcPermute(bmmcMap_t map, const void* in, void* out, int elem_bytes,
                         const bmmcPermuterOptions_t* options, bmmcStream_t stream);
/** cuStateVec's custatevecSwapIndexBits: swaps index bits bit_pairs[2i] <-> bit_pairs[2i+1] (i < num_pairs,
 * all bits distinct) of the 2^n elements at `data`, in place, for the indices x with (x & mask_bits) ==
 * mask_value (mask_bits 0: every index; the mask may not name a swapped bit). */
bmmcStatus_t bmmcSwapIndexBits(void* data, int n, int elem_bytes, const int* bit_pairs, int num_pairs,
                               uint64_t mask_bits, uint64_t mask_value, const bmmcPermuterOptions_t* options,
                               bmmcStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* BMMC_BMMC_H */
