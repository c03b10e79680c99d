"""AlphaZero on any two-agent game: self-play with the batched search, a replay buffer, a network.

``train(game, config, run_dir)`` repeats: play ``num_games`` games at once from the start to their
ends, every move chosen by ``vecenv.search.MCTS`` with the network as its batched evaluator
(Gumbel MuZero's root selection by default, whose sampled action explores for the first
``temperature_moves`` plies, its improved policy's best action after them, and whose improved
policy is the target; or PUCT with Dirichlet noise at the root and moves drawn from the visit
counts for the first ``temperature_moves`` plies); each position seen by the seat to move goes
into the replay buffer with the search's policy and a value target for that seat (the game's
outcome, mixed with the search's root value by ``value_mix``); then
``updates`` steps of Adam on minibatches of the buffer (cross-entropy to the policy, squared error
to the outcome). Every ``eval_every`` iterations the network plus search plays ``random``,
``negamax`` (where the game has it) and ``mcts`` through ``vecenv.selfplay.play``, with Wilson
95% intervals.

The network (``vecenv.alphazero.network``) reads the observation seen by the seat to move (every
field but ``legal``, small integer fields one-hot, and with ``cross_features`` the board crossed
with the seat's own mark: see ``Features``): an MLP over it (``network="mlp"``, ``hidden``), or,
for a game whose ``board.py`` declares its board, a residual CNN over the board's planes
(``network="resnet"``, ``blocks`` of ``filters`` channels); either has a policy head (logits per
action) and a tanh value head. With ``symmetries`` (the default) every position sampled from
the buffer is seen through one of the board's symmetries (``board.py``'s), drawn for it.
The same seed gives the same run where torch runs deterministically (the same torch threads,
CPU).

A run writes ``model.pt`` (and ``checkpoint-K.pt`` every ``checkpoint_every`` iterations),
``curve.csv`` (loss and win rates per iteration), ``curve.png`` where matplotlib is installed and
``run.json``; Ctrl-C ends it after saving what was learned. ``load(path)`` gives a ``Player``
whose ``agent(simulations)`` is an ``mcts`` agent searching with the network and whose
``policy`` plays the network alone, both seatable in ``selfplay.play`` and tournaments; on the
command line and in ``vecenv.tournament.agent`` a checkpoint is spelt ``FILE.pt`` or
``FILE.pt:N`` (N simulations a move).
"""

import csv
import dataclasses
import json
import os
import time

import numpy as np
import torch
from torch import nn

from vecenv import checkpoints, memory, registry, search, selfplay
from vecenv.engine import Engine
from vecenv.inputs import SEED_LIMIT
from vecenv.kernels.turns import ACTIVE
from vecenv.spec import is_integer

from .network import (
    Board,
    Evaluator,
    Features,
    Network,
    ResidualNetwork,
    check_network,
    flush_subnormals,
    network_shapes,
    optimizer_tensors,
    residual_shapes,
)

FORMAT = "vecenv.alphazero/1"
SELECTIONS = ("gumbel", "puct")
# Updates between flushes of subnormal weights and moments to zero (``flush_subnormals``): a
# flush costs about 4% of an update, and ten updates on a few subnormals cost little.
FLUSH_EVERY = 10


