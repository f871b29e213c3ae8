"""Distributed permutations over torch.distributed: ``bmmc.distributed.permute(x_local, spec, group=None)``.

The array of 2^N elements is split over the G = 2^g ranks of a process group, one tensor per process as under
torchrun: the rank is the top g index bits, so rank r holds elements [r·2^m, (r+1)·2^m) (m = N − g). Any BMMC on
the N global bits runs as a local bmmc permute, ONE ``all_to_all_single`` with split sizes, and a second local
permute (docs/DESIGN.md §9: every BMMC needs a single exchange, in which each rank sends 2^(m−k) elements to each
of 2^k ranks, k = rank of the block of A that maps local bits to rank bits; bmmc/dist/alltoall.hpp folds the
collective's segment order into the two local passes). A map that moves no element between ranks (k = 0 and
the rank bits fixed) runs as one local permute with no communication. Any backend with ``all_to_all_single``
works: NCCL for CUDA tensors, Gloo for CPU tensors. The exchange moves bytes, so every dtype bmmc permutes
(1, 2, 4, 8 or 16 bytes, complex included) goes through every backend.

Example (``torchrun --nproc_per_node 4 examples/distributed_permute.py``)::

    import torch, torch.distributed as dist, bmmc.distributed
    dist.init_process_group("nccl")               # or "gloo" with CPU tensors
    x = torch.arange(2**20, device="cuda")        # this rank's 2^20 elements of a 2^22-element array
    y = bmmc.distributed.permute(x, "bit-reverse")  # y: this rank's slice of the bit-reversed array

How it runs: the library's distributed front door (``DistributedPermuter`` over an ``ExchangeGroup``, docs/DESIGN.md
§9.0) plans the call, runs both local passes and checks the ranks' agreement; this module supplies the door's two
collectives, written with torch.distributed: ``all_gather`` of the few words of the agreement record (on x_local's
device: CPU tensors for Gloo, CUDA tensors for NCCL) and ``all_to_all_single`` of the exchange (uint8 views of
``out``, which holds the pre-pass's result, into a temporary receive buffer, split sizes in bytes). The door calls
the exchange once the pre-pass is enqueued on torch's current stream and enqueues the post-pass right after it
returns, so every collective is ordered on that stream; the buffers are the call's own.

Every rank must call with the same permutation, n and element size; the ranks compare their plans first (the
library's agreement record, one small all_gather; ``check=False`` skips it) and all raise ValueError when they
differ, instead of deadlocking in the exchange or exchanging wrong data. A rank whose own arguments are bad
(a tensor of the wrong size, a bad spec, a bad ``out``) still takes part in that gather with a refusal record:
it raises its own error and every other rank raises ValueError naming it — no rank is left waiting. With
``check=False`` there is no gather, so a bad argument on one rank leaves the others waiting in the exchange.
"""

from __future__ import annotations

import functools

from . import _bmmc, _as_bmmc, Bmmc
from . import permute as _local_permute

__all__ = ["permute", "plan_step"]


@functools.lru_cache(maxsize=256)
def _step(b: Bmmc, rank_bits: int, elem_bytes: int, rank: int) -> dict:
    return _bmmc._dist_alltoall_step(b, rank_bits, elem_bytes, rank)


@functools.lru_cache(maxsize=256)
def _agreement(b: Bmmc, rank_bits: int, elem_bytes: int) -> tuple:
    return tuple(_bmmc._dist_agreement(b, rank_bits, elem_bytes))


def plan_step(spec, n: int, ranks: int, rank: int, elem_bytes: int) -> dict:
    """Rank `rank`'s step of the distributed plan of `spec` on n global bits over `ranks` ranks: a dict with
    "pre" and "post" (the local Bmmcs), "send_counts" and "recv_counts" (elements to / from each rank), "k",
    "local_only", "local" (the one local pass when local_only) and "hash". Pure; no process group needed."""
    if ranks < 1 or ranks & (ranks - 1):
        raise ValueError(f"{ranks} ranks: a distributed BMMC needs a power-of-two number of ranks")
    return dict(_step(_as_bmmc(spec, n), ranks.bit_length() - 1, elem_bytes, rank))


_WORD = (1 << 64) - 1


