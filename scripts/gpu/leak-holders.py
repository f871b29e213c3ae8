"""Names the bmmc objects still alive at the very end of a process that used torch.compile and CUDA graphs, the
ones nanobind reports as leaked at its teardown ("nanobind: leaked 1 instances ... leaked type bmmc._bmmc.Bmmc").

It runs the script of python/tests/test_gpu.py::test_no_nanobind_leak_report_after_torch_compile_and_cuda_graphs
(or, with --device cpu, the same script on CPU tensors without the CUDA-graph part) in a child process with
tracemalloc on and an exit handler registered before anything else, so that it runs after every other exit
handler, bmmc's included. That handler lists every live Python object of bmmc's native types it can reach
through the garbage collector (with what refers to it) and, because a holder in C++ is invisible to the
collector, every memory block still allocated whose size is that of a Bmmc instance and whose allocation
traceback passes through bmmc's package or the script: where the surviving Bmmc was made. Then the child ends
normally, so nanobind's own report follows on stderr.

Usage (the package importable, e.g. installed with pip install ./python):
    python3 scripts/gpu/leak-holders.py [--device cuda|cpu]
"""

import argparse
import ast
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]

PRELUDE = r'''
import atexit
import gc
import sys
import tracemalloc

tracemalloc.start(10)


def _report():
    import bmmc
    from bmmc import _bmmc

    gc.collect()
    kinds = tuple(t for t in vars(_bmmc).values() if isinstance(t, type) and t.__module__.startswith("bmmc"))
    mine = {id(v) for v in list(globals().values())}
    seen = {}
    for o in gc.get_objects():
        for r in gc.get_referents(o):
            if isinstance(r, kinds) and id(r) not in mine:
                seen.setdefault(id(r), (r, []))[1].append(o)
    print(f"[leak-holders] {len(seen)} bmmc object(s) besides the script's globals reachable by the collector",
          file=sys.stderr)
    for r, holders in seen.values():
        print(f"[leak-holders]   {type(r).__name__} {r!r:.120} refcount {sys.getrefcount(r) - 1}", file=sys.stderr)
        for h in holders:
            print(f"[leak-holders]     held by {type(h)} {repr(h)[:200]}", file=sys.stderr)
    probe = bmmc.random_bmmc(7, 1)
    where = tracemalloc.get_object_traceback(probe)._frames  # most recent frame first
    raw = tracemalloc.take_snapshot().traces._traces  # (domain, size, frames, ...) of every live block
    size = next(t[1] for t in raw if t[2] == where)
    print(f"[leak-holders] a Bmmc instance is a block of {size} bytes; live blocks of that size made by Python code"
          " (not an import) in bmmc or the script:", file=sys.stderr)
    for t in raw:
        frames = t[2]
        if t[1] != size or frames == where or not frames or frames[0][0].startswith("<frozen"):
            continue
        if not any("bmmc" in f or f == "<string>" for f, _ in frames):
            continue
        print("[leak-holders]   made at " + " <- ".join(f"{f}:{n}" for f, n in frames), file=sys.stderr)


atexit.register(_report)
'''


def script(device: str) -> str:
    """The exit test's script (python/tests/test_gpu.py's _GPU_AT_EXIT), on `device`."""
    tree = ast.parse((ROOT / "python/tests/test_gpu.py").read_text())
    code = next(ast.literal_eval(n.value) for n in tree.body
                if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", None) == "_GPU_AT_EXIT")
    if device == "cpu":
        code = code.replace('torch.device("cuda")', 'torch.device("cpu")')
        code = code[:code.index("g = torch.cuda.CUDAGraph()")] + 'print("ran")\n'
    return PRELUDE + code


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    args = ap.parse_args()
    r = subprocess.run([sys.executable, "-c", script(args.device)], capture_output=True, text=True, timeout=900)
    sys.stdout.write(r.stdout)
    sys.stderr.write("".join(line + "\n" for line in r.stderr.splitlines() if not line.startswith("W1")))
    return r.returncode


if __name__ == "__main__":
    sys.exit(main())
