"""Batched matches between agents, played inside the engine.

``play(game, agents, matches)`` plays M matches of agent A against agent B at once: seats alternate
(A takes the first seat in even matches, the second in odd ones), built-in agents (the game's numba
policies) move inside one compiled call per ply over all matches, and Python policies move once per
ply for the whole batch. A Python policy is a callable ``policy(obs, legal) -> actions``: ``obs``
the engine's observation arrays for its seat (per-agent fields (M, ...), shared fields (M, ...)),
``legal`` the game's legal-move mask (M, actions) or None, returning (M,) integer actions (only the
rows of matches where it is to move are used).

The result holds each match's final Kaggle rewards and statuses per agent (in A, B order), and a
summary: A's wins, draws and losses with 95% confidence intervals. ``replays`` plays chosen
matches again through the Kaggle face, for Kaggle-format JSON and HTML replays.
"""

import math
from dataclasses import dataclass, field

import numba
import numpy as np

import vecenv
from vecenv import registry, search
from vecenv.kernels.agents import AGENT_RNG, agent_words, memory_words
from vecenv.kernels.turns import (
    ACTIVE,
    ERROR,
    FAILED_REWARD,
    INVALID,
    STATUS_NAMES,
    TIMEOUT,
)

from .engine import SEED_LIMIT, fresh_seed, is_integer
from .stats import Z95, wilson

PLAY_PLIES = 16  # plies a match plays in one call of ``play``'s loop


@dataclass
class Summary:
    """Agent A's results over the matches, from A's point of view."""

    agents: tuple
    matches: int
    wins: int
    draws: int
    losses: int
    win_rate: tuple = field(default=None)  # (estimate, low, high)
    draw_rate: tuple = field(default=None)
    loss_rate: tuple = field(default=None)
    mean_reward: tuple = field(default=None)  # (mean, low, high): normal interval

    def __str__(self):
        a, b = self.agents

        def rate(r):
            return f"{r[0]:6.1%} [{r[1]:.1%}, {r[2]:.1%}]"

        mean = self.mean_reward
        return (
            f"{a} vs {b}: {self.matches} matches\n"
            f"  wins   {self.wins:7d}  {rate(self.win_rate)}\n"
            f"  draws  {self.draws:7d}  {rate(self.draw_rate)}\n"
            f"  losses {self.losses:7d}  {rate(self.loss_rate)}\n"
            f"  mean reward of {a}: {mean[0]:+.3f} [{mean[1]:+.3f}, {mean[2]:+.3f}] (95%)"
        )


@dataclass
class MatchResults:
    """Per match: ``rewards`` (M, 2) final rewards of A and B (a failed agent's -1), ``statuses``
    (M, 2) their Kaggle status names' codes, ``seats`` (M,) the seat A played, ``plies``."""

    game: str
    agents: tuple
    configuration: dict
    seed: int
    rewards: np.ndarray
    statuses: np.ndarray
    seats: np.ndarray
    plies: np.ndarray
    summary: Summary
    actions: np.ndarray = None  # (plies, M, 2) by seat, when kept
    position: object = None  # the position every match (a dict) or each (a list) started from

    def status_names(self, match):
        return [STATUS_NAMES[c] for c in self.statuses[match]]

    def replay(self, match):
        """Match ``match`` played again through the Kaggle face: its ``Environment`` (for
        ``toJSON()`` and ``render(mode="html")``). Needs ``keep_actions=True``."""
        if self.actions is None:
            raise ValueError("replays need the actions: play(..., keep_actions=True)")
        from vecenv import kaggle

        steps = None
        if self.position is not None:
            start = self.position if isinstance(self.position, dict) else self.position[match]
            steps = kaggle.position_steps(self.game, start, self.configuration)
        env = kaggle.make(self.game, configuration=self.configuration, steps=steps)
        for ply in range(int(self.plies[match])):
            if env.done:
                break
            env.step([int(a) for a in self.actions[ply, match]])
        return env


