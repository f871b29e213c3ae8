// The Python binding of the distributed front door (bmmc/distributed.hpp) over an ExchangeGroup whose collectives
// are Python callables — what bmmc.distributed runs torch.distributed's all_gather and all_to_all_single through.
// The permuters live in a small native table keyed by (Bmmc, element size, rank, ranks, options); none holds a
// Python object: each call hands its callables in, and the groups' collectives reach them through the calling
// thread's slot while the call runs.
#pragma once

#include <nanobind/nanobind.h>

namespace bmmc_python {

/// Adds _dist_permuter, _DistributedPermuter and _dist_refuse to the module (after Bmmc, which they take).
void bind_distributed(nanobind::module_& m);

}  // namespace bmmc_python
