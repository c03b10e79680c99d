"""``vecenv train``: the command group; ``vecenv train random`` plays episodes with an agent
(the loop is ``cli.episodes``), ``vecenv train ppo`` and ``train eval`` live in ``cli.ppo``,
``vecenv train alphazero`` in ``cli.alphazero``.

An agent is a callable ``agent(observation, action_space, np_random) -> action``; ``AGENTS`` maps
names to agents, so a new one is one function and one entry.
"""

import numpy as np

from . import alphazero, ppo
from .common import CliError, resolve_env
from .episodes import episode_options, play_episodes

_BOX_BOUNDS = {}  # id(space) -> (space, low, span, bounded): sampling every step stays cheap


def _box_bounds(space):
    hit = _BOX_BOUNDS.get(id(space))
    if hit is None or hit[0] is not space:
        low, high = space.low.astype(np.float64), space.high.astype(np.float64)
        bounded = bool(np.isfinite(low).all() and np.isfinite(high).all())
        hit = _BOX_BOUNDS[id(space)] = (space, low, high - low, bounded)
    return hit[1:]


def _sample_unbounded(space, rng):
    low, high = space.low.astype(np.float64), space.high.astype(np.float64)
    finite_low, finite_high = np.isfinite(low), np.isfinite(high)
    x = rng.normal(size=space.shape)  # unbounded both ways
    both = finite_low & finite_high
    x[both] = rng.uniform(low[both], high[both])
    above, below = finite_low & ~finite_high, finite_high & ~finite_low
    x[above] = low[above] + rng.exponential(size=int(above.sum()))
    x[below] = high[below] - rng.exponential(size=int(below.sum()))
    return x.astype(space.dtype)


def sample(space, rng):
    """A uniform random element of a gymnasium space drawn from the generator ``rng``."""
    from gymnasium import spaces

    if isinstance(space, spaces.Discrete):
        return np.int64(space.start + rng.integers(space.n))
    if isinstance(space, spaces.MultiDiscrete):
        return (space.start + rng.integers(space.nvec)).astype(space.dtype)
    if isinstance(space, spaces.MultiBinary):
        return rng.integers(2, size=space.shape).astype(space.dtype)
    if isinstance(space, spaces.Box):
        if np.issubdtype(space.dtype, np.integer):
            return rng.integers(space.low, space.high, endpoint=True).astype(space.dtype)
        low, span, bounded = _box_bounds(space)
        if bounded:  # (rng.uniform is slow on tiny arrays)
            return (low + span * rng.random(space.shape)).astype(space.dtype)
        return _sample_unbounded(space, rng)
    if isinstance(space, spaces.Tuple):
        return tuple(sample(s, rng) for s in space.spaces)
    if isinstance(space, spaces.Dict):
        return {k: sample(s, rng) for k, s in space.spaces.items()}
    return space.sample()


def random_agent(observation, action_space, np_random):
    return sample(action_space, np_random)


AGENTS = {"random": random_agent}


def cmd_train(args, out):
    agent = AGENTS.get(args.agent)
    if agent is None:
        raise CliError(f"unknown agent {args.agent!r}; available: {', '.join(sorted(AGENTS))}")
    env_id, whose = resolve_env(args.env)
    return play_episodes(args, out, agent, args.agent, env_id, whose)


def add_parser(sub):
    train = sub.add_parser(
        "train",
        help="train agents with PPO, play episodes with an agent or a saved policy",
        description="Train a policy (ppo), play episodes with a built-in agent (random) or a "
        "saved policy (eval); episodes print their return and length.",
    )
    kinds = train.add_subparsers(dest="train_command", metavar="AGENT", required=True)
    for name in sorted(AGENTS):
        agent = kinds.add_parser(name, help=f"play episodes with the {name} agent")
        episode_options(agent)
        agent.set_defaults(func=cmd_train, agent=name)
    ppo.add_parsers(kinds)
    alphazero.add_parser(kinds)
