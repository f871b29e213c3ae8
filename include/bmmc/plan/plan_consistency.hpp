// Whether a plan handed in by a caller moves every element where its permutation sends it — proved by linear
// algebra on the plan's tables, so it is cheap at any n (O(n²) bit operations a pass), unlike the plan checker
// (plan_check.hpp), which executes a plan exhaustively and also proves coalescing and bank freedom.
//
// Why. Plans are plain structs that callers may build or edit; the executors (CPU tables, generated kernels,
// in-place and distributed engines) trust them. A block image copied from another block, a duplicate row or a
// pass list that composes to another map used to run: outputs left unwritten or silently wrong. Every executor
// that accepts a plan calls these first and refuses what fails, naming the first inconsistency.
//
// The tile pass, in the coordinates every executor uses (docs/DESIGN.md §4): block b starts at x0(b) (b's bits
// deposited at W) in the input and z(b) = c ⊕ Σ b_i·images[i] in the output; tile element with natural index
// N = (position p: s bits, row ρ: m bits) is input x0 ⊕ p ⊕ R·ρ; phase 2 lane/element τ of row σ reads the
// shared address G·(σ, τ), whose natural index is its coordinates in the store basis Λ, and writes output
// z ⊕ τ ⊕ U·σ. Both sides are affine in (b, N), so the pass is correct exactly when
//   - the input side is a bijection: e_0 … e_{s−1}, R and e_W form a basis of F2^n;
//   - Λ and the load map (σ, τ) ↦ N are bijections of the tile;
//   - for every load basis vector, output offset = A · input offset; and images[i] = A·e_{W_i}.
// Worked example: bit-reverse on n = 15 (the plan of DESIGN §4.4): R = 0x400 … 0x4000 and U likewise, W =
// {5 … 9} with images A·e_5 = e_9 … ; the first check spans F2^15, and each loaded row σ_i carries input row
// offset R_j to output U_i with U_i = A·R_j.
#pragma once

#include <string>

#include "bmmc/plan/inplace_plan.hpp"
#include "bmmc/plan/plan.hpp"

namespace bmmc {

/// The first inconsistency of a tile pass (shape, ranges, or an element sent elsewhere than A·x ⊕ c), or ""
/// when it moves every element of its 2^n exactly where its BMMC sends it.
std::string tile_pass_inconsistency(const TilePass& pass);

/// Throws std::invalid_argument (prefixed with `who`) unless every pass has the plan's n and element size,
/// every tile pass is consistent, and the passes compose to plan.bmmc.
void require_consistent_plan(const Plan& plan, const char* who);

/// The same for an in-place plan: each involution pass's tile is consistent, its partner map sends each block
/// to the block whose coset its output lands in, its masks name block bits only, and the passes compose to
/// plan.bmmc. (Race freedom is check_inplace_plan's, by execution.)
void require_consistent_plan(const InPlacePlan& plan, const char* who);

}  // namespace bmmc
