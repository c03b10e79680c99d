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


def test_acrobot_at_256_environments_learns_as_rescaled():
    """Acrobot's configuration is tuned at 32 environments; at 256 with only that changed no seed
    of 1-5 reached the target in its budget (docs/training.md), rescaled (``for_num_envs``)
    every one did."""
    attempt = zoo.attempt("acrobot", 1, num_envs=256)
    entry = zoo.tuned("acrobot")
    assert attempt.solved, attempt
    assert attempt.mean >= entry.target