@dataclasses.dataclass
class AlphaZeroConfig:
    """The run's settings (see the module); ``seconds`` or ``iterations`` ends it, whichever
    comes first (0: no limit of that kind, but not both)."""

    num_games: int = 128
    simulations: int = 32
    selection: str = "gumbel"
    iterations: int = 0
    seconds: float = 0.0
    network: str = "mlp"
    hidden: tuple = (256, 256)
    blocks: int = 2
    filters: int = 32
    symmetries: bool = True
    learning_rate: float = 1e-3
    weight_decay: float = 1e-4
    batch_size: int = 256
    updates: int = 100
    buffer_size: int = 100_000
    temperature_moves: int = 8
    value_mix: float = 0.5
    cross_features: bool = True
    dirichlet_fraction: float = 0.25
    dirichlet_alpha: float = 0.3
    eval_every: int = 10
    eval_matches: int = 100
    eval_simulations: int = 64
    opponents: tuple = ("random", "negamax", "mcts:200")
    checkpoint_every: int = 0
    seed: int = 1
    torch_threads: int = 1

    def __post_init__(self):
        ints = {
            "num_games": 1,
            "simulations": 1,
            "batch_size": 1,
            "updates": 0,
            "buffer_size": 1,
            "iterations": 0,
            "temperature_moves": 0,
            "eval_every": 0,
            "eval_matches": 1,
            "eval_simulations": 1,
            "checkpoint_every": 0,
            "seed": 0,
            "torch_threads": 1,
        }
        for name, low in ints.items():
            value = getattr(self, name)
            if not is_integer(value) or not low <= value < (
                SEED_LIMIT if name == "seed" else 2**31
            ):
                raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
        floats = {
            "seconds": (0.0, None),
            "learning_rate": (0.0, None),
            "weight_decay": (0.0, None),
            "dirichlet_fraction": (0.0, 1.0),
            "dirichlet_alpha": (0.0, None),
            "value_mix": (0.0, 1.0),
        }
        for name, (low, high) in floats.items():
            value = getattr(self, name)
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            ok = ok and np.isfinite(value) and value >= low and (high is None or value <= high)
            if not ok:
                raise ValueError(f"{name} must be a finite number >= {low}, got {value!r}")
        if self.learning_rate <= 0:
            raise ValueError(f"learning_rate must be positive, got {self.learning_rate!r}")
        for name in ("cross_features", "symmetries"):
            value = getattr(self, name)
            if not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"{name} must be True or False, got {value!r}")
            setattr(self, name, bool(value))
        self.network, self.blocks, self.filters = check_network(
            self.network, self.blocks, self.filters
        )
        if self.selection not in SELECTIONS:
            raise ValueError(f"selection must be one of {SELECTIONS}, got {self.selection!r}")
        if not self.iterations and not self.seconds:
            raise ValueError("give iterations or seconds (or both): the run needs an end")
        self.hidden = checkpoints.check_hidden(self.hidden)
        if not self.hidden:
            raise ValueError("hidden must name at least one layer")
        self.opponents = tuple(self.opponents)


# -- self-play -----------------------------------------------------------------------------------


def _stream_seed(seed, *counters):
    """One search's seed from the run's seed and counters (a fixed mix: runs repeat)."""
    words = np.random.SeedSequence([seed, *counters]).generate_state(2, np.uint64)
    return int(words[0] >> np.uint64(1))


def _played(result, mcts, config, ply, to_move, rng):
    """The actions the games play from a search's ``result``: in PUCT's opening drawn from its
    policy, past Gumbel's opening its improved policy's best; else the search's own."""
    action = result.action.copy()
    if config.selection == "puct" and ply < config.temperature_moves:
        p = result.policy[to_move]
        drawn = (p.cumsum(axis=1) > rng.random((p.shape[0], 1))).argmax(axis=1)
        action[to_move] = drawn + mcts.low
    elif config.selection == "gumbel" and ply >= config.temperature_moves:
        # past the opening the games play the improved policy's best action, so their
        # outcomes say what the positions are worth, not what the exploration did
        action[to_move] = np.argmax(result.policy[to_move], axis=1) + mcts.low
    return action


