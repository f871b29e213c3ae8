#!/usr/bin/env python3
"""The held-out sweep of in-place bit swaps (scripts/gpu/inplace-sweep.sh): its cases and its summary.

  inplace_sweep.py cases [--seed S] [--count C]   one case a line, "id;n;elem_bytes;spec;mask": random sets of
                                                  1-15 disjoint index-bit swaps (cuStateVec's swap_index_bits),
                                                  half of them with a mask of 1-3 other bits, element sizes 4, 8
                                                  and 16 bytes, n = 28..32 (not n = 32 at 16 bytes: with the
                                                  benchmark's second copy, 128 GiB); the same list for the same seed
  inplace_sweep.py summary FILE.csv               per case: in place / bound, in place / cuStateVec time, then
                                                  how many cases are within 1.15x their bound and at least as fast
                                                  as cuStateVec (cuStateVec takes 8- and 16-byte elements only)

The CSV is `bmmc bench --in-place --csv` with a first column `id` (the case). Python 3 standard library only.
"""
import argparse
import csv
import random
import sys

SIZES = [(n, eb) for n in range(28, 33) for eb in (4, 8, 16) if not (n == 32 and eb == 16)]
WITHIN_BOUND = 1.15


def cases(seed, count):
    rng = random.Random(seed)
    out = []
    for i in range(count):
        n, eb = SIZES[i % len(SIZES)] if i < len(SIZES) else rng.choice(SIZES)
        masked = i % 2 == 1
        bits = list(range(n))
        rng.shuffle(bits)
        mask_bits = bits[:rng.randint(1, 3)] if masked else []
        free = bits[len(mask_bits):]
        pairs = rng.randint(1, min(15, len(free) // 2))
        swaps = free[:2 * pairs]
        spec = "swap:" + ",".join(str(b) for b in swaps)
        mask = ",".join(f"{b}={rng.randint(0, 1)}" for b in sorted(mask_bits))
        out.append(f"{i + 1};{n};{eb};{spec};{mask}")
    return out


def summary(path):
    by = {}
    for r in csv.DictReader(open(path)):
        by.setdefault(r["id"], []).append(r)
    print(f"{'id':>3} {'n':>2} {'B':>2} {'pairs':>5} {'mask':<14} {'moves':>6} {'bound':>9} {'in place':>9} "
          f"{'% memcpy':>8} {'x bound':>8} {'cuStateVec':>10} {'x cuSV':>7}  {'passes':<17} verified")
    within = faster = with_sv = total = unverified = 0
    for case, rows in sorted(by.items(), key=lambda kv: int(kv[0])):
        ours = [r for r in rows if r["variant"].startswith("in-place")]
        if not ours:
            print(f"{case:>3} no in-place row (bmmc failed: see the log)")
            continue
        o = ours[0]
        copy = [r for r in rows if r["variant"] == "memcpy"]
        moves = float(o["bound_ms"]) / float(copy[0]["median_ms"]) if copy else float("nan")
        sv = [r for r in rows if r["variant"] == "custatevec"]
        spec = o["spec"].split()
        mask = spec[spec.index("--mask") + 1] if "--mask" in spec else "-"
        pairs = len(spec[0].split(":", 1)[1].split(",")) // 2
        x_bound = float(o["x_bound"]) if o["x_bound"] else float("nan")
        total += 1
        within += x_bound <= WITHIN_BOUND
        ok = all(r["verified"] == "true" for r in rows)
        unverified += not ok
        sv_text = "-"
        ratio_text = "-"
        if sv:
            with_sv += 1
            ratio = float(o["median_ms"]) / float(sv[0]["median_ms"])
            faster += ratio <= 1.0
            sv_text = f"{float(sv[0]['median_ms']):.3f}"
            ratio_text = f"{ratio:.3f}"
        print(f"{case:>3} {o['n']:>2} {o['elem_bytes']:>2} {pairs:>5} {mask:<14} {moves:6.3f} {float(o['bound_ms']):9.3f} "
              f"{float(o['median_ms']):9.3f} {float(o['pct_memcpy']):8.1f} {x_bound:8.3f} {sv_text:>10} {ratio_text:>7}  "
              f"{o['variant']:<17} "
              f"{'yes' if ok else 'NO'}")
    print(f"\n{within}/{total} cases within {WITHIN_BOUND}x their bound; {faster}/{with_sv} at least as fast as "
          f"cuStateVec (8/16-byte cases where it loaded); {unverified} with an unverified row (times in ms; x cuSV = "
          f"in place / cuStateVec time; moves = bound / memcpy, the fraction of the array in sectors that move)")
    return 0 if unverified == 0 else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("cases")
    c.add_argument("--seed", type=int, default=47)
    c.add_argument("--count", type=int, default=40)
    s = sub.add_parser("summary")
    s.add_argument("csv")
    a = ap.parse_args()
    if a.cmd == "cases":
        print("\n".join(cases(a.seed, a.count)))
        return 0
    return summary(a.csv)


if __name__ == "__main__":
    sys.exit(main())
