"""bmmc.distributed.permute on real torch.distributed process groups: 1, 2 and 4 CPU processes over Gloo (the
same code runs over NCCL with CUDA tensors), every dtype size, random and named maps, the purely local case,
against bmmc.permute of the whole array; ranks that disagree all raise; bad input is refused (skipped when torch,
with torch.distributed, is not installed). Without torch: ranks as threads of this process over a stand-in
torch.distributed whose collectives move NumPy memory — the same door (the library's DistributedPermuter over the
module's collectives), the data against bmmc.permute, the collectives each call makes, ranks that disagree and a
rank with bad arguments all raising; and the plan steps themselves."""

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


class _FakeTensor:
    """Just enough of a torch.Tensor for bmmc.distributed: a NumPy array (its memory is what the door permutes)."""

    def __init__(self, values, device="cpu", dtype=np.int64):
        self.array = np.array(values, dtype=dtype)
        self.device = device

    @property
    def dtype(self):
        return self.array.dtype

    def is_contiguous(self):
        return self.array.flags.c_contiguous

    def numel(self):
        return self.array.size

    def element_size(self):
        return self.array.itemsize

    def data_ptr(self):
        return self.array.ctypes.data

    def tolist(self):
        return self.array.tolist()

    def view(self, what):
        t = _FakeTensor.__new__(_FakeTensor)
        t.array, t.device = (self.array.reshape(-1) if what == -1 else self.array.view(what)), self.device
        return t


def _fake_torch(world, timeout=20.0):
    """A torch with a torch.distributed whose ranks are threads of this process: all_gather and all_to_all_single
    meet at a barrier, so a rank that never comes leaves its peers to time out (BrokenBarrierError) instead of
    hanging the test."""
    import threading
    import types
    torch_ = types.ModuleType("torch")
    dist_ = types.ModuleType("torch.distributed")
    torch_.distributed = dist_
    torch_.Tensor = _FakeTensor
    torch_.int64 = np.int64
    torch_.uint8 = np.uint8
    torch_.tensor = lambda values, dtype=None, device=None: _FakeTensor(values, device, dtype)
    torch_.empty_like = lambda t: _FakeTensor(np.zeros_like(t.array), t.device, t.array.dtype)
    torch_.device = lambda kind, index=None: kind
    local = threading.local()
    barrier = threading.Barrier(world, timeout=timeout)
    slots = [None] * world
    lock = threading.Lock()
    dist_.is_available = lambda: True
    dist_.is_initialized = lambda: True
    dist_.get_world_size = lambda group=None: world
    dist_.get_rank = lambda group=None: local.rank
    dist_.get_backend = lambda group=None: "gloo"
    dist_.calls = {"all_gather": 0, "all_to_all_single": 0}

    def count(name):
        with lock:
            dist_.calls[name] += 1

    def all_gather(every, mine, group=None):
        slots[local.rank] = mine.array.copy()
        count("all_gather")
        barrier.wait()
        for r in range(world):
            every[r].array = slots[r].copy()
        barrier.wait()  # every rank has read the slots before any gathers again

    def all_to_all_single(output, input, output_split_sizes, input_split_sizes, group=None):
        slots[local.rank] = (input.array, list(input_split_sizes))
        count("all_to_all_single")
        barrier.wait()
        at = 0
        for s in range(world):
            source, splits = slots[s]
            start = sum(splits[:local.rank])
            assert splits[local.rank] == output_split_sizes[s], "unpaired split sizes"
            output.array[at:at + output_split_sizes[s]] = source[start:start + splits[local.rank]]
            at += output_split_sizes[s]
        barrier.wait()  # no sender reuses its buffer before every receiver has copied

    dist_.all_gather = all_gather
    dist_.all_to_all_single = all_to_all_single
    return torch_, dist_, local