def self_play(engine, mcts, features, config, iteration, rng):
    """Play every game of ``engine`` from its start to its end; returns the positions (features
    seen by the mover), the search's policies and the movers' outcomes, and the plies played.
    Each seat to move searches for itself: where both move at once (rps), each searches its own
    action, the other's drawn at random inside its tree."""
    n = engine.num_envs
    engine.reset(seed=_stream_seed(config.seed, iteration, 0))
    rows = np.arange(n)
    xs, policies, movers, games, values = [], [], [], [], []
    ply = 0
    while True:
        states = engine.get_state()
        running = states["done"] == 0
        active = (states["status"] == ACTIVE) & running[:, None]
        if not active.any():
            break
        actions = np.full((n, 2), mcts.low, dtype=np.int64)
        searches = 0
        for seat in (0, 1):
            to_move = active[:, seat]
            if not to_move.any():
                continue
            # a second search in one ply (both seats move) draws from streams of its own
            seed = _stream_seed(config.seed, iteration, ply + 1, *([seat] if searches else []))
            searches += 1
            result = mcts.search(states, seed=seed, mask=to_move, seats=np.full(n, seat))
            action = _played(result, mcts, config, ply, to_move, rng)
            obs = {}
            for f in engine.observation:
                arr = engine.obs[f.name]
                obs[f.name] = (arr if f.shared else arr[:, seat])[to_move]
            xs.append(features(obs))
            policies.append(result.policy[to_move].astype(np.float32))
            movers.append(np.full(int(to_move.sum()), seat))
            games.append(rows[to_move])
            values.append(result.root_value[to_move])
            actions[to_move, seat] = action[to_move]
        engine.step(actions)
        ply += 1
    rewards = engine.get_state()["reward"].astype(np.float64)
    x = np.concatenate(xs)
    policy = np.concatenate(policies)
    game, mover = np.concatenate(games), np.concatenate(movers)
    outcome = np.sign(rewards[game, mover] - rewards[game, 1 - mover])
    # the value target: the game's outcome for the mover, mixed with the search's root value
    # (less noisy where one game's later moves decided it), held to the value head's range
    # (a game scoring every ply, rps, sums more than one ply's reward into a root value)
    root = np.clip(np.concatenate(values), -1.0, 1.0)
    target = (1.0 - config.value_mix) * outcome + config.value_mix * root
    return x, policy, target.astype(np.float32), ply


class Buffer:
    """A ring of the latest ``size`` positions with their targets."""

    @staticmethod
    def check(size, inputs, actions, beside=0):
        """ValueError unless a buffer of ``size`` positions (and ``beside`` bytes more) fits in
        the memory budget."""
        each = 4 * (inputs + actions + 1)
        limit = memory.budget()
        if size * each + beside > limit:
            raise ValueError(
                f"a replay buffer of {size:,} positions of {memory.show(each)} each (features "
                f"{inputs:,}, actions {actions:,}) and the network's {memory.show(beside)} "
                f"need {memory.show(size * each + beside)}, over the memory budget of "
                f"{memory.show(limit)}; lower buffer_size (--buffer-size) or the game's sizes, "
                f"or raise the budget with {memory.ENV_VAR} (e.g. {memory.ENV_VAR}=32G)"
            )

    def __init__(self, size, inputs, actions, symmetries=None):
        self.x = np.zeros((size, inputs), dtype=np.float32)
        self.policy = np.zeros((size, actions), dtype=np.float32)
        self.value = np.zeros(size, dtype=np.float32)
        self.size, self.next, self.full = size, 0, False
        # (columns, actions) of ``Board.tables``: each sampled position is seen through one of
        # the board's symmetries drawn for it (the identity among them); None: as played
        self.symmetries = symmetries

    def __len__(self):
        return self.size if self.full else self.next

    def add(self, x, policy, value):
        for start in range(0, len(x), self.size):  # more than the ring holds: the latest stay
            part = slice(start, start + self.size)
            k = len(x[part])
            at = (self.next + np.arange(k)) % self.size
            self.x[at], self.policy[at], self.value[at] = x[part], policy[part], value[part]
            self.full = self.full or self.next + k >= self.size
            self.next = (self.next + k) % self.size

    def sample(self, rng, batch):
        index = rng.integers(len(self), size=batch)
        if self.symmetries is None:
            x, policy = self.x[index], self.policy[index]
        else:
            columns, actions = self.symmetries
            drawn = rng.integers(len(columns), size=batch)
            x = self.x[index[:, None], columns[drawn]]
            policy = self.policy[index[:, None], actions[drawn]]
        return torch.from_numpy(x), torch.from_numpy(policy), torch.from_numpy(self.value[index])


def update(network, optimizer, batch):
    """One step of Adam on a minibatch; returns (policy loss, value loss)."""
    x, target_policy, target_value = batch
    logits, value = network(x)
    policy_loss = -(target_policy * torch.log_softmax(logits, dim=1)).sum(dim=1).mean()
    value_loss = ((value - target_value) ** 2).mean()
    optimizer.zero_grad()
    (policy_loss + value_loss).backward()
    optimizer.step()
    return float(policy_loss.detach()), float(value_loss.detach())


# -- the run ---------------------------------------------------------------------------------------


