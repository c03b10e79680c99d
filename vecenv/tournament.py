"""Round-robin tournaments of K agents of a game of several agents, with ratings and a
cross-table.

``round_robin(game, agents, matches_per_pair)`` plays every pair of agents ``matches_per_pair``
matches with ``vecenv.selfplay.play`` (seats alternating), locally or over a Ray cluster
(``cluster=``, the same results), and rates the agents with OpenSkill's Plackett-Luce model
(the ``tournament`` extra), updating match by match in a fixed order so that the same seed
gives the same ratings. Agents are built-in names (the search agent ``mcts`` or ``mcts:N``
included), checkpoints (``FILE.pt``: a policy saved by ``vecenv train ppo``, or a network saved
by ``vecenv train alphazero``, which plays with search, ``FILE.pt:N`` N simulations a move) or
Python policies (callables, or ``module:function`` references).
"""

import html
import os
from dataclasses import dataclass, field

import numpy as np

from . import extras, registry, search, selfplay, variants
from .seats import CHECKPOINT, agent_name, function_agent


def agent(spec, game=None):
    """A tournament entrant from its command-line spelling: a checkpoint (``FILE.pt`` or
    ``FILE.pt:N``, trained on ``game`` where given; see ``checkpoint``),
    ``module:function`` (a Python policy), the search agent (``mcts``, ``mcts:N``) or a
    built-in agent's name."""
    if not isinstance(spec, str):
        return spec
    if search.agent_spec(spec) is not None:
        return spec
    if CHECKPOINT.fullmatch(spec) is not None:
        return named_checkpoint(spec, game)
    if ":" in spec:
        return function_agent(spec)
    return spec


def named_checkpoint(spelling, game=None):
    """The player of ``FILE.pt`` or ``FILE.pt:N`` (``seats.CHECKPOINT``), named so (see
    ``checkpoint``)."""
    match = CHECKPOINT.fullmatch(spelling)
    if match is None:
        raise ValueError(f"{spelling!r} names no checkpoint (FILE.pt or FILE.pt:N)")
    simulations = match.group("simulations")
    simulations = None if simulations is None else int(simulations)
    return checkpoint(match.group("path"), game, simulations, name=spelling)


def checkpoint(path, game=None, simulations=None, name=None):
    """The player saved at ``path``, told apart by its contents: a PPO policy (``vecenv train
    ppo``) plays its network's moves; an AlphaZero network (``vecenv train alphazero``) plays
    with the search, ``simulations`` a move (None: those its run evaluated it with; 0: the
    network alone, no search). A missing file, a file that is neither, or a checkpoint of
    another game than ``game`` is a ValueError."""
    from vecenv import alphazero, ppo  # PyTorch: only where a checkpoint is named

    name = path if name is None else name
    data = _read(path)
    kind = data.get("format")
    if kind == alphazero.FORMAT:
        player = alphazero.from_data(data, path, game=game)
        if simulations == 0:
            return _Named(player.policy, name)
        return player.agent(simulations, name=name)
    if simulations is not None:
        refuse_simulations(name, path)
    return ppo.checkpoint.from_data(data, path, game=game).selfplay


def refuse_simulations(name, path):
    """The ValueError of ``FILE.pt:N`` naming a PPO policy: only a network searches."""
    raise ValueError(
        f"{name!r}: only an AlphaZero checkpoint (vecenv train alphazero) plays with "
        f"N simulations; {path} is a PPO policy"
    )


def load(path, game=None):
    """The checkpoint at ``path`` loaded, told apart by its contents: an AlphaZero network's
    ``vecenv.alphazero.Player`` or a PPO policy's ``vecenv.ppo.Policy``. A missing file, a file
    that is neither, or a checkpoint of another game than ``game`` is a ValueError."""
    from vecenv import alphazero, ppo  # PyTorch: only where a checkpoint is named

    data = _read(path)
    if data.get("format") == alphazero.FORMAT:
        return alphazero.from_data(data, path, game=game)
    return ppo.checkpoint.from_data(data, path, game=game)