def _on_threads(world, monkeypatch, rank_main):
    """Runs rank_main(rank) on one thread per rank over a stand-in torch.distributed; returns (each rank's result or
    exception, the collectives' call counts)."""
    import threading
    torch_, dist_, local = _fake_torch(world)
    monkeypatch.setitem(sys.modules, "torch", torch_)
    monkeypatch.setitem(sys.modules, "torch.distributed", dist_)
    results = [None] * world

    def run(rank):
        local.rank = rank
        try:
            results[rank] = rank_main(rank)
        except BaseException as e:  # noqa: BLE001 (inspected by the caller)
            results[rank] = e

    threads = [threading.Thread(target=run, args=(r,)) for r in range(world)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    return results, dict(dist_.calls)


@pytest.mark.parametrize("world", [1, 2, 4, 8])
def test_the_door_moves_the_data_over_a_stand_in_torch(world, monkeypatch):
    # The whole path without torch: the library's door plans and runs the local passes, the stand-in collectives
    # move the agreement words and the bytes; every rank's slice equals bmmc.permute of the whole array.
    n = 11
    cases = [("bit-reverse", np.float32), ("random-bmmc:4", np.int64), ("random-bpc:7", np.uint8),
             ("gray", np.complex128), ("transpose:5", np.int16), (bmmc.random_bmmc(n, 3), np.float64)]
    m = 2 ** n // world
    wholes = [(np.arange(2 ** n) * 3 + 1).astype(dtype) for _, dtype in cases]
    # A map that keeps every element on its rank: one local pass, no exchange.
    g = world.bit_length() - 1
    local = bmmc.bit_permutation(list(range(n - g))[::-1] + list(range(n - g, n)))
    cases.append((local, np.int32))
    wholes.append(np.arange(2 ** n, dtype=np.int32))

    def rank_main(rank):
        outs = []
        for (spec, dtype), whole in zip(cases, wholes):
            mine = _FakeTensor(whole[rank * m:(rank + 1) * m], dtype=dtype)
            out = bmmc.distributed.permute(mine, spec)
            assert np.array_equal(mine.array, whole[rank * m:(rank + 1) * m]), "the input was modified"
            outs.append(out.array)
        return outs

    results, calls = _on_threads(world, monkeypatch, rank_main)
    for rank, r in enumerate(results):
        assert not isinstance(r, BaseException), f"rank {rank}: {r!r}"
    for i, ((spec, dtype), whole) in enumerate(zip(cases, wholes)):
        want = bmmc.permute(whole, spec)
        got = np.concatenate([results[rank][i] for rank in range(world)])
        assert np.array_equal(got, want), f"{spec} over {world} ranks"
    assert calls["all_gather"] == world * len(cases)  # one agreement per call and rank
    exchanged = sum(1 for spec, _ in cases if not bmmc.distributed.plan_step(spec, n, world, 0, 1)["local_only"])
    assert exchanged >= (len(cases) - 3 if world > 1 else 0)  # bit-reverse, gray, transpose, ... move elements
    assert calls["all_to_all_single"] == world * exchanged


def test_each_rank_plans_once_per_map(monkeypatch):
    # The permuters live in the module's native table: a second round of the same calls builds none.
    from bmmc import _bmmc

    def rank_main(rank):
        return bmmc.distributed.permute(_FakeTensor(np.arange(256) + 256 * rank), "random-bmmc:77").array

    first, _ = _on_threads(2, monkeypatch, rank_main)
    count = _bmmc._dist_permuter_count()
    again, _ = _on_threads(2, monkeypatch, rank_main)
    assert count >= 1 and _bmmc._dist_permuter_count() == count
    assert np.array_equal(np.concatenate(again), np.concatenate(first))
    assert np.array_equal(np.concatenate(first), bmmc.permute(np.arange(512), "random-bmmc:77"))


def test_ranks_that_disagree_all_raise_before_data_moves(monkeypatch):
    # The comparison is the library's (bmmc/dist/agreement.hpp): every rank raises naming every rank's view.
    world = 4

    def rank_main(rank):
        bmmc.distributed.permute(_FakeTensor(np.arange(64, dtype=np.float64)), "gray" if rank == 3 else "random-bmmc:9")

    results, calls = _on_threads(world, monkeypatch, rank_main)
    for rank, e in enumerate(results):
        assert isinstance(e, ValueError), f"rank {rank}: {e!r}"
        assert "disagree" in str(e) and f"this is rank {rank}" in str(e) and "same global BMMC" in str(e), str(e)
        assert "rank 3: n = 8" in str(e), str(e)
    assert calls["all_to_all_single"] == 0

    def sizes(rank):  # different sizes: different n
        bmmc.distributed.permute(_FakeTensor(np.zeros(32 if rank == 0 else 64)), "bit-reverse")

    results, calls = _on_threads(world, monkeypatch, sizes)
    assert all(isinstance(e, ValueError) and "disagree" in str(e) for e in results), results
    assert calls["all_to_all_single"] == 0

    def unchecked(rank):  # check=False: no gather
        return bmmc.distributed.permute(_FakeTensor(np.arange(64) + 64 * rank), "bit-reverse", check=False).array

    results, calls = _on_threads(world, monkeypatch, unchecked)
    assert calls["all_gather"] == 0 and calls["all_to_all_single"] == world
    assert np.array_equal(np.concatenate(results), bmmc.permute(np.arange(256), "bit-reverse"))


def test_a_rank_with_bad_arguments_is_named_by_every_other_rank(monkeypatch):
    # One rank refuses its own arguments (a tensor that is not 2^m elements, a bad spec, not a tensor at all, an out
    # that overlaps x_local, an out of the wrong size); it still takes part in the gather, so it raises its own
    # error and every other rank raises one naming it.
    world, bad = 4, 2
    for wrong in [dict(x_local=_FakeTensor(range(3))), dict(spec="no-such-map"), dict(x_local=[1, 2, 3, 4]),
                  dict(out="x_local"), dict(out=_FakeTensor(range(8)))]:
        def rank_main(rank, wrong=wrong):
            x = _FakeTensor(range(16))
            args = dict(x_local=x, spec="bit-reverse", out=None)
            if rank == bad:
                args.update(wrong)
            if isinstance(args["out"], str):
                args["out"] = x
            bmmc.distributed.permute(args["x_local"], args["spec"], out=args["out"])

        errors, calls = _on_threads(world, monkeypatch, rank_main)
        for r, e in enumerate(errors):
            assert isinstance(e, (ValueError, TypeError)), f"rank {r}: {e!r} ({wrong})"
            if r == bad:
                assert "refused its own arguments" not in str(e), str(e)
            else:
                assert isinstance(e, ValueError), repr(e)
                assert f"rank {bad}: refused its own arguments" in str(e), str(e)
                assert f"this is rank {r}" in str(e), str(e)
        assert isinstance(errors[bad], TypeError if isinstance(wrong.get("x_local"), list) else ValueError)
        if isinstance(wrong.get("out"), str):
            assert "overlaps" in str(errors[bad]), str(errors[bad])
        assert calls["all_to_all_single"] == 0


@needs_dist
def test_needs_a_process_group():
    if dist.is_initialized():
        pytest.skip("a process group is already initialised in this process")
    with pytest.raises(RuntimeError, match="init_process_group"):
        bmmc.distributed.permute(torch.zeros(16), "gray")


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
