"""Batched matches between agents, played inside the engine.

``play(game, agents, matches)`` plays M matches of agent A against agent B at once (of a game of K
agents, K agents A, B, C, ...: one a seat): seats alternate (in match j agent i takes seat
(i + j) % K: A the first seat in even matches of a two-agent game, the second in odd ones),
built-in agents (the game's numba
policies) move inside one compiled call per ply over all matches, and Python policies move once per
ply for the whole batch. A Python policy is a callable ``policy(obs, legal) -> actions``: ``obs``
the engine's observation arrays for its seat (per-agent fields (M, ...), shared fields (M, ...)),
``legal`` the game's legal-move mask (M, actions) or None, returning (M,) integer actions (only the
rows of matches where it is to move are used).

The result holds each match's final Kaggle rewards and statuses per agent (in A, B, ... order), and
a summary: A's wins, draws and losses with 95% confidence intervals (against the best of the
others in a game of more than two agents). ``replays`` plays chosen
matches again through the Kaggle face, for Kaggle-format JSON and HTML replays. The agents sit in
``vecenv.seats.Seats`` (also reachable as ``vecenv.selfplay.Seats``), the engine's own machinery,
which the faces use too.
"""

import math
from dataclasses import dataclass, field

import numpy as np

import vecenv
from vecenv import registry
from vecenv.kernels.turns import (
    ERROR,
    FAILED_REWARD,
    INVALID,
    STATUS_NAMES,
    TIMEOUT,
)

from .inputs import SEED_LIMIT, fresh_seed
from .seats import Seats, agent_name, check_agent, checkpoint_agent, is_checkpoint
from .spec import is_integer
from .stats import Z95, wilson

PLAY_PLIES = 16  # plies a match plays in one call of ``play``'s loop


@dataclass
class Summary:
    """Agent A's results over the matches, from A's point of view: a win where A's reward beats
    every other agent's, a loss where another's beats it, else a draw."""

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
        a = self.agents[0]

        def rate(r):
            return f"{r[0]:6.1%} [{r[1]:.1%}, {r[2]:.1%}]"

        mean = self.mean_reward
        return (
            f"{' vs '.join(self.agents)}: {self.matches} matches\n"
            f"  wins   {self.wins:7d}  {rate(self.win_rate)}\n"
            f"  draws  {self.draws:7d}  {rate(self.draw_rate)}\n"
            f"  losses {self.losses:7d}  {rate(self.loss_rate)}\n"
            f"  mean reward of {a}: {mean[0]:+.3f} [{mean[1]:+.3f}, {mean[2]:+.3f}] (95%)"
        )


@dataclass
class MatchResults:
    """Per match: ``rewards`` (M, K) final rewards of A, B, ... (a failed agent's -1),
    ``statuses`` (M, K) their Kaggle status names' codes, ``seats`` (M,) the seat A played,
    ``plies``; ``order`` (M, K) the seat of each agent."""

    game: str
    agents: tuple
    configuration: dict
    seed: int
    rewards: np.ndarray
    statuses: np.ndarray
    seats: np.ndarray
    plies: np.ndarray
    summary: Summary
    actions: np.ndarray = None  # (plies, M, K) by seat, when kept
    position: object = None  # the position every match (a dict) or each (a list) started from
    # (M,) the engine's records each match started from, when the actions are kept: a replay
    # starts there, so a game's chance (the deal, what it draws later) comes out the same.
    starts: np.ndarray = None
    order: np.ndarray = None  # (M, K): the seat of each agent in each match

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
        if self.starts is not None and self.position is None:
            env.start_record(self.starts[match])
        for ply in range(int(self.plies[match])):
            if env.done:
                break
            env.step([int(a) for a in self.actions[ply, match]])
        return env


def _summary(agents, rewards):
    n = rewards.shape[0]
    a = rewards[:, 0]
    b = rewards[:, 1:].max(axis=1)  # the best of the others
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
    """Play ``matches`` matches of ``agents[0]`` against ``agents[1]`` (and the others, one an
    agent of the game); returns MatchResults.

    ``cluster`` spreads the matches over a Ray cluster (a ``ray.init`` address, or True for the
    cluster this process is connected to or ``RAY_ADDRESS`` names): contiguous runs of matches
    play as Ray tasks, and the results are those of the local run, match for match (built-in
    agents, and Python policies that decide each match's move from its own row). Python
    policies travel with cloudpickle. ``first_match``: these are matches ``first_match`` ..
    ``first_match + matches - 1`` of a larger run of the same seed (how the cluster splits one).

    ``position`` starts the matches from a given position instead of the game's start (an
    opening): one dict for all, or a list of one per match (see ``vecenv.positions``).

    Each agent is a built-in name (the game's ``agents.py``), the search (``mcts``, ``mcts:N``),
    a trained player's file (``FILE.pt``, ``FILE.pt:N``: ``seats.CHECKPOINT``) or a Python
    policy (see the module's docstring). ``alternate`` swaps seats every other match;
    ``progress(done, total)`` is called with the number of finished matches after every call of
    the engine (up to ``PLAY_PLIES`` plies of every match; one ply with ``keep_actions``).
    """
    name = registry.resolve(game)
    spec = registry.get_spec(name)
    k = spec.num_agents
    if k < 2:
        raise ValueError(f"{name} is a one-agent game: matches need a game of several agents")
    if not isinstance(agents, (list, tuple)) or len(agents) != k:
        which = "two agents: (A, B)" if k == 2 else f"{k} agents for {name}: one a seat"
        raise ValueError(f"agents must be {which}")
    if not is_integer(matches) or matches < 1:
        raise ValueError(f"matches must be a positive integer, got {matches!r}")
    # A trained player's file (FILE.pt, FILE.pt:N) is read once, here, for every match.
    agents = tuple(checkpoint_agent(a, name) if is_checkpoint(a) else a for a in agents)
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
    # order[j, i]: the seat agent i plays in match j, (i + j) % k with seats alternating.
    shift = (
        (np.arange(m, dtype=np.int64) + int(first_match)) if alternate else np.zeros(m, np.int64)
    )
    order = (shift[:, None] + np.arange(k)) % k
    seats = order[:, 0].copy()  # the seat agent A plays
    starts = engine.get_state() if keep_actions else None
    table = Seats(engine)
    for i, agent in enumerate(agents):
        table.assign(agent, order[:, i])
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
    rows = np.arange(m)[:, None]
    rewards = final[rows, order]
    statuses = codes[rows, order]
    return MatchResults(
        game=name,
        agents=tuple(agent_name(a) for a in agents),
        configuration=dict(configuration),
        seed=int(seed),
        rewards=rewards,
        statuses=statuses,
        seats=seats,
        plies=plies,
        summary=_summary([agent_name(a) for a in agents], rewards),
        actions=np.stack(kept) if keep_actions and kept else None,
        position=position,
        starts=starts,
        order=order,
    )


def _play_on_cluster(cluster, game, agents, matches, seed, options, progress):
    """``play`` over a Ray cluster: one task per contiguous run of matches, merged in order."""
    from .ray import cluster as ray_cluster

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
        starts=None if head.starts is None else np.concatenate([p.starts for p in parts]),
        order=np.concatenate([p.order for p in parts]),
    )