@dataclasses.dataclass
class Run:
    """What a run did: its rows (one per iteration), evaluations, and whether Ctrl-C ended it."""

    game: str
    config: AlphaZeroConfig
    configuration: dict = dataclasses.field(default_factory=dict)  # the game's
    rows: list = dataclasses.field(default_factory=list)
    evaluations: list = dataclasses.field(default_factory=list)  # (iteration, Summary)
    seconds: float = 0.0
    games: int = 0
    positions: int = 0
    interrupted: bool = False
    plotted: bool = False
    best: tuple = None  # (iteration, score) of the best evaluation so far (``score``)


class Trainer:
    """The state of one run (the engine, the search, the network, the buffer); ``iteration()``
    plays and learns once."""

    def __init__(self, game, config, **configuration):
        torch.manual_seed(config.seed)
        torch.set_num_threads(config.torch_threads)
        self.config = config
        self.engine = Engine(
            game, num_envs=config.num_games, seed=config.seed, autoreset="disabled", **configuration
        )
        self.game = self.engine.name
        self.configuration = dict(configuration)
        self.features = Features(self.engine, cross=config.cross_features)
        probe = search.MCTS(self.engine, 1, evaluator="uniform")
        self.low, self.num_actions = probe.low, probe.num_actions
        self.board = Board.of(self.game, self.engine.config, self.num_actions)
        # What the network and the replay buffer take, before either is allocated.
        shapes, make = architecture(
            self.game, config.network, self.features, self.board, self.num_actions, config
        )
        need = checkpoints.check_budget(shapes, "the network")
        Buffer.check(config.buffer_size, self.features.size, self.num_actions, need)
        self.network = make()
        self.evaluator = Evaluator(self.network, self.features)
        options = dict(selection=config.selection, evaluator=self.evaluator)
        if config.selection == "puct":
            options.update(
                dirichlet_fraction=config.dirichlet_fraction,
                dirichlet_alpha=config.dirichlet_alpha,
            )
        self.mcts = search.MCTS(self.engine, config.simulations, **options)
        self.optimizer = torch.optim.Adam(
            self.network.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay
        )
        tables = None
        if config.symmetries and self.board is not None and self.board.symmetries:
            tables = self.board.tables(self.features, self.num_actions)
        self.buffer = Buffer(config.buffer_size, self.features.size, self.num_actions, tables)
        self.rng = np.random.default_rng(config.seed)
        self.done = 0

    def iteration(self):
        """Self-play of every game, then ``updates`` minibatches; returns the iteration's row."""
        config = self.config
        self.network.eval()
        x, policy, outcome, plies = self_play(
            self.engine, self.mcts, self.features, config, self.done, self.rng
        )
        self.buffer.add(x, policy, outcome)
        self.network.train()
        losses = []
        for k in range(config.updates):
            batch = self.buffer.sample(self.rng, config.batch_size)
            losses.append(update(self.network, self.optimizer, batch))
            if (k + 1) % FLUSH_EVERY == 0 or k + 1 == config.updates:
                flush_subnormals(self.network.parameters())
                flush_subnormals(optimizer_tensors(self.optimizer))
        self.network.eval()
        self.done += 1
        policy_loss, value_loss = np.mean(losses, axis=0) if losses else (np.nan, np.nan)
        return {
            "iteration": self.done,
            "positions": len(x),
            "plies": plies,
            "policy_loss": float(policy_loss),
            "value_loss": float(value_loss),
        }

    def player(self):
        return Player(
            self.game,
            self.network,
            self.features,
            self.configuration,
            self.config.eval_simulations,
        )

    def save(self, path, **extra):
        save(path, self.game, self.network, self.config, self.configuration, **extra)


