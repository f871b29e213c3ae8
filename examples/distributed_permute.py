"""A BMMC of an array split over several processes, with bmmc.distributed.permute (docs/DESIGN.md §9).

    torchrun --nproc_per_node 4 examples/distributed_permute.py                  # CPU tensors over Gloo
    torchrun --nproc_per_node 2 examples/distributed_permute.py --backend nccl   # one GPU per process

Every rank holds 2^m elements of a 2^(m+g)-element array (rank = the top g index bits), permutes it by a few
maps (bit-reverse, a random BMMC, a swap of the top rank bit with local bit 0 as a state-vector simulator does
it), checks its slice against the whole array permuted on one process, and rank 0 prints what happened.
"""

import argparse
import time

import torch
import torch.distributed as dist

import bmmc
import bmmc.distributed


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", default="gloo", choices=["gloo", "nccl"])
    ap.add_argument("--local-bits", type=int, default=20, help="m: each rank holds 2^m elements")
    args = ap.parse_args()
    dist.init_process_group(args.backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    device = torch.device("cuda", rank % torch.cuda.device_count()) if args.backend == "nccl" else torch.device("cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)
    g = world.bit_length() - 1
    m = args.local_bits
    n = m + g
    whole = torch.arange(2 ** n, dtype=torch.int64)  # small enough to rebuild on every rank for the check
    mine = whole[rank << m:(rank + 1) << m].to(device)
    for spec in ["bit-reverse", "random-bmmc:7", f"swap:0,{n - 1}"]:
        dist.barrier()
        start = time.perf_counter()
        y = bmmc.distributed.permute(mine, spec)
        if device.type == "cuda":
            torch.cuda.synchronize()
        seconds = time.perf_counter() - start
        step = bmmc.distributed.plan_step(spec, n, world, rank, 8)
        expected = torch.from_numpy(bmmc.permute(whole.numpy(), spec))[rank << m:(rank + 1) << m]
        ok = torch.equal(y.cpu(), expected)
        verdict = torch.tensor([int(ok)], device=device)
        dist.all_reduce(verdict, op=dist.ReduceOp.MIN)
        if rank == 0:
            sent = sum(step["send_counts"]) - step["send_counts"][rank]
            print(f"{spec}: {world} ranks x 2^{m} int64, k = {step['k']} (each rank sends to {2 ** step['k']} "
                  f"ranks, {sent} of its {2 ** m} elements leave it), {seconds * 1e3:.2f} ms, "
                  f"{'every rank verified' if verdict.item() else 'MISMATCH'}")
        if not ok:
            raise SystemExit(f"rank {rank}: {spec} differs from the whole array permuted on one process")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