def _read(path):
    """The data of the checkpoint file ``path``, read once and checked (``vecenv.checkpoints``):
    an AlphaZero network's or a PPO policy's, else a ValueError."""
    from vecenv import alphazero, checkpoints, ppo

    if not os.path.isfile(path):
        raise ValueError(f"{path}: no such checkpoint file")
    data = checkpoints.read(path)
    if data.get("format") not in (alphazero.FORMAT, ppo.checkpoint.FORMAT):
        raise ValueError(
            f"{path}: not a vecenv checkpoint (a policy of vecenv train ppo or a network of "
            "vecenv train alphazero)"
        )
    return data


class _Named:
    """A Python policy under another name (the spelling that named it)."""

    def __init__(self, policy, name):
        self.policy, self.__name__ = policy, name

    def __call__(self, obs, legal):
        return self.policy(obs, legal)


def _name(entrant, spec):
    return spec if isinstance(spec, str) else agent_name(entrant)


@dataclass
class Rating:
    name: str
    mu: float
    sigma: float

    @property
    def ordinal(self):
        """A conservative skill: mu - 3 sigma (OpenSkill's ordinal)."""
        return self.mu - 3 * self.sigma


@dataclass
class Tournament:
    """``table[i, j]``: (wins, draws, losses) of agent i against agent j; ``ratings`` best
    first; ``pairs``: each pair's ``MatchResults`` (i < j, i as agent A)."""

    game: str
    names: list
    matches_per_pair: int
    seed: int
    table: np.ndarray
    ratings: list
    pairs: dict = field(repr=False)

    def score(self, i, j):
        """Agent i's score against j: (wins + draws / 2) / matches."""
        w, d, lo = self.table[i, j]
        n = w + d + lo
        return (w + d / 2) / n if n else float("nan")

    def __str__(self):
        width = max(len(n) for n in self.names) + 2
        lines = [f"{self.game}: round robin, {self.matches_per_pair} matches per pair"]
        lines.append("".ljust(width) + "".join(n[: width - 1].rjust(width) for n in self.names))
        for i, name in enumerate(self.names):
            cells = [
                "-".rjust(width) if i == j else f"{self.score(i, j):.3f}".rjust(width)
                for j in range(len(self.names))
            ]
            lines.append(name.ljust(width) + "".join(cells))
        lines.append("ratings (OpenSkill Plackett-Luce; ordinal = mu - 3 sigma):")
        for r in self.ratings:
            lines.append(
                f"  {r.name:<{width}} mu {r.mu:7.3f}  sigma {r.sigma:6.3f}  {r.ordinal:7.3f}"
            )
        return "\n".join(lines)

    def html(self):
        """A self-contained HTML page: the cross-table (row's score against column, with
        wins/draws/losses) and the ratings."""
        e = html.escape
        head = "".join(f"<th>{e(n)}</th>" for n in self.names)
        rows = []
        for i, name in enumerate(self.names):
            cells = []
            for j in range(len(self.names)):
                if i == j:
                    cells.append("<td class=self>-</td>")
                    continue
                w, d, lo = (int(x) for x in self.table[i, j])
                s = self.score(i, j)
                shade = int(255 * (1 - abs(s - 0.5)))
                colour = f"rgb({shade},255,{shade})" if s >= 0.5 else f"rgb(255,{shade},{shade})"
                cells.append(
                    f'<td style="background:{colour}" title="{w} wins, {d} draws, {lo} losses">'
                    f"{s:.3f}<br><small>{w}/{d}/{lo}</small></td>"
                )
            rows.append(f"<tr><th>{e(name)}</th>{''.join(cells)}</tr>")
        ratings = "".join(
            f"<tr><td>{k + 1}</td><td>{e(r.name)}</td><td>{r.mu:.3f}</td><td>{r.sigma:.3f}</td>"
            f"<td>{r.ordinal:.3f}</td></tr>"
            for k, r in enumerate(self.ratings)
        )
        return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>{e(self.game)} tournament</title>
