"""bmmc.distributed.permute on real torch.distributed process groups: 1, 2 and 4 CPU processes over Gloo (the
same code runs over NCCL with CUDA tensors), every dtype size, random and named maps, the purely local case,
against bmmc.permute of the whole array; ranks that disagree all raise; bad input is refused. The plan steps
themselves are checked without processes. Skipped when torch (with torch.distributed) is not installed."""

import os
import sys
import tempfile
import traceback

import numpy as np
import pytest

import bmmc
import bmmc.distributed

try:
    import torch
    import torch.distributed as dist
    HAVE_DIST = dist.is_available()
except ImportError:
    HAVE_DIST = False
needs_dist = pytest.mark.skipif(not HAVE_DIST, reason="needs torch with torch.distributed")

CASES = [  # (spec, global bits, dtype name)
    ("bit-reverse", 12, "float32"),
    ("random-bmmc:3", 11, "int64"),
    ("random-bpc:5", 13, "uint8"),
    ("gray", 10, "complex64"),
    ("reverse", 9, "int16"),
    ("transpose:4", 8, "complex128"),
]


def _global(n, dtype):
    g = torch.Generator().manual_seed(n)
    if dtype.is_complex:
        return torch.randn(2 ** n, dtype=dtype, generator=g)
    if dtype.is_floating_point:
        return torch.randn(2 ** n, dtype=dtype, generator=g)
    return torch.randint(0, 100, (2 ** n,), dtype=dtype, generator=g)


def _reference(x, spec):
    return torch.from_numpy(bmmc.permute(x.numpy(), spec))