def _signed64(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def _gather_device(torch, dist, group, x_local):
    # Where the records are gathered: x_local's device, or, when x_local is not a tensor, the backend's own.
    if isinstance(x_local, torch.Tensor):
        return x_local.device
    if dist.get_backend(group) == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def _gatherer(torch, dist, group, device, world: int):
    # The door's gather: every rank's words (the agreement record) through all_gather, rank order.
    def gather(words):
        mine = torch.tensor([_signed64(w) for w in words], dtype=torch.int64, device=device)
        every = [torch.empty_like(mine) for _ in range(world)]
        dist.all_gather(every, mine, group=group)
        return [int(v) & _WORD for t in every for v in t.tolist()]
    return gather


def _exchanger(torch, dist, group, buffers: dict):
    # The door's exchange: its send and receive buffers are tensors of this call (`buffers`, by data pointer), moved as
    # bytes by one all_to_all_single on the current stream.
    def as_bytes(ptr: int, what: str):
        t = buffers.get(ptr)
        if t is None:
            raise RuntimeError(f"the distributed door asked to exchange through {what} buffer {ptr:#x}, which is none "
                               "of this call's tensors")
        return t.view(-1).view(torch.uint8)

    def exchange(send, send_bytes, recv, recv_bytes, stream):
        dist.all_to_all_single(as_bytes(recv, "receive"), as_bytes(send, "send"), list(recv_bytes), list(send_bytes),
                               group=group)
    return exchange


def _validate(torch, x_local, spec, out, world: int):
    # This rank's own arguments as tensors: (Bmmc, element bytes, out), or an exception saying what is wrong. The door
    # checks the rest (plan, sizes, overlapping buffers). Nothing here is collective.
    if not isinstance(x_local, torch.Tensor):
        raise TypeError(f"x_local is a {type(x_local).__name__}; expected a torch.Tensor (one per process)")
    if not x_local.is_contiguous():
        raise ValueError("x_local is not contiguous; expected a C-contiguous tensor (call .contiguous())")
    size = x_local.numel()
    if size <= 0 or size & (size - 1):
        raise ValueError(f"x_local has {size} elements; every rank must hold 2^m elements")
    n = size.bit_length() - 1 + world.bit_length() - 1
    if isinstance(spec, Bmmc) and spec.n != n:
        raise ValueError(f"the BMMC has n = {spec.n} bits, but {world} ranks of {size} elements make an array of "
                         f"2^{n}; expected a BMMC on n = {n} global bits")
    b = _as_bmmc(spec, n)
    if out is None:
        out = torch.empty_like(x_local)
    elif not isinstance(out, torch.Tensor) or out.numel() != size or out.dtype != x_local.dtype or \
            out.device != x_local.device or not out.is_contiguous():
        raise ValueError(f"out must be a contiguous tensor of {size} elements of {x_local.dtype} on "
                         f"{x_local.device}, like x_local")
    return b, x_local.element_size(), out


def permute(x_local, spec, group=None, out=None, *, check: bool = True):
    """This rank's slice of the permuted global array: out_global[A·i ⊕ c] = x_global[i].

    x_local: this rank's contiguous torch tensor of 2^m elements (CUDA with NCCL, CPU with Gloo); the global array
    has N = m + g bits over the group's G = 2^g ranks (rank r = the top g bits). spec: a spec string (parsed with
    n = N) or a Bmmc on N bits, the same on every rank. group: the torch.distributed process group (None: the
    default group). out: this rank's output (same size, dtype and device as x_local, not overlapping it;
    allocated when None). One temporary buffer of the local size is allocated for the exchange (none when no
    element changes rank). Collective: every rank of the group must call it.
    """
    import torch
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        raise RuntimeError("bmmc.distributed.permute needs an initialised torch.distributed process group "
                           "(torch.distributed.init_process_group, e.g. under torchrun)")
    world, rank = dist.get_world_size(group), dist.get_rank(group)
    if world & (world - 1):  # the same on every rank: every rank raises here
        raise ValueError(f"the process group has {world} ranks; a distributed BMMC needs a power of two "
                         "(the rank is the top index bits)")
    gather = _gatherer(torch, dist, group, _gather_device(torch, dist, group, x_local), world) if check else None
    try:
        b, eb, out = _validate(torch, x_local, spec, out, world)
    except Exception:
        if check:  # the door's refusal record in this rank's place, so that its peers raise instead of waiting
            _bmmc._dist_refuse(rank, world, gather)
        raise
    # From the module's native table; a build that refuses its own arguments announces it, as the call below does.
    p = _bmmc._dist_permuter(b, eb, rank, world, gather, check)
    try:
        received = torch.empty_like(x_local) if p.scratch_bytes else None
    except Exception:
        if check:
            _bmmc._dist_refuse(rank, world, gather)
        raise
    buffers = {t.data_ptr(): t for t in (out, received) if t is not None}
    on_gpu = getattr(x_local.device, "type", None) == "cuda"
    stream = torch.cuda.current_stream(x_local.device).cuda_stream if on_gpu else 0
    p(x_local.data_ptr(), out.data_ptr(), received.data_ptr() if received is not None else 0, stream,
      _exchanger(torch, dist, group, buffers), gather)
    return out