<style>body{{font-family:sans-serif}}table{{border-collapse:collapse;margin:1em 0}}
td,th{{border:1px solid #999;padding:4px 8px;text-align:center}}td.self{{background:#eee}}</style>
</head><body>
<h1>{e(self.game)}: round robin</h1>
<p>{self.matches_per_pair} matches per pair, seed {self.seed}, seats alternating. A cell is the
row agent's score against the column agent (wins + draws / 2, over matches), with
wins/draws/losses.</p>
<table id="cross-table"><tr><th></th>{head}</tr>{"".join(rows)}</table>
<h2>Ratings</h2>
<p>OpenSkill's Plackett-Luce model, one update per match; ordinal = mu - 3 sigma.</p>
<table id="ratings"><tr><th>#</th><th>agent</th><th>mu</th><th>sigma</th><th>ordinal</th></tr>
{ratings}</table>
</body></html>
"""


def _rate(names, pairs):
    """OpenSkill ratings from every match, pair by pair and match by match."""
    extras.require("tournament", "tournament ratings")
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings = [model.rating(name=n) for n in names]
    for (i, j), result in sorted(pairs.items()):
        for a, b in zip(result.rewards[:, 0], result.rewards[:, 1:].max(axis=1), strict=True):
            ranks = [1, 1] if a == b else ([1, 2] if a > b else [2, 1])
            [[ratings[i]], [ratings[j]]] = model.rate([[ratings[i]], [ratings[j]]], ranks=ranks)
    out = [Rating(n, float(r.mu), float(r.sigma)) for n, r in zip(names, ratings, strict=True)]
    return sorted(out, key=lambda r: -r.ordinal)


def round_robin(
    game,
    agents,
    matches_per_pair,
    seed=0,
    cluster=None,
    num_threads=1,
    progress=None,
    **configuration,
):
    """Every pair of ``agents`` plays ``matches_per_pair`` matches; returns a ``Tournament``.
    In a game of K > 2 agents, pair (i, j) seats agent i against K - 1 copies of agent j (seats
    rotating): i wins a match where its reward beats each of theirs, loses where one beats it.

    Pair (i, j), i < j, is played with the seed ``seed + pair index`` (pairs in order), so a
    pair's matches do not depend on the other agents. ``progress(pairs_done, pairs)``.
    """
    extras.require("tournament", "tournament ratings")  # before the matches, not after
    name = registry.resolve(game)
    seats = registry.get_spec(name).num_agents
    specs = list(agents)
    if len(specs) < 2:
        raise ValueError("a tournament needs at least two agents")
    entrants = [agent(s, name) for s in specs]
    names = [_name(e, s) for e, s in zip(entrants, specs, strict=True)]
    if len(set(names)) != len(names):
        raise ValueError(f"agents must have distinct names, got {names}")
    k = len(entrants)
    order = [(i, j) for i in range(k) for j in range(i + 1, k)]
    pairs = {}
    table = np.zeros((k, k, 3), dtype=np.int64)
    for p, (i, j) in enumerate(order):
        result = selfplay.play(
            name,
            (entrants[i],) + (entrants[j],) * (seats - 1),
            matches_per_pair,
            seed=int(seed) + p,
            num_threads=num_threads,
            cluster=cluster,
            **configuration,
        )
        pairs[(i, j)] = result
        s = result.summary
        table[i, j] = (s.wins, s.draws, s.losses)
        table[j, i] = (s.losses, s.draws, s.wins)
        if progress is not None:
            progress(p + 1, len(order))
    return Tournament(
        game=name,
        names=names,
        matches_per_pair=int(matches_per_pair),
        seed=int(seed),
        table=table,
        ratings=_rate(names, pairs),
        pairs=pairs,
    )


# Faces below (``seats.Seats``) seat a trained player by its file through ``vecenv.variants``.
variants.register("player", "checkpoint", named_checkpoint)
