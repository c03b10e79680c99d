"""MinAtar's games beside ours with the same random draws.

MinAtar draws from a numpy ``RandomState`` (``Environment.random`` for sticky actions, its game's
``Env.random`` for spawns and speeds), ours from each episode's splitmix64 stream
(``vecenv.kernels.rng``). ``Draws`` stands in for MinAtar's ``RandomState`` and answers each of
its calls with the next word of our episode's stream, converted as our rules convert it (``rand``:
``uniform``, ``randint``: ``integer``). Shared by MinAtar's ``Environment`` and its game, as
``Environment.seed`` shares one ``RandomState``, it makes MinAtar draw exactly what ours draws
when both draw in the same order; the tests then compare the streams' positions too, so a game
drawing more, fewer or other draws than MinAtar fails.

``play_both`` plays whole episodes from MinAtar's own reset state, sticky actions on, comparing
every step; the game tests add hypothesis-injected states stepped in both.
"""

import numpy as np

import vecenv
from tests.envs.reference import need
from vecenv.kernels.rng import GOLDEN, mix64, seed_word

MASK = (1 << 64) - 1


class Draws:
    """MinAtar's ``RandomState`` calls answered from our stream at ``word``."""

    def __init__(self, word):
        self.word = int(word)

    def _bits(self):
        """``vecenv.kernels.rng.next_u64``: the Weyl step, then the mixer."""
        self.word = (self.word + int(GOLDEN)) & MASK
        return int(mix64(np.uint64(self.word)))

    def _uniform(self):  # vecenv.kernels.rng.uniform
        return (self._bits() >> 11) * 2.0**-53

    def _integer(self, n):  # vecenv.kernels.rng.integer
        return ((self._bits() >> 32) * n) >> 32

    def rand(self, *size):
        if not size:
            return self._uniform()
        return np.array([self._uniform() for _ in range(size[0])])

    def randint(self, low, high=None, size=None):
        if high is None:
            low, high = 0, low
        if size is None:
            return low + self._integer(high - low)
        return np.array([low + self._integer(high - low) for _ in range(size)])


def minatar(game, word, sticky_action_prob=0.0, ramping=True):
    """MinAtar's ``Environment`` for ``game``, its draws ours from ``word`` on; not yet reset."""
    environment = need("minatar.environment", "MinAtar").Environment
    env = environment(game, sticky_action_prob=sticky_action_prob, difficulty_ramping=ramping)
    env.random = env.env.random = Draws(word)
    return env


def full_action(engine, action):
    """Our action as MinAtar's (its full numbering)."""
    if engine.config["minimal_actions"]:
        return int(MINIMAL[engine.name][action])
    return int(action)


MINIMAL = {  # MinAtar's minimal_action_set() of each game
    "minatar_asterix": (0, 1, 2, 3, 4),
    "minatar_freeway": (0, 2, 4),
    "minatar_seaquest": (0, 1, 2, 3, 4, 5),
    "minatar_space_invaders": (0, 1, 3, 5),
}


def check_step(engine, theirs, same, where):
    """Our episode 0 is MinAtar's ``theirs``: the state by ``same(record, env)`` (which asserts),
    the observation, and the stream's position."""
    record = engine.get_state(0)
    same(record, theirs.env)
    np.testing.assert_array_equal(engine.obs["obs"][0, 0], theirs.state(), err_msg=where)
    assert int(record["rng"]) == theirs.random.word, f"{where}: the streams drew differently"


def step_both(ours, theirs, same, actions):
    """Step our episode 0 and MinAtar's ``theirs`` through ``actions`` (ours) until the episode
    ends, comparing every step; returns (steps, return)."""
    total = 0.0
    for t, action in enumerate(actions):
        reward, terminal = theirs.act(full_action(ours, action))
        _, rewards, terminated, _ = ours.step(np.array([action]))
        assert rewards[0, 0] == reward, f"step {t}"
        assert bool(terminated[0]) == terminal, f"step {t}"
        total += reward
        check_step(ours, theirs, same, f"step {t}")
        if terminal:
            return t + 1, total
    return len(actions), total


def start_both(game, same, seed, full=False, sticky=0.1, ramping=True):
    """Our episode 0 of ``seed`` and MinAtar's game, both reset (MinAtar's reset drawing what
    ours drew) and compared; ``ramping`` None for a game without difficulty ramping."""
    config = {"sticky_action_prob": sticky, "minimal_actions": not full}
    if ramping is not None:
        config["difficulty_ramping"] = ramping
    ours = vecenv.make(game, num_envs=1, seed=seed, max_episode_steps=0, **config)
    theirs = minatar(game[len("minatar_") :], seed_word(seed, 0), sticky, bool(ramping))
    theirs.reset()
    check_step(ours, theirs, same, "reset")
    return ours, theirs


def play_both(game, same, seed, full, sticky=0.1, ramping=True, max_steps=3000):
    """A whole episode from MinAtar's reset state with random actions in both, sticky actions
    at ``sticky``; returns (steps, return)."""
    ours, theirs = start_both(game, same, seed, full, sticky, ramping)
    high = int(ours.action.high[0])
    actions = np.random.default_rng(seed).integers(0, high + 1, size=max_steps)
    return step_both(ours, theirs, same, actions)


def injection_engines(game, **config):
    """{ramping: engine} with difficulty ramping off and on, for injected states: one episode,
    sticky actions off, no time limit, ``config`` besides (the full action set, where a game has a
    minimal one)."""
    return {
        ramping: vecenv.make(
            game,
            num_envs=1,
            seed=0,
            sticky_action_prob=0.0,
            difficulty_ramping=ramping,
            max_episode_steps=0,
            **config,
        )
        for ramping in (False, True)
    }


def running(engine, state, word):
    """Our episode 0 set to the record ``state``, running, its stream at ``word``."""
    state["rng"] = word
    state["done"] = state["step"] = 0  # whatever an earlier example left
    engine.set_state(state, 0)