def _summary(agents, rewards):
    n = rewards.shape[0]
    a = rewards[:, 0]
    b = rewards[:, 1]
    wins = int((a > b).sum())
    losses = int((a < b).sum())
    draws = n - wins - losses
    mean = float(a.mean()) if n else 0.0
    sd = float(a.std(ddof=1)) if n > 1 else 0.0
    half = Z95 * sd / math.sqrt(n) if n else 0.0
    return Summary(
        agents=tuple(agents),
        matches=n,
        wins=wins,
        draws=draws,
        losses=losses,
        win_rate=(wins / n if n else 0.0, *wilson(wins, n)),
        draw_rate=(draws / n if n else 0.0, *wilson(draws, n)),
        loss_rate=(losses / n if n else 0.0, *wilson(losses, n)),
        mean_reward=(mean, mean - half, mean + half),
    )


def builtin_names(game):
    """The names of the agents every seat of ``game`` may be given: its own (``agents.py``)
    and, for a two-agent game, ``mcts`` (``vecenv.search``)."""
    module = registry.game_module(game, "agents")
    names = tuple(module.NAMES) if module is not None else ()
    if registry.get_spec(game).num_agents == 2:
        names += (search.AGENT,)
    return names


def check_agent(game, agent):
    """A ValueError unless ``agent`` is one of the game's built-in names, the search agent
    (``mcts``, ``mcts:N`` or a ``search.MCTSAgent``) or a callable."""
    if search.agent_spec(agent) is not None:
        return
    module = registry.game_module(game, "agents")
    names = tuple(module.NAMES) if module is not None else ()
    if isinstance(agent, str) and agent not in names:
        known = ", ".join(builtin_names(game))
        raise ValueError(f"unknown agent {agent!r} for {game}; built-in agents: {known}")
    if not isinstance(agent, str) and not callable(agent):
        raise ValueError(f"an agent must be a built-in name or a callable, got {agent!r}")


def _array(name, doc):
    """A read-only attribute holding one of ``Seats``' arrays."""
    return property(lambda self: getattr(self, name), doc=doc)


