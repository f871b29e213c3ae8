/* Uses the installed C API from C: bit-reverse of 16 int32 elements on the CPU, out[i] = bitrev(i). */
#include <bmmc/bmmc.h>

#include <stdint.h>
#include <stdio.h>

int main(void) {
  static const uint32_t expected[16] = {0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15};
  uint32_t in[16], out[16];
  bmmcMap_t f = NULL;
  bmmcPermuterOptions_t o;
  const bmmcPermuterOptions_t defaults = BMMC_PERMUTER_OPTIONS_INIT; /* struct_size first: the ABI may grow */
  int i;
  for (i = 0; i < 16; ++i) in[i] = (uint32_t)i;
  if (bmmcPermuterOptionsInit(&o) != BMMC_STATUS_SUCCESS || o.struct_size != defaults.struct_size) return 1;
  o.backend = BMMC_BACKEND_CPU;
  if (bmmcMapCreateFromSpec(&f, "bit-reverse", 4) != BMMC_STATUS_SUCCESS ||
      bmmcPermute(f, in, out, 4, &o, NULL) != BMMC_STATUS_SUCCESS) {
    fprintf(stderr, "bmmc C consumer: %s\n", bmmcGetLastErrorMessage());
    return 1;
  }
  bmmcMapDestroy(f);
  for (i = 0; i < 16; ++i)
    if (out[i] != expected[i]) {
      fprintf(stderr, "bmmc C consumer: out[%d] = %u, expected %u\n", i, (unsigned)out[i], (unsigned)expected[i]);
      return 1;
    }
  printf("bmmc C consumer: bit-reverse of 16 elements through bmmc/bmmc.h\n");
  return 0;
}
