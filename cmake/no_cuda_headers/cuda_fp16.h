// Stub: cmake/no_cuda_headers/ is the first include directory of the layers core, plan, codegen, cpu and
// combinators (CMakeLists.txt, bmmc_add_layer NO_CUDA_HEADERS), so including <cuda_fp16.h> there stops the build.
#error "<cuda_fp16.h> included below the cuda/ layer: CUDA headers belong in the cuda/ layer (see CONTRIBUTING.md)"
