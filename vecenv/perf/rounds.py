"""Interleaved rounds: every timed round of every target follows a calibration round.

In each round each target (in an order rotated from round to round, so that no target always runs
first) is timed right after a calibration round; both see the same load.
"""

import time

from .calibrate import Calibration


def interleaved(targets, rounds, warmup=1):
    """Time ``rounds`` rounds of each target.

    ``targets``: {name: round_fn}, ``round_fn()`` one round of work. Returns
    {name: (round seconds, calibration seconds)}, two lists of ``rounds`` each.
    """
    if rounds < 2:
        raise ValueError(f"rounds must be at least 2, got {rounds}")
    names = list(targets)
    calibration = Calibration()
    for _ in range(warmup):
        for name in names:
            targets[name]()
    times = {name: ([], []) for name in names}
    for r in range(rounds):
        shift = r % len(names)
        for name in names[shift:] + names[:shift]:
            before = calibration.time_round()
            start = time.perf_counter()
            targets[name]()
            elapsed = time.perf_counter() - start
            times[name][0].append(elapsed)
            times[name][1].append(before)
    return times