def _worker(rank, world, init_file, failures):
    try:
        dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world)
        for spec, n, dtype_name in CASES:
            dtype = getattr(torch, dtype_name)
            x = _global(n, dtype)
            m = 2 ** n // world
            mine = x[rank * m:(rank + 1) * m].clone()
            y = bmmc.distributed.permute(mine, spec)
            ref = _reference(x, spec)[rank * m:(rank + 1) * m]
            assert torch.equal(y, ref), f"{spec} n={n} {dtype}: rank {rank} of {world} differs"
            out = torch.full_like(mine, 7)
            assert bmmc.distributed.permute(mine, spec, out=out) is out
            assert torch.equal(out, ref), f"{spec} with out=: rank {rank} differs"
            assert torch.equal(mine, x[rank * m:(rank + 1) * m]), "the input was modified"
        # A Bmmc object on the global bits; a map that keeps every element on its rank (one local pass).
        n = 10
        x = _global(n, torch.float32)
        m = 2 ** n // world
        mine = x[rank * m:(rank + 1) * m].clone()
        b = bmmc.random_bmmc(n, 42)
        assert torch.equal(bmmc.distributed.permute(mine, b), _reference(x, b)[rank * m:(rank + 1) * m])
        g = world.bit_length() - 1
        local = bmmc.bit_permutation(list(range(n - g))[::-1] + list(range(n - g, n)))
        step = bmmc.distributed.plan_step(local, n, world, rank, 4)
        assert step["local_only"]
        assert torch.equal(bmmc.distributed.permute(mine, local), _reference(x, local)[rank * m:(rank + 1) * m])
        # Ranks that disagree (different specs) all raise, after the hash exchange, before any data moves.
        if world > 1:
            spec = "bit-reverse" if rank == 0 else "gray"
            with pytest.raises(ValueError, match="disagree"):
                bmmc.distributed.permute(mine, spec)
            with pytest.raises(ValueError, match="disagree"):  # different sizes
                bmmc.distributed.permute(mine[: m // 2 if rank == 0 else m].contiguous(), "bit-reverse")
            # One rank's own arguments are bad: it raises its own error, every other rank one naming it (none
            # is left waiting in the gather).
            bad = world - 1
            for wrong in [dict(x_local=mine[:3].contiguous()), dict(spec="no-such-map"), dict(out=mine)]:
                args = dict(x_local=mine, spec="bit-reverse")
                if rank == bad:
                    args.update(wrong)
                with pytest.raises(ValueError) as raised:
                    bmmc.distributed.permute(args.pop("x_local"), args.pop("spec"), **args)
                if rank != bad:
                    assert f"rank {bad}: refused its own arguments" in str(raised.value), str(raised.value)
                else:
                    assert "refused its own arguments" not in str(raised.value), str(raised.value)
        with pytest.raises(ValueError, match="overlaps"):
            bmmc.distributed.permute(mine, "bit-reverse", out=mine)
        with pytest.raises(ValueError, match="2\\^m elements"):
            bmmc.distributed.permute(mine[:3].contiguous(), "bit-reverse")
        with pytest.raises(ValueError, match="global bits"):
            bmmc.distributed.permute(mine, bmmc.random_bmmc(n + 1, 1))
        dist.barrier()
        dist.destroy_process_group()
    except BaseException:  # noqa: BLE001 (report every failure to the parent)
        failures.put(f"rank {rank}/{world}: {traceback.format_exc()}")
        raise


@needs_dist
@pytest.mark.parametrize("world", [1, 2, 4])
def test_distributed_matches_the_whole_array(world):
    mp = torch.multiprocessing.get_context("spawn")
    failures = mp.Queue()
    with tempfile.TemporaryDirectory() as tmp:
        init_file = os.path.join(tmp, "init")
        procs = [mp.Process(target=_worker, args=(r, world, init_file, failures)) for r in range(world)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(timeout=240)
        for p in procs:
            if p.is_alive():
                p.kill()
    messages = []
    while not failures.empty():
        messages.append(failures.get())
    assert not messages, "\n".join(messages)
    assert all(p.exitcode == 0 for p in procs), [p.exitcode for p in procs]


def test_plan_steps_pair_up_without_processes():
    n, ranks = 12, 8
    for spec in ["bit-reverse", "random-bmmc:9", "random-bpc:2", "gray"]:
        steps = [bmmc.distributed.plan_step(spec, n, ranks, r, 4) for r in range(ranks)]
        for r in range(ranks):
            assert sum(steps[r]["send_counts"]) == 2 ** n // ranks
            for d in range(ranks):
                assert steps[r]["send_counts"][d] == steps[d]["recv_counts"][r]
        assert len({s["hash"] for s in steps}) == 1
    with pytest.raises(ValueError, match="power-of-two"):
        bmmc.distributed.plan_step("gray", 10, 3, 0, 4)


def test_agreement_records_compare_without_processes():
    # The record every rank all-gathers and the library's comparison (the one the NCCL engines use).
    from bmmc import _bmmc
    b = bmmc._as_bmmc("random-bmmc:9", 12)
    mine = list(_bmmc._dist_agreement(b, 2, 4))
    assert len(mine) == 8
    _bmmc._dist_compare_agreements(mine * 4, 1)  # equal records: no error
    other = list(_bmmc._dist_agreement(bmmc._as_bmmc("gray", 12), 2, 4))
    with pytest.raises(ValueError, match=r"disagree.*this is rank 1.*same spec.*rank 3: n = 12"):
        _bmmc._dist_compare_agreements(mine * 3 + other, 1)
    wider = list(_bmmc._dist_agreement(b, 2, 8))
    with pytest.raises(ValueError, match="8-byte elements"):
        _bmmc._dist_compare_agreements(mine + wider, 0)


class _FakeTensor:
    """Just enough of a torch.Tensor for bmmc.distributed's checks and its gather of the agreement records."""

    def __init__(self, values, device="cpu"):
        self.values, self.device, self.dtype = list(values), device, "int64"

    def is_contiguous(self):
        return True

    def numel(self):
        return len(self.values)

    def element_size(self):
        return 8

    def data_ptr(self):
        return id(self.values)

    def tolist(self):
        return list(self.values)


def _fake_torch(world, timeout=20.0):
    """A torch with a torch.distributed whose ranks are threads of this process: all_gather meets at a barrier, so a
    rank that never gathers leaves its peers to time out (BrokenBarrierError) instead of hanging the test."""
    import threading
    import types
    torch_ = types.ModuleType("torch")
    dist_ = types.ModuleType("torch.distributed")
    torch_.distributed = dist_
    torch_.Tensor = _FakeTensor
    torch_.int64 = "int64"
    torch_.tensor = lambda values, dtype=None, device=None: _FakeTensor(values, device)
    torch_.empty_like = lambda t: _FakeTensor([0] * t.numel(), t.device)
    torch_.device = lambda kind, index=None: kind
    local = threading.local()
    barrier = threading.Barrier(world, timeout=timeout)
    slots = [None] * world
    dist_.is_available = lambda: True
    dist_.is_initialized = lambda: True
    dist_.get_world_size = lambda group=None: world
    dist_.get_rank = lambda group=None: local.rank
    dist_.get_backend = lambda group=None: "gloo"

    def all_gather(every, mine, group=None):
        slots[local.rank] = list(mine.values)
        barrier.wait()
        for r in range(world):
            every[r].values = list(slots[r])
        barrier.wait()  # every rank has read the slots before any gathers again

    dist_.all_gather = all_gather
    return torch_, dist_, local


def test_a_rank_with_bad_arguments_is_named_by_every_other_rank(monkeypatch):
    # One rank refuses its own arguments (a tensor that is not 2^m elements, a bad spec, not a tensor at all); it
    # still takes part in the gather, so it raises its own error and every other rank raises one naming it.
    import threading
    world, bad = 4, 2
    for wrong in [dict(x_local=_FakeTensor(range(3))), dict(spec="no-such-map"), dict(x_local=[1, 2, 3, 4])]:
        torch_, dist_, local = _fake_torch(world)
        monkeypatch.setitem(sys.modules, "torch", torch_)
        monkeypatch.setitem(sys.modules, "torch.distributed", dist_)
        errors = [None] * world

        def rank_main(rank, wrong=wrong):
            local.rank = rank
            args = dict(x_local=_FakeTensor(range(16)), spec="bit-reverse")
            if rank == bad:
                args.update(wrong)
            try:
                bmmc.distributed.permute(args["x_local"], args["spec"])
            except BaseException as e:  # noqa: BLE001 (inspected below)
                errors[rank] = e

        threads = [threading.Thread(target=rank_main, args=(r,)) for r in range(world)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert not any(t.is_alive() for t in threads)
        for r, e in enumerate(errors):
            assert isinstance(e, (ValueError, TypeError)), f"rank {r}: {e!r} ({wrong})"
            if r == bad:
                assert "refused its own arguments" not in str(e), str(e)
            else:
                assert isinstance(e, ValueError), repr(e)
                assert f"rank {bad}: refused its own arguments" in str(e), str(e)
                assert f"this is rank {r}" in str(e), str(e)
        assert isinstance(errors[bad], TypeError if isinstance(wrong.get("x_local"), list) else ValueError)


@needs_dist
def test_needs_a_process_group():
    if dist.is_initialized():
        pytest.skip("a process group is already initialised in this process")
    with pytest.raises(RuntimeError, match="init_process_group"):
        bmmc.distributed.permute(torch.zeros(16), "gray")


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