class Seats:
    """Who plays which seat of every episode of a two-agent engine, and their moves.

    Built-in agents keep, per episode and seat, their memory and random stream (derived from the
    episode's seed, so an episode's moves never depend on the others); Python policies are called
    once per ply for the whole batch."""

    # The compiled step takes these arrays without checking their types: they can be read and
    # written in place, never replaced.
    kinds = _array(
        "_kinds", "(N, 2) int64: each seat's built-in agent (its index in ``names``), -1 for none"
    )
    memory = _array("_memory", "(N, 2, words) int64: each built-in agent's memory")
    rngs = _array("_rngs", "(N, 2) records: each built-in agent's random stream")
    actions = _array("_actions", "(N, 2): the moves of the last ``step``")
    returns = _array("_returns", "(N, 2) float64: rewards summed over every ``step``")
    ends = _array("_ends", "(N,) int64: episodes ended over every ``step``")

    def __init__(self, engine):
        self.engine = engine
        m = engine.num_envs
        self.module = registry.game_module(engine.name, "agents")
        self.names = tuple(self.module.NAMES) if self.module is not None else ()
        self._kinds = np.full((m, 2), -1, dtype=np.int64)  # -1: not a built-in agent
        words = memory_words(self.module, engine.config) if self.module is not None else 1
        self._memory = np.zeros((m, 2, words), dtype=np.int64)
        self._rngs = np.zeros((m, 2), dtype=AGENT_RNG)
        self.reseed()
        self.policies = []  # (policy, seat of each episode)
        self._bind()
        self.low = int(engine.action.low[0])
        # ``step``'s moves (in the engine's action type), and its running totals per episode:
        # each agent's rewards and the episodes ended (set them to zero to start over).
        self._actions = np.zeros((m, 2), dtype=engine._act_dtype)
        self._returns = np.zeros((m, 2), dtype=np.float64)
        self._ends = np.zeros(m, dtype=np.int64)

    def _bind(self):
        drivers = self.engine._drivers
        threaded = self.engine.num_threads > 1
        self._act = drivers.act_agents_parallel if threaded else drivers.act_agents

    # Pickled with its engine, the agents' memories and streams and the Python policies (which
    # must pickle themselves); modules and compiled code are looked up again where it loads.
    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k not in ("module", "_act")}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.module = registry.game_module(self.engine.name, "agents")
        self._bind()

    def assign(self, agent, seat_of):
        """``agent`` plays seat ``seat_of[i]`` of episode i, instead of whoever played it."""
        check_agent(self.engine.name, agent)
        rows = np.arange(self.engine.num_envs)
        searcher = search.agent_spec(agent)
        if searcher is not None:  # the search: it moves where a Python policy would
            self._kinds[rows, seat_of] = -1
            seats = np.asarray(seat_of, dtype=np.int64)
            self.policies.append((search.SeatSearch(self.engine, searcher), seats))
        elif isinstance(agent, str):
            self._kinds[rows, seat_of] = self.names.index(agent)
        else:
            self._kinds[rows, seat_of] = -1
            self.policies.append((agent, np.asarray(seat_of, dtype=np.int64)))

    def reseed(self, mask=None):
        """Restart the agents' streams (where ``mask``) from their episodes' seeds (the words the
        engine's last seeded reset started the episodes from)."""
        m = self.engine.num_envs
        mask = np.ones(m, dtype=np.bool_) if mask is None else mask
        words = np.zeros((m, 2), dtype=np.uint64)
        agent_words(self.engine._words, words, mask)
        self._rngs["rng"][mask] = words[mask]

    def new_matches(self, mask):
        """The episodes where ``mask`` start new matches: their agents forget."""
        self._memory[mask] = 0

    def moves(self, actions):
        """Every seat's move where it is to move (the action's lowest value elsewhere)."""
        engine = self.engine
        actions[:] = self.low
        if engine.num_threads > 1:
            numba.set_num_threads(engine.num_threads)
        self._act(
            engine._states, engine._cfg, engine._obs, self._kinds, self._memory, self._rngs, actions
        )
        self._python_moves(actions)

    def step(self, plies=1):
        """Every seat moves where it is to move, then every episode steps, ``plies`` times:
        ``moves`` and the engine's ``step`` in one compiled pass over the episodes, each episode
        playing its plies in a row (Python policies move first, for the whole batch, so with
        them each ply is a call of its own). The same moves and states as ``plies`` rounds of
        ``moves`` and ``step``. ``actions`` holds each seat's latest move of the call (the
        action's lowest value for a seat that did not move), ``returns`` and ``ends`` add up
        the rewards and the episodes ended; returns the engine's ``step`` result for the last
        ply."""
        if not is_integer(plies) or not 1 <= plies < 2**63:
            raise ValueError(f"plies must be a positive integer, got {plies!r}")
        engine = self.engine
        flat = self._actions.reshape(engine._flat_shape)
        per_call = 1 if self.policies else int(plies)
        for _ in range(int(plies) // per_call):
            self._actions[:] = self.low
            self._python_moves(self._actions)
            result = engine._step_agents(
                flat, self._kinds, self._memory, self._rngs, per_call, self._returns, self._ends
            )
        return result

    def _python_moves(self, actions):
        if not self.policies:
            return
        status = self.engine._states["status"]
        for policy, seat_of in self.policies:
            if isinstance(policy, search.SeatSearch):
                policy.moves(self, seat_of, actions)
            else:
                _python_moves(self.engine, policy, seat_of, status, self._kinds, actions)


def _agent_name(agent):
    if isinstance(agent, search.MCTSAgent):
        return agent.name
    return agent if isinstance(agent, str) else getattr(agent, "__name__", type(agent).__name__)


def play(
    game,
    agents,
    matches,
    seed=None,
    num_threads=1,
    alternate=True,
    keep_actions=False,
    progress=None,
    position=None,
    cluster=None,
    first_match=0,
    **configuration,
):
    """Play ``matches`` matches of ``agents[0]`` against ``agents[1]``; returns MatchResults.

    ``cluster`` spreads the matches over a Ray cluster (a ``ray.init`` address, or True for the
    cluster this process is connected to or ``RAY_ADDRESS`` names): contiguous runs of matches
    play as Ray tasks, and the results are those of the local run, match for match (built-in
    agents, and Python policies that decide each match's move from its own row). Python
    policies travel with cloudpickle. ``first_match``: these are matches ``first_match`` ..
    ``first_match + matches - 1`` of a larger run of the same seed (how the cluster splits one).

    ``position`` starts the matches from a given position instead of the game's start (an
    opening): one dict for all, or a list of one per match (see ``vecenv.positions``).

    Each agent is a built-in name (the game's ``agents.py``) or a Python policy (see the module's
    docstring). ``alternate`` swaps seats every other match; ``progress(done, total)`` is called
    with the number of finished matches after every call of the engine (up to ``PLAY_PLIES``
    plies of every match; one ply with ``keep_actions``).
    """
    name = registry.resolve(game)
    spec = registry.get_spec(name)
    if spec.num_agents != 2:
        raise ValueError(f"{name} is not a two-agent game")
    if not isinstance(agents, (list, tuple)) or len(agents) != 2:
        raise ValueError("agents must be two agents: (A, B)")
    if not is_integer(matches) or matches < 1:
        raise ValueError(f"matches must be a positive integer, got {matches!r}")
    for agent in agents:
        check_agent(name, agent)
    seed = fresh_seed() if seed is None else seed
    if not is_integer(seed) or not 0 <= seed < SEED_LIMIT:
        raise ValueError(f"seed must be an integer in [0, 2**63), got {seed!r}")
    if not is_integer(first_match) or first_match < 0:
        raise ValueError(f"first_match must be a non-negative integer, got {first_match!r}")
    if cluster is not None and cluster is not False:
        return _play_on_cluster(
            cluster,
            name,
            agents,
            int(matches),
            int(seed),
            dict(
                alternate=alternate,
                keep_actions=keep_actions,
                num_threads=num_threads,
                position=position,
                **configuration,
            ),
            progress,
        )
    m = int(matches)
    engine = vecenv.make(
        name,
        num_envs=m,
        seed=int(seed),
        num_threads=num_threads,
        autoreset="disabled",
        # Calls of PLAY_PLIES plies of a large batch always pay for threads; single plies (to
        # keep the actions) may not, so the engine times a few first.
        parallel=None if keep_actions else num_threads > 1,
        **configuration,
    )
    if first_match:
        engine.first_episode = int(first_match)
        engine.reset(seed=int(seed), position=position)
    else:
        engine.reset(position=position)
    seats = np.zeros(m, dtype=np.int64)  # the seat agent A plays
    if alternate:
        seats[(1 + int(first_match)) % 2 :: 2] = 1
    table = Seats(engine)
    table.assign(agents[0], seats)
    table.assign(agents[1], 1 - seats)
    kept = []
    # Plies a call: the matches play them in a row; one at a time where each ply's moves are kept.
    per_call = 1 if keep_actions else PLAY_PLIES
    running = True
    while running:
        table.step(per_call)
        if keep_actions:
            kept.append(table.actions.copy())
        ended = int(table.ends.sum())
        running = ended < m
        if progress is not None:
            progress(ended, m)
    plies = engine._states["step"].copy()  # every match is one episode of the engine

    final = engine._states["reward"].copy()
    codes = engine._states["status"].copy()
    failed = np.isin(codes, (ERROR, INVALID, TIMEOUT))
    final[failed] = FAILED_REWARD
    order = np.stack([seats, 1 - seats], axis=1)  # (A's seat, B's seat) per match
    rows = np.arange(m)[:, None]
    rewards = final[rows, order]
    statuses = codes[rows, order]
    return MatchResults(
        game=name,
        agents=tuple(_agent_name(a) for a in agents),
        configuration=dict(configuration),
        seed=int(seed),
        rewards=rewards,
        statuses=statuses,
        seats=seats,
        plies=plies,
        summary=_summary([_agent_name(a) for a in agents], rewards),
        actions=np.stack(kept) if keep_actions and kept else None,
        position=position,
    )


def _play_on_cluster(cluster, game, agents, matches, seed, options, progress):
    """``play`` over a Ray cluster: one task per contiguous run of matches, merged in order."""
    from . import cluster as ray_cluster

    ray = ray_cluster.connect(cluster)
    runs = min(matches, ray_cluster.cpus())
    base, extra = divmod(matches, runs)
    position = options.pop("position")
    task = ray.remote(num_cpus=1)(play)
    refs, first = [], 0
    for r in range(runs):
        n = base + (r < extra)
        start = position[first : first + n] if isinstance(position, (list, tuple)) else position
        refs.append(
            task.remote(game, agents, n, seed=seed, first_match=first, position=start, **options)
        )
        first += n
    parts, done = [], 0
    for ref in refs:  # in order: the merged arrays are the local run's
        parts.append(ray.get(ref))
        done += parts[-1].rewards.shape[0]
        if progress is not None:
            progress(done, matches)
    return _merge(parts, position)


def _merge(parts, position):
    """One ``MatchResults`` from those of consecutive runs of matches."""
    head = parts[0]
    rewards = np.concatenate([p.rewards for p in parts])
    actions = None
    if head.actions is not None:
        plies = max(p.actions.shape[0] for p in parts)
        spec = registry.get_spec(head.game)
        low = spec.action_spec(spec.resolve_configuration(head.configuration)).low[0]
        padded = []
        for p in parts:
            a = p.actions
            # A run whose matches all ended earlier: its seats' moves read the action's lowest
            # value from then on, as they do in one run of every match.
            fill = np.full((plies - a.shape[0],) + a.shape[1:], low, dtype=a.dtype)
            padded.append(np.concatenate([a, fill]))
        actions = np.concatenate(padded, axis=1)
    return MatchResults(
        game=head.game,
        agents=head.agents,
        configuration=head.configuration,
        seed=head.seed,
        rewards=rewards,
        statuses=np.concatenate([p.statuses for p in parts]),
        seats=np.concatenate([p.seats for p in parts]),
        plies=np.concatenate([p.plies for p in parts]),
        summary=_summary(head.agents, rewards),
        actions=actions,
        position=position,
    )


def _python_moves(engine, policy, seat_of, status, kinds, actions):
    """One batched call of a Python policy for its seat in every match; its actions go where it
    is to move and no built-in agent has taken the seat since. A result of the wrong shape or
    type is a ValueError naming the policy; a move out of the action's range makes that match's
    seat INVALID, as Kaggle rules an out-of-schema action, and leaves every other match alone."""
    rows = np.arange(engine.num_envs)
    obs = {}
    for f in engine.observation:
        arr = engine.obs[f.name]
        obs[f.name] = arr if f.shared else arr[rows, seat_of]
    legal = obs.get("legal")
    out = np.asarray(policy(obs, legal))
    if out.shape != (engine.num_envs,) or not np.issubdtype(out.dtype, np.integer):
        raise ValueError(
            f"policy {_agent_name(policy)} must return ({engine.num_envs},) integers, "
            f"got {out.dtype} {out.shape}"
        )
    to_move = (status[rows, seat_of] == ACTIVE) & (kinds[rows, seat_of] < 0)
    low, high = int(engine.action.low[0]), int(engine.action.high[0])
    bad = to_move & ((out < low) | (out > high))
    status[rows[bad], seat_of[bad]] = INVALID
    ok = to_move & ~bad
    actions[rows[ok], seat_of[ok]] = out[ok]
