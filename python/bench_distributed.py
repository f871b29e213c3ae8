"""Times bmmc.distributed.permute under torchrun, one GPU per process, beside what the same bytes cost in torch.

    torchrun --nproc_per_node 4 python/bench_distributed.py --local-bits 32 --dtype complex64

Every rank holds 2^m elements of a 2^(m+g)-element array (m = --local-bits). For each permutation the rows are
(host wall clock from a barrier to every rank's stream done, median of --reps after one warm-up call):
  bmmc            bmmc.distributed.permute(x, spec): local pass, one all_to_all_single, local pass
  all_to_all      dist.all_to_all_single of the whole local array in equal splits (the exchange alone, sending
                  even the chunk a rank keeps: what a hand-written version of the same step would send)
  copy            x.clone() on every rank (one local pass over the same bytes)
and the check: the global sum of the values, and of their squares, is the same before and after (every element
arrives exactly once); the element-by-element check against a one-process permute is in
examples/distributed_permute.py, which runs at sizes that fit one process.
"""

import argparse
import statistics
import time

import torch
import torch.distributed as dist

import bmmc
import bmmc.distributed


def timed(fn, reps: int) -> float:
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        dist.barrier()
        torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        dist.barrier()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def sums(t: torch.Tensor) -> torch.Tensor:
    """The global sum of the values and of their squares, in float64, 2^26 values at a time (no full copy)."""
    v = (torch.view_as_real(t) if t.is_complex() else t).reshape(-1)
    s = torch.zeros(2, dtype=torch.float64, device=t.device)
    for part in v.split(2 ** 26):
        p = part.to(torch.float64)
        s[0] += p.sum()
        s[1] += (p * p).sum()
    dist.all_reduce(s)
    return s


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--local-bits", type=int, default=28, help="m: each rank holds 2^m elements")
    ap.add_argument("--dtype", default="complex64", choices=["complex64", "int32", "float32"])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--spec", nargs="*", default=None, help="default: random-bmmc:1, random-bpc:1, swap:0,N-1, "
                    "swap:m-1,N-1")
    args = ap.parse_args()
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(rank % torch.cuda.device_count())
    g = world.bit_length() - 1
    m = args.local_bits
    n = m + g
    dtype = getattr(torch, args.dtype)
    gen = torch.Generator(device="cuda").manual_seed(rank)
    if dtype.is_complex or dtype.is_floating_point:
        x = torch.randn(2 ** m, dtype=dtype, device="cuda", generator=gen)
    else:
        x = torch.randint(-1000, 1000, (2 ** m,), dtype=dtype, device="cuda", generator=gen)
    before = sums(x)
    gib = x.numel() * x.element_size() / 2 ** 30
    specs = args.spec or ["random-bmmc:1", "random-bpc:1", f"swap:0,{n - 1}", f"swap:{m - 1},{n - 1}"]
    recv = torch.empty_like(x)
    t_a2a = timed(lambda: dist.all_to_all_single(recv, x), args.reps)
    t_copy = timed(lambda: x.clone(), args.reps)
    if rank == 0:
        print(f"{world} ranks x 2^{m} {args.dtype} ({gib:g} GiB per GPU), median of {args.reps}: "
              f"all_to_all_single {t_a2a:.2f} ms, clone {t_copy:.2f} ms")
    for spec in specs:
        y = bmmc.distributed.permute(x, spec)
        ok = torch.allclose(sums(y), before, rtol=1e-9, atol=0) if dtype.is_floating_point or dtype.is_complex \
            else torch.equal(sums(y), before)
        del y
        t = timed(lambda: bmmc.distributed.permute(x, spec), args.reps)
        if rank == 0:
            print(f"{spec}: bmmc {t:.2f} ms = {t / t_a2a:.2f}x all_to_all_single, "
                  f"sums {'preserved' if ok else 'CHANGED'}")
        if not ok:
            raise SystemExit(f"rank {rank}: {spec} did not preserve the global sums")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
