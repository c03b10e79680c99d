"""Where a small batch's step spends its time: the engine's ``step`` at N = 1 taken apart.

Not a pytest benchmark: a breakdown, each part timed by itself (the best of many rounds of
back-to-back calls, so a shared machine's noise only ever adds), then cProfile's view of many
steps (what runs in Python and what in one compiled call). The parts:

- the rules' work for one episode: a step at N = 4096 over 4096;
- the compiled step by address (``Engine._bind_own``): what numba's entry point costs to unbox
  an int, five dtype and shape arguments and the actions array, plus that work;
- ``Engine.step``: that call plus the Python checks in front of it (class, dtype and dimensions
  of the actions: what the call's types rest on);
- the path the engine took before: the actions normalised into the (N, width) array, the
  thirteen buffers in a tuple, and numba's dispatcher picking the compiled loop by the types of
  all thirteen (the compiled loop's entry point was never found: the step's ``out`` argument was
  left out, and numba keys that signature with ``omitted(default=None)``);
- the same loop's entry point, with every argument unboxed but no type dispatch;
- the hand-written numba loop (``handwritten_cartpole.py``): eleven arrays through numba's
  dispatcher, the bar of the issue.

    python benchmarks/step_overhead.py [--precision float32]
"""

import argparse
import cProfile
import io
import pstats
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))


def best_per_call(fn, args_list, rounds=300):
    """The best round's time per call of ``fn(*args)`` over ``args_list``."""
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for args in args_list:
            fn(*args)
        best = min(best, time.perf_counter() - start)
    return best / len(args_list)


def main(argv=None):
    import numba
    from handwritten_cartpole import HandwrittenCartPole

    import vecenv

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--precision", default="float64", choices=("float64", "float32"))
    parser.add_argument("--rounds", type=int, default=300)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    calls = 256
    rows = [(a,) for a in rng.integers(0, 2, size=(calls, 1))]

    engine = vecenv.make("cartpole", num_envs=1, seed=0, precision=args.precision)
    engine.step(rows[0][0])  # compiles (or loads) and binds the step by address
    big = vecenv.make("cartpole", num_envs=4096, seed=0, precision=args.precision)
    big_rows = [(a,) for a in rng.integers(0, 2, size=(16, 4096))]
    big.step(big_rows[0][0])
    hand = HandwrittenCartPole(1)
    hand.step(rows[0][0])

    flat_rows = [(engine._actions(a),) for (a,) in rows]
    old = engine._drivers.step
    old_args = [engine._step_args(f, None) for (f,) in flat_rows]
    old(*old_args[0])
    full = [a + (None,) for a in old_args]
    sig = tuple(numba.typeof(x) for x in full[0])
    old.compile(sig)
    entry = old.overloads[sig].entry_point
    head = engine._own_head

    def old_path(a):
        flat = engine._actions(a)
        return old(*engine._step_args(flat, None))

    r = args.rounds
    parts = {
        "the rules' work (N = 4096 step / 4096)": best_per_call(big.step, big_rows, r // 4) / 4096,
        "compiled step by address (call + work)": best_per_call(
            lambda a: engine._own(*head, a), rows, r
        ),
        "Engine.step (checks + that call)": best_per_call(engine.step, rows, r),
        "before: actions, buffers, numba's dispatch": best_per_call(old_path, rows, r),
        "before: numba's dispatch alone (13 arrays)": best_per_call(old, old_args, r),
        "the loop's entry point (14 arguments unboxed)": best_per_call(entry, full, r),
        "hand-written loop (11 arrays, dispatch)": best_per_call(hand.step, rows, r),
    }
    print(f"CartPole N=1, precision={args.precision}: microseconds per call (best round)")
    for name, seconds in parts.items():
        print(f"  {name:<48} {seconds * 1e6:7.3f}")
    step = parts["Engine.step (checks + that call)"]
    hand_step = parts["hand-written loop (11 arrays, dispatch)"]
    print(f"  Engine.step / hand-written loop: {step / hand_step:.2f}x")

    profile = cProfile.Profile()
    profile.enable()
    for _ in range(200):
        for (a,) in rows:
            engine.step(a)
    profile.disable()
    text = io.StringIO()
    pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(6)
    print("\ncProfile of 51,200 Engine.step calls (own time per function):")
    print("\n".join(line for line in text.getvalue().splitlines() if line.strip())[:2000])
    return 0


if __name__ == "__main__":
    sys.exit(main())
