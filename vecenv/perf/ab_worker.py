"""A worker process of ``vecenv bench --compare-ref``: times rounds of one build's engine.

Run as a script (``python ab_worker.py``) with ``PYTHONPATH`` on the build's tree, so ``vecenv``
is that build's; it uses only ``vecenv.make`` and ``vecenv.registry.get_spec``, which every build
has, and nothing of the tree that started it. It reads one JSON request a line on stdin and
answers one JSON line on stdout (numba's and the game's own prints go to stderr):

    {"op": "case", "env": "CartPole-v1", "n": 64, "threads": 1, "seed": 0, "calls": 256,
     "warmup": 3, "clock": "cpu"}   -> {"vecenv": "<the vecenv/__init__.py it imported>"}
    (with "precision": "float32", a build without the engine's ``precision`` refuses the case)
    {"op": "round"}                 -> {"seconds": <time of `calls` step calls>}

``clock``: "cpu" times a round by this thread's CPU time, "wall" by the wall clock. A one-thread
case is timed by CPU time: it is what the steps cost, whatever else the scheduler ran meanwhile.
On a 2-vCPU machine with both cores busy, the wall time of the same code in two workers ran 20-35%
apart for whole runs (how the scheduler happened to treat each process); their CPU times agreed.
Threaded cases need the wall clock (the work runs on other threads too).
    {"op": "quit"}                  -> (exits)

A failure answers {"error": "..."}.
"""

import itertools
import json
import os
import sys
import time

POOL = 16  # batches of actions cycled through, drawn before any clock starts
CLOCKS = {"cpu": time.thread_time, "wall": time.perf_counter}


def actions_pool(spec, n, seed):
    """``POOL`` batches of uniform random actions for ``n`` episodes of the game ``spec``
    (``vecenv bench`` draws the engine's from here too)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    action = spec.action
    head = (n,) if spec.num_agents == 1 else (n, spec.num_agents)
    if action.discrete:
        lo, hi = int(action.low[0]), int(action.high[0])
        return [rng.integers(lo, hi, size=head, endpoint=True) for _ in range(POOL)]
    lo, hi = action.low.reshape(action.shape), action.high.reshape(action.shape)
    size = head + action.shape
    return [rng.uniform(lo, hi, size=size).astype(action.dtype) for _ in range(POOL)]


class Case:
    def __init__(self, req):
        import vecenv
        from vecenv import registry

        spec = registry.get_spec(req["env"])
        kwargs = {"precision": req["precision"]} if "precision" in req else {}
        self.engine = vecenv.make(
            spec.name, num_envs=req["n"], seed=req["seed"], num_threads=req["threads"], **kwargs
        )
        self.pool = actions_pool(spec, req["n"], req["seed"])
        self.calls = int(req["calls"])
        self.clock = CLOCKS[req.get("clock", "wall")]
        for _ in range(int(req["warmup"])):  # compiles and first touches: never timed
            self.round()
        self.vecenv = os.path.abspath(vecenv.__file__)

    def round(self):
        batches = itertools.islice(itertools.cycle(self.pool), self.calls)
        step, clock = self.engine.step, self.clock
        start = clock()
        for actions in batches:
            step(actions)
        return clock() - start


def serve(requests, answer):
    case = None
    for line in requests:
        req = json.loads(line)
        try:
            if req["op"] == "quit":
                return
            if req["op"] == "case":
                case = Case(req)
                answer({"vecenv": case.vecenv})
            elif req["op"] == "round":
                answer({"seconds": case.round()})
            else:
                answer({"error": f"unknown request {req['op']!r}"})
        except Exception as e:  # noqa: BLE001 - sent back to the parent, which reports it
            answer({"error": f"{type(e).__name__}: {e}"})


def main():
    # Started as a script, Python puts this folder first on sys.path: its modules are not the
    # build's. (Everything of the build is imported later, inside the functions above.)
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    channel = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # prints of the build go to stderr
    sys.stdout = sys.stderr

    def answer(doc):
        channel.write(json.dumps(doc) + "\n")
        channel.flush()

    serve(sys.stdin, answer)


if __name__ == "__main__":
    main()
