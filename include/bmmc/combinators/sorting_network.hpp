// The paper's sorting network (§7.1), written with the combinators exactly as the paper writes it:
//   sort 0 = id                     sort n = parm 1 (sort (n-1)) ; merge n
//   merge 0 = id                    merge n = vcolumn n ; parm 2^(n-1) (merge (n-1))
//   vcolumn 0 = id                  vcolumn 1 = compare-swap       vcolumn n = parm 3 (vcolumn (n-1))
// sort n first sorts the even- and odd-indexed halves (parm 1), then merges them with a balanced periodic
// merger: a V-shaped column (vcolumn n compare-swaps i with 2^n−1−i) followed by the same merger on each half.
// sort n has n(n+1)/2 compare-swap columns (each leaf touches every pair once) and sorts ascending.
#pragma once

#include "bmmc/combinators/program.hpp"

namespace bmmc {

Program vcolumn(int n);
Program merge_network(int n);
Program sort_network(int n);

}  // namespace bmmc
