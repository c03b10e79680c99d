"""A count-based exploration bonus: SimHash counts (Tang et al., 2017, "#Exploration: A Study of
Count-Based Exploration for Deep Reinforcement Learning").

Some games give no reward at all to a uniformly random policy, so PPO, which explores only by
sampling its own policy, never sees one: csuite's pendulum pays only within 30 degrees of upright,
and random torques never swing it past about 80 degrees. A bonus for reaching observations seen
rarely before drives the policy to new states until the game's own reward takes over. Each
observation (flattened, before any normalisation) is hashed to ``bits`` bits, the signs of its
projections on fixed random directions (drawn from the seed), so that near observations share a
code; the bonus for arriving at an observation is ``scale / sqrt(n)``, ``n`` the times its code has
been seen, this one included. It shrinks as the states become familiar, and the trainer adds it to
the rewards it learns from only: what a run reports (the running mean, its target) is the game's
own reward.
"""

import numpy as np

MAX_BITS = 20  # codes index a table of 2**bits counts (4 MiB at 20)


class CountBonus:
    """The bonus for a batch of observations, counting them as it goes."""

    def __init__(self, size, bits, scale, seed):
        if isinstance(bits, bool) or not isinstance(bits, (int, np.integer)):
            raise ValueError(f"explore_bits must be an integer in [1, {MAX_BITS}], got {bits!r}")
        if not 1 <= bits <= MAX_BITS:
            raise ValueError(f"explore_bits must be an integer in [1, {MAX_BITS}], got {bits!r}")
        self.scale = float(scale)
        # Its own stream of the seed: the network's initialisation and the actions keep theirs.
        rng = np.random.default_rng([int(seed), 0x5EED])
        self.directions = rng.standard_normal((int(size), int(bits)))
        self.powers = 1 << np.arange(int(bits), dtype=np.int64)
        self.counts = np.zeros(1 << int(bits), dtype=np.int32)

    def codes(self, x):
        """Each row's code: bit j set where its projection on direction j is positive."""
        return (np.asarray(x, dtype=np.float64) @ self.directions > 0) @ self.powers

    def __call__(self, x, valid):
        """The bonus of each row of the (n, size) observations ``x`` (0 where not ``valid``),
        after counting the valid ones in."""
        codes = self.codes(x)
        np.add.at(self.counts, codes[valid], 1)
        seen = np.maximum(self.counts[codes], 1)
        return np.where(valid, self.scale / np.sqrt(seen), 0.0)
