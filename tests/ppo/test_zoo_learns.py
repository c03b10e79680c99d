"""The tuned CartPole configuration learns: seeds 1 and 2 reach the target within its budget
(the quick version of ``benchmarks/ppo_zoo.py``, which proves seeds 1-5 of every tuned game)."""

import pytest

from vecenv.ppo import zoo


@pytest.mark.parametrize("seed", [1, 2])
def test_cartpole_reaches_its_target_within_the_budget(seed):
    attempt = zoo.attempt("cartpole", seed)
    entry = zoo.tuned("cartpole")
    assert attempt.solved, attempt
    assert attempt.steps <= entry.config().total_steps
    assert attempt.mean >= entry.target
