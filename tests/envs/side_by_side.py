"""Our classic-control games beside gymnasium's own envs: one step at a time, the same actions.

A ``Game`` names one of ours, its gymnasium counterpart and how states and actions translate
between the two. ``run_side_by_side`` plays whole episodes from our reset states in both;
``one_step_each`` steps many chosen states once; both check every step with
``assert_same_step``.
"""

from dataclasses import dataclass

import gymnasium
import numpy as np

import vecenv
from vecenv import registry


@dataclass(frozen=True)
class Game:
    name: str
    gym_id: str
    # Our state fields, in the order of gymnasium's ``state`` array.
    fields: tuple[str, ...]
    # Further state fields that equal the gymnasium env's attributes of the same name.
    attributes: tuple[str, ...] = ()
    # Configuration parameters whose defaults are the gymnasium env's attributes of the same name.
    parameters: tuple[str, ...] = ()

    def __str__(self):
        return self.name

    @property
    def discrete(self):
        return registry.get_spec(self.name).action.discrete

    def values(self, record):
        """One state record's ``fields`` as gymnasium's float64 state array."""
        return np.array([record[f] for f in self.fields], dtype=np.float64)

    def state(self, engine, i=0):
        return self.values(engine.get_state(i))

    def batch(self, actions):
        """One action per env, as the engine takes them: a discrete game's as given (integers or
        not), a continuous game's as float32 rows of one."""
        if self.discrete:
            return np.asarray(actions)
        return np.asarray(actions, dtype=np.float32).reshape(-1, 1)

    def gym_action(self, a):
        return int(a) if self.discrete else np.array([a], dtype=np.float32)


MOUNTAINCAR = Game(
    "mountaincar", "MountainCar-v0", ("position", "velocity"), parameters=("goal_velocity",)
)
MOUNTAINCAR_CONTINUOUS = Game(
    "mountaincar_continuous",
    "MountainCarContinuous-v0",
    ("position", "velocity"),
    parameters=("goal_velocity",),
)
PENDULUM = Game(
    "pendulum", "Pendulum-v1", ("theta", "theta_dot"), attributes=("last_u",), parameters=("g",)
)
ACROBOT = Game(
    "acrobot",
    "Acrobot-v1",
    ("theta1", "theta2", "dtheta1", "dtheta2"),
    parameters=("book_or_nips",),
)
GAMES = [MOUNTAINCAR, MOUNTAINCAR_CONTINUOUS, PENDULUM, ACROBOT]


def gym_state(env):
    return np.asarray(env.unwrapped.state, dtype=np.float64)


def assert_same_step(game, engine, i, obs, reward, terminated, truncated, env):
    """Our env ``i`` after a step against gymnasium's ``env`` after the same step: states to
    float64 round-off, float32 observations to one ulp, rewards to round-off, equal flags."""
    np.testing.assert_allclose(game.state(engine, i), gym_state(env), rtol=1e-12, atol=1e-12)
    ours = engine.obs["obs"][i, 0]
    assert ours.dtype == obs.dtype == np.float32
    np.testing.assert_array_max_ulp(ours, obs, maxulp=1)
    np.testing.assert_allclose(engine.rewards[i, 0], reward, rtol=1e-12, atol=0)
    assert bool(engine.terminated[i]) == terminated
    assert bool(engine.truncated[i]) == truncated
    record = engine.get_state(i)
    for name in game.attributes:
        assert record[name] == getattr(env.unwrapped, name)


def run_side_by_side(game, policy, *, num_envs, seed, min_steps, rng_seed, watch=None, **config):
    """Episodes from our reset states, in both, until ``min_steps`` steps.

    Ours has ``num_envs`` envs, ``seed`` and ``config``, with autoreset off; gymnasium's is made
    with the same configuration (our episodeSteps is its TimeLimit's max_episode_steps). Each
    episode takes the next of our envs in turn, resets it alone and injects its state into
    gymnasium's. ``policy(rng, episode, state)`` picks each action from gymnasium's current state,
    with ``rng`` seeded by ``rng_seed``; the other envs idle on action 0. ``watch(obs,
    terminated)``, if given, sees every step. Returns each episode's (terminated, truncated,
    steps).
    """
    engine = vecenv.make(game.name, num_envs=num_envs, seed=seed, autoreset="disabled", **config)
    limits = {"max_episode_steps": config.pop("episodeSteps")} if "episodeSteps" in config else {}
    env = gymnasium.make(game.gym_id, **limits, **config)
    rng = np.random.default_rng(rng_seed)
    steps, outcomes, episode = 0, [], 0
    while steps < min_steps:
        i = episode % num_envs
        mask = np.zeros(num_envs, dtype=np.bool_)
        mask[i] = True
        engine.reset(mask=mask)
        env.reset(seed=int(rng.integers(2**31)))
        env.unwrapped.state = game.state(engine, i)
        while True:
            a = policy(rng, episode, env.unwrapped.state)
            actions = np.zeros(num_envs, dtype=np.asarray(a).dtype)
            actions[i] = a
            engine.step(game.batch(actions))
            obs, reward, terminated, truncated, _ = env.step(game.gym_action(a))
            steps += 1
            assert_same_step(game, engine, i, obs, reward, terminated, truncated, env)
            if watch is not None:
                watch(obs, terminated)
            if terminated or truncated:
                outcomes.append((terminated, truncated, engine.get_state(i)["step"]))
                break
        episode += 1
    return outcomes


def ends(outcomes):
    """How many of the episodes terminated, and the distinct step counts, sorted, at which the
    others were truncated."""
    terminated = sum(term for term, _, _ in outcomes)
    return terminated, sorted({int(steps) for _, trunc, steps in outcomes if trunc})


def one_step_each(game, env, starts, actions, step=0, state_dtype=np.float64, **config):
    """Step every start (a tuple of ``game.fields`` values) once in ours and in gymnasium's
    unwrapped ``env``, made with the same ``config``.

    Ours start ``step`` steps into their episodes; gymnasium's from a ``state_dtype`` array.
    Returns gymnasium's (state, terminated) per start.
    """
    n = len(starts)
    engine = vecenv.make(game.name, num_envs=n, seed=0, autoreset="disabled", **config)
    state = engine.get_state()
    for k, f in enumerate(game.fields):
        state[f] = [start[k] for start in starts]
    state["step"] = step
    engine.set_state(state)
    engine.step(game.batch(actions))
    env.reset(seed=0)
    results = []
    for i, (start, a) in enumerate(zip(starts, actions, strict=True)):
        env.state = np.array(start, dtype=state_dtype)
        obs, reward, terminated, truncated, _ = env.step(game.gym_action(a))
        assert_same_step(game, engine, i, obs, reward, terminated, truncated, env)
        results.append((gym_state(env), terminated))
    return results