def train(
    game,
    config,
    run_dir,
    on_iteration=None,
    keep_checkpoints=checkpoints.KEEP_CHECKPOINTS,
    **configuration,
):
    """Run AlphaZero on ``game`` (see the module) into ``run_dir``; returns the ``Run``.
    ``on_iteration(run, row)`` is called after every iteration; of the checkpoints written every
    ``checkpoint_every`` iterations the latest ``keep_checkpoints`` are kept (0: all)."""
    rotation = checkpoints.Rotation(keep_checkpoints)
    name = registry.resolve(game)
    if registry.get_spec(name).num_agents != 2:
        raise ValueError(f"{name} is not a two-agent game: AlphaZero plays those")
    trainer = Trainer(name, config, **configuration)  # a bad configuration: before the folder
    os.makedirs(run_dir, exist_ok=True)
    run = Run(trainer.game, config, dict(configuration))
    start = time.perf_counter()
    try:
        while not _over(run, config, time.perf_counter() - start):
            row = trainer.iteration()
            run.games += config.num_games
            run.positions += row["positions"]
            k = trainer.done
            # the last iteration (by count or by time) is evaluated too
            last = bool(config.iterations and k >= config.iterations) or bool(
                config.seconds and time.perf_counter() - start >= config.seconds
            )
            if config.eval_every and (k % config.eval_every == 0 or last):
                summaries = evaluate(trainer.player(), config, seed=config.seed + k)
                for summary in summaries:
                    run.evaluations.append((k, summary))
                    row[f"win_{summary.agents[1]}"] = summary.win_rate[0]
                # a run's evaluations wander: the best network so far is kept beside the last
                points = score(summaries) if summaries else None
                if points is not None and (run.best is None or points >= run.best[1]):
                    run.best = (k, points)
                    trainer.save(os.path.join(run_dir, "best.pt"), iteration=k, score=points)
            run.seconds = time.perf_counter() - start
            row["seconds"] = run.seconds
            run.rows.append(row)
            if config.checkpoint_every and k % config.checkpoint_every == 0:
                path = os.path.join(run_dir, f"checkpoint-{k}.pt")
                trainer.save(path, iteration=k)
                rotation.wrote(path)
            if on_iteration is not None:
                on_iteration(run, row)
    except KeyboardInterrupt:
        run.interrupted = True
    run.seconds = time.perf_counter() - start
    trainer.save(os.path.join(run_dir, "model.pt"), iteration=trainer.done)
    _write(run, run_dir)
    return run


def score(summaries):
    """An evaluation's score: the mean over its opponents of the share of points taken (a win
    1, a draw 1/2)."""
    return float(np.mean([(s.wins + 0.5 * s.draws) / s.matches for s in summaries]))


def _over(run, config, seconds):
    done = len(run.rows)
    return bool(
        (config.iterations and done >= config.iterations)
        or (config.seconds and seconds >= config.seconds)
    )


def evaluate(player, config, seed):
    """The player (network plus ``eval_simulations`` of search) against each of the config's
    opponents the game has, ``eval_matches`` matches each; their ``selfplay`` Summaries."""
    names = {"mcts"} | set(registry_agents(player.game))
    agent = player.agent(config.eval_simulations)
    summaries = []
    for opponent in config.opponents:
        if opponent.split(":")[0] not in names:
            continue
        result = selfplay.play(
            player.game, (agent, opponent), config.eval_matches, seed=seed, **player.configuration
        )
        summaries.append(result.summary)
    return summaries


@dataclasses.dataclass(frozen=True)
class Sizes:
    """A network's sizes as a checkpoint declares them (``AlphaZeroConfig`` has the same)."""

    hidden: tuple
    blocks: int
    filters: int


def architecture(game, kind, features, board, actions, sizes):
    """(state dict shapes, a function making the network) of the network ``kind`` (``mlp`` of
    ``sizes.hidden``, or ``resnet`` of ``sizes.blocks`` and ``sizes.filters``) for ``features``
    and ``board`` (``Board.of``'s); the shapes are known before anything is allocated."""
    if kind == "mlp":
        hidden = sizes.hidden
        return network_shapes(features.size, actions, hidden), lambda: Network(
            features.size, actions, hidden
        )
    if board is None:
        raise ValueError(
            f"the residual network convolves the game's board: {game} declares none (a "
            "board.py beside its rules: docs/own-game/protocol.md); use the MLP (network mlp)"
        )
    planes, extras = features.planes(board.field)
    cells = planes.shape[0]
    if cells != board.shape[0] * board.shape[1]:
        raise ValueError(
            f"{game}'s board.py: a board of {board.shape[0]} x {board.shape[1]} cells, but its "
            f"field {board.field!r} has {cells}"
        )
    blocks, filters = sizes.blocks, sizes.filters
    shapes = residual_shapes(planes.shape[1], len(extras), cells, actions, blocks, filters)
    return shapes, lambda: ResidualNetwork(planes, extras, board.shape, actions, blocks, filters)


def registry_agents(game):
    module = registry.game_module(game, "agents")
    return tuple(module.NAMES) if module is not None else ()


