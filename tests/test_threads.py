"""``vecenv.threads``: how many threads a step uses, decided from timed steps of both loops.

The policy is fed made-up step times here (it never reads a clock itself), so every rule is
checked exactly: which steps it asks to time, what it keeps, when it asks again. The engine's
own use of it (the same episodes on either loop) is in tests/test_engine.py.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vecenv import threads
from vecenv.threads import MARGIN, PARALLEL_MIN_ENVS, PROBES, RECHECK, Threads

N = PARALLEL_MIN_ENVS
BIG = 1e-3  # a serial step long enough to feed any number of threads


def decide(policy, serial, threaded):
    """Answer the policy's timed steps (serial and threaded times from the two lists, the
    first threaded step too) until it decides; returns the steps it took."""
    serial, threaded = iter(serial), iter(threaded)
    taken = 0
    while policy.deciding:
        k = policy.next()
        assert policy.timing
        policy.record(k, next(serial) if k == 1 else next(threaded))
        taken += 1
    return taken


def test_small_batches_and_one_thread_never_time_or_thread():
    for policy in (Threads(2, N - 1), Threads(1, 10 * N), Threads(2, N - 1, forced=True)):
        assert not policy.possible and policy.chosen == 1 and policy.uses_threads is False
        assert policy.next() == 1 and not policy.timing


def test_forced_loops_are_kept():
    assert Threads(2, N, forced=True).next() == 2
    serial = Threads(2, N, forced=False)
    assert serial.next() == 1 and not serial.timing and not serial.deciding


def test_threads_are_kept_only_when_clearly_faster():
    fast = Threads(2, N)
    assert fast.uses_threads is None
    # the first threaded step (waking the pool) is slow and not counted
    decide(fast, [BIG] * 9, [50 * BIG] + [0.6 * BIG] * 8)
    assert fast.chosen == 2 and fast.uses_threads is True and fast.next() == 2
    close = Threads(2, N)
    decide(close, [BIG] * 9, [BIG] + [(1 - MARGIN / 2) * BIG] * 8)
    assert close.chosen == 1  # within the margin: serial, never a slower step for a guess
    slow = Threads(2, N)
    decide(slow, [BIG] * 9, [2 * BIG] * 9)
    assert slow.chosen == 1 and slow.uses_threads is False


def test_the_plan_alternates_the_loops_after_a_serial_step():
    policy = Threads(2, N)
    ks = []
    while policy.deciding:
        k = policy.next()
        ks.append(k)
        policy.record(k, BIG if k == 1 else 0.5 * BIG)
    assert ks == [1] + [2, 1] * PROBES + [2]


def test_work_too_small_to_feed_two_threads_stays_serial_without_timing_threads():
    policy = Threads(2, N)
    k = policy.next()
    policy.record(k, 1.5 * threads.MIN_SECONDS_PER_THREAD)
    assert policy.chosen == 1 and not policy.deciding and policy.next() == 1


def test_work_that_feeds_some_of_many_threads_gets_that_many():
    policy = Threads(8, N)
    policy.record(policy.next(), 3.5 * threads.MIN_SECONDS_PER_THREAD)
    assert policy.next() == 3  # three threads' worth of work: the threaded steps use three
    decide(policy, [BIG] * 9, [0.1 * BIG] * 9)
    assert policy.chosen == 3


def test_the_choice_is_taken_again_as_the_machine_changes():
    policy = Threads(2, N)
    decide(policy, [BIG] * 9, [0.5 * BIG] * 9)
    assert policy.chosen == 2
    for _ in range(RECHECK - 1):
        assert policy.next() == 2 and not policy.timing
    # the next step starts a decision; now threads lose (a busier machine): back to one
    assert policy.next() == 1 and policy.timing and policy.deciding
    policy.record(1, BIG)
    decide(policy, [BIG] * 8, [3 * BIG] * 9)
    assert policy.chosen == 1
    assert policy.state() == {"chosen": 1}
    loaded = Threads(2, N)
    loaded.restore(policy.state())
    assert loaded.chosen == 1 and not loaded.deciding


def test_a_time_it_did_not_ask_for_is_ignored():
    policy = Threads(2, N)
    policy.record(2, 0.0)  # it asked for a serial step first
    assert policy.next() == 1 and policy.deciding


@settings(max_examples=200, deadline=None)
@given(
    serial=st.lists(st.floats(1e-4, 1e-2), min_size=9, max_size=9),
    threaded=st.lists(st.floats(1e-5, 1e-1), min_size=9, max_size=9),
)
def test_threads_only_where_their_median_beats_the_serial_median(serial, threaded):
    policy = Threads(2, N)
    decide(policy, serial, threaded)
    ser = sorted(serial[:5])[2]  # five serial steps are timed, four threaded (the first is not)
    thr = sorted(threaded[1:5])
    thr = (thr[1] + thr[2]) / 2
    if policy.chosen == 2:
        assert thr < (1 - MARGIN) * ser
    else:
        assert thr >= (1 - MARGIN) * ser or ser < 2 * threads.MIN_SECONDS_PER_THREAD


def test_bad_thread_counts_are_refused_by_the_engine():
    import vecenv

    with pytest.raises(ValueError, match="num_threads"):
        vecenv.make("cartpole", num_envs=4, num_threads=0)