def _write(run, run_dir):
    keys = ["iteration", "seconds", "positions", "plies", "policy_loss", "value_loss"]
    keys += sorted({k for row in run.rows for k in row if k.startswith("win_")})
    with open(os.path.join(run_dir, "curve.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=keys, restval="")
        writer.writeheader()
        writer.writerows(run.rows)
    evaluations = [
        {
            "iteration": k,
            "opponent": s.agents[1],
            "matches": s.matches,
            "wins": s.wins,
            "draws": s.draws,
            "losses": s.losses,
            "win_rate": list(s.win_rate),
        }
        for k, s in run.evaluations
    ]
    info = {
        "game": run.game,
        "config": dataclasses.asdict(run.config),
        "configuration": run.configuration,
        "seconds": run.seconds,
        "iterations": len(run.rows),
        "games": run.games,
        "positions": run.positions,
        "interrupted": run.interrupted,
        "evaluations": evaluations,
        "best": None if run.best is None else {"iteration": run.best[0], "score": run.best[1]},
    }
    with open(os.path.join(run_dir, "run.json"), "w") as f:
        json.dump(info, f, indent=1)
    run.plotted = _plot(run, os.path.join(run_dir, "curve.png"))


def _plot(run, path):
    """Losses and win rates against wall-clock seconds (where matplotlib is installed)."""
    try:
        import matplotlib
    except ImportError:
        if os.path.exists(path):
            os.remove(path)
        return False
    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    fig, (losses, wins) = plt.subplots(1, 2, figsize=(11, 4))
    seconds = [row["seconds"] for row in run.rows]
    for key in ("policy_loss", "value_loss"):
        losses.plot(seconds, [row[key] for row in run.rows], label=key.replace("_", " "))
    opponents = sorted({s.agents[1] for _, s in run.evaluations})
    for opponent in opponents:
        points = [
            (run.rows[k - 1]["seconds"], s.win_rate)
            for k, s in run.evaluations
            if s.agents[1] == opponent
        ]
        wins.errorbar(
            [p[0] for p in points],
            [p[1][0] for p in points],
            yerr=[[p[1][0] - p[1][1] for p in points], [p[1][2] - p[1][0] for p in points]],
            label=f"vs {opponent}",
            capsize=3,
        )
    for ax, ylabel in ((losses, "loss"), (wins, "win rate (95% Wilson)")):
        ax.set_xlabel("wall-clock seconds")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:  # a run without evaluations has no win rates
            ax.legend()
    fig.suptitle(f"AlphaZero on {run.game}")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


# -- checkpoints and players ----------------------------------------------------------------------


def save(path, game, network, config, configuration, **extra):
    """A checkpoint of plain data (``weights_only`` loading works)."""
    torch.save(
        {
            "format": FORMAT,
            "game": game,
            "configuration": dict(configuration),
            "hidden": list(config.hidden),
            "config": {
                k: list(v) if isinstance(v, tuple) else v
                for k, v in dataclasses.asdict(config).items()
            },
            "extra": extra,
            "weights": network.state_dict(),
        },
        path,
    )


class Player:
    """A trained network on its game: ``agent(simulations)`` searches with it (an ``mcts``
    agent), ``policy`` plays it alone; both seat in ``selfplay.play`` and tournaments.
    ``simulations`` is the search the run evaluated it with (what ``agent()`` gives)."""

    def __init__(self, game, network, features, configuration, simulations=64):
        self.game, self.network, self.features = game, network, features
        self.configuration = dict(configuration)
        self.simulations = int(simulations)
        self.evaluator = Evaluator(network, features)
        self.policy = self.evaluator.policy

    def agent(self, simulations=None, name=None, **options):
        """The search with the network as its evaluator, ``simulations`` a move (the player's
        own where None), playing its best action (no noise); ``name`` names it in results."""
        simulations = self.simulations if simulations is None else simulations
        options.setdefault("selection", "gumbel")
        if options["selection"] == "gumbel":
            options.setdefault("gumbel_scale", 0.0)  # play the best, not a drawn, action
        name = f"alphazero+mcts:{simulations}" if name is None else name
        return search.MCTSAgent(simulations, name=name, evaluator=self.evaluator, **options)

    def kaggle_submission(self, simulations=None):
        """The text of one self-contained Kaggle ``submission.py`` playing this network
        (``vecenv.kaggle.submission``): numpy's forward pass of it, searching as ``agent()``
        does with ``simulations`` a move (the player's own where None; 0: the network alone).
        A game whose rules the file does not carry, or simulations out of range, is a
        ValueError."""
        from vecenv.kaggle import submission

        simulations = self.simulations if simulations is None else simulations
        if not is_integer(simulations) or not 0 <= simulations <= search.MAX_SIMULATIONS:
            raise ValueError(
                f"simulations must be an integer in [0, {search.MAX_SIMULATIONS}], "
                f"got {simulations!r}"
            )

        def arrays(layer):
            return (
                layer.weight.detach().cpu().numpy().astype(np.float32),
                layer.bias.detach().cpu().numpy().astype(np.float32),
            )

        net = self.network
        network = {
            "kind": "alphazero",
            "game": self.game,
            "configuration": dict(self.configuration),
            "fields": [list(f) for f in self.features.fields],
            "crosses": [list(c) for c in self.features.crosses],
            "actions": int(net.policy.out_features),
            "simulations": int(simulations),
        }
        if isinstance(net, ResidualNetwork):
            network.update(
                network="resnet",
                shape=list(net.shape),
                planes=net.planes_index.tolist(),
                extras=net.extras_index.tolist(),
                blocks=len(net.blocks),
                arrays=[
                    (name, value.detach().cpu().numpy().astype(np.float32))
                    for name, value in net.state_dict().items()
                ],
            )
        else:
            network.update(
                network="mlp",
                trunk=[arrays(layer) for layer in net.trunk if isinstance(layer, nn.Linear)],
                policy=arrays(net.policy),
                value=arrays(net.value),
            )
        return submission.source(network)


def load(path, game=None):
    """The ``Player`` saved at ``path``; a file that is no AlphaZero checkpoint, or one of
    another game than ``game`` (where given), is a ValueError naming it. What the file declares
    is checked against bounds and against the weights it carries before the network is made
    (``vecenv.checkpoints``)."""
    return from_data(checkpoints.read(path, "AlphaZero"), path, game)


def from_data(data, path, game=None):
    """``load``'s ``Player`` from the data of the file ``path`` (``checkpoints.read``'s)."""
    kind = "AlphaZero"
    checkpoints.check_format(path, data, FORMAT, kind)
    try:
        name = registry.resolve(checkpoints.field(path, data, "game", kind, str))
        if game is not None and registry.resolve(game) != name:
            raise ValueError(f"{path} was trained on {name}, not {game}")
        configuration = checkpoints.field(path, data, "configuration", kind, dict)
        hidden = checkpoints.check_hidden(data.get("hidden"), "its hidden sizes")
        engine = Engine(name, num_envs=1, seed=0, **configuration)
        config = data.get("config")
        config = config if isinstance(config, dict) else {}
        features = Features(engine, cross=bool(config.get("cross_features", False)))
        probe = search.MCTS(engine, 1, evaluator="uniform")
        # a file from before the residual network holds an MLP
        kind, blocks, filters = check_network(
            config.get("network", "mlp"), config.get("blocks", 1), config.get("filters", 1)
        )
        board = Board.of(name, engine.config, probe.num_actions) if kind == "resnet" else None
        sizes = Sizes(hidden, blocks, filters)
        shapes, make = architecture(name, kind, features, board, probe.num_actions, sizes)
        checkpoints.check_weights(path, data.get("weights"), shapes)
        network = make()
        network.load_state_dict(data["weights"])
        flush_subnormals(network.parameters())  # a file written before they were flushed
    except ValueError as e:  # a game, configuration or size it declares is refused
        message = str(e)
        raise ValueError(message if message.startswith(str(path)) else f"{path}: {e}") from None
    except (KeyError, TypeError, RuntimeError) as e:  # a damaged or hand-made file
        raise ValueError(
            f"{path}: a damaged AlphaZero checkpoint ({type(e).__name__}: {e})"[:300]
        ) from None
    network.eval()
    simulations = config.get("eval_simulations")
    if not is_integer(simulations) or not 1 <= simulations <= search.MAX_SIMULATIONS:
        simulations = 64
    return Player(name, network, features, data["configuration"], simulations)
