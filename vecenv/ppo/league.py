"""Self-play PPO for two-agent games: the learner against a league of its past selves and the
game's built-in agents, on the batched multi-agent VectorEnv.

N matches run at once. Each match has the learner in one seat (alternating from match to match)
and an opponent from the league in the other, drawn anew when the match ends: a built-in agent
(moving inside the engine's compiled call) with probability ``builtin_share``, otherwise one of the
last ``max_snapshots`` frozen copies of the learner (batched over the matches they play). Every
ply all matches step together; the learner's samples are its own decisions. A decision's reward
is what its seat receives until its next decision or the end of the match, and its advantage
follows its own next decision, so the opponent's replies are part of the learner's environment.
A decision still waiting for its successor when a rollout ends is carried into the next one.

Evaluations play the learner (greedy) against each built-in agent with ``vecenv.selfplay.play``
and report win rates with 95% intervals.
"""

import copy
import json
import os
import time
from dataclasses import dataclass, field

import numpy as np
import torch

from vecenv import registry
from vecenv.seats import Seats
from vecenv.selfplay import play

from .checkpoint import Policy, save
from .compiled import CompiledPolicy
from .compiled_update import CompiledUpdate
from .curves import try_plot
from .network import ActorCritic, check_size, flatten, one_hot_space
from .trainer import update


@dataclass
class LeagueResult:
    steps: int = 0  # plies of all matches
    decisions: int = 0  # the learner's samples
    seconds: float = 0.0
    env_seconds: float = 0.0
    evaluations: list = field(default_factory=list)  # selfplay Summaries, the last evaluation's
    curve: list = field(default_factory=list)  # (plies, seconds, learner's mean match reward)
    plotted: bool = False  # curve.png written (it needs matplotlib)


class LeagueTrainer:
    """PPO self-play on ``game`` (see the module); ``config`` is a ``PPOConfig`` whose
    ``num_envs`` is the number of matches and ``num_steps`` the plies per rollout."""

    def __init__(
        self,
        game,
        config,
        builtin_share=0.5,
        snapshot_every=5,
        max_snapshots=8,
        builtins=None,
        **configuration,
    ):
        from vecenv.gym.multiagent import MultiAgentVectorEnv

        self.game = registry.resolve(game)
        self.config = config
        self.env = MultiAgentVectorEnv(
            self.game,
            num_envs=config.num_envs,
            seed=config.seed,
            copy=False,
            **{**config.env_config, **configuration},
        )
        if self.env.num_agents != 2:
            raise ValueError(f"{self.game} is not a two-agent game")
        torch.set_num_threads(config.torch_threads)
        torch.manual_seed(config.seed)
        self.generator = torch.Generator().manual_seed(config.seed)
        self.rng = np.random.default_rng(config.seed)
        self.obs_space = self.env.single_observation_space
        if config.one_hot_obs:  # a board's cells one-hot, as the one-agent trainer does
            self.obs_space = one_hot_space(self.obs_space)
        check_size(
            self.obs_space,
            self.env.single_action_space,
            config.hidden,
            config.batch_size,
            copies=max_snapshots,
        )
        self.policy = ActorCritic(
            self.obs_space,
            self.env.single_action_space,
            config.hidden,
            activation=config.activation,
        )
        self.optimizer = torch.optim.Adam(
            self.policy.parameters(), lr=config.learning_rate, eps=1e-5
        )
        # The learner's and the snapshots' moves, and the update, as numba calls where the
        # network allows (vecenv.ppo.compiled, compiled_update), as in the one-agent trainer.
        self.compiled = config.compiled and CompiledPolicy.supports(self.policy)
        self.sampler = CompiledPolicy(self.policy) if self.compiled else None
        self.compiled_update = CompiledUpdate(self.policy, config) if self.compiled else None
        self.draws = 0  # compiled draws so far: each call's from its own counter-based streams
        self.seats = Seats(self.env.engine)
        module = registry.game_module(self.game, "agents")
        names = tuple(module.NAMES) if module is not None else ()
        self.builtins = tuple(builtins) if builtins is not None else names
        unknown = [b for b in self.builtins if b not in names]
        if unknown:
            raise ValueError(f"unknown built-in agents {unknown} of {self.game}: {names}")
        self.builtin_share = float(builtin_share)
        self.snapshot_every, self.max_snapshots = int(snapshot_every), int(max_snapshots)
        self.snapshots = [self._frozen()]
        self.snapshot_steps = [0]
        n = config.num_envs
        self.seat = np.arange(n, dtype=np.int64) % 2  # the learner's seat in each match
        self.opponent = np.zeros(n, dtype=np.int64)  # >= 0: a snapshot, < 0: -1 - builtin index
        self.steps = 0
        self.result = LeagueResult()
        self._draw(np.ones(n, dtype=bool))

    @property
    def league(self):
        return list(self.builtins) + [f"snapshot@{s}" for s in self.snapshot_steps]

    def _frozen(self):
        frozen = copy.deepcopy(self.policy)
        frozen.eval()
        return (frozen, CompiledPolicy(frozen) if self.compiled else None)

    def _sample(self, net, compiled, x, mask):
        """(actions, log-probabilities, values) as torch tensors, for the float32 (n, features)
        numpy ``x`` under the bool ``mask``: drawn by the compiled pass (copied out of its
        buffers) or by PyTorch from the trainer's generator."""
        if compiled is None:
            return net.sample(torch.from_numpy(x), torch.from_numpy(mask), self.generator)
        self.draws += 1
        out = compiled.sample(x, mask, seed=int(self.config.seed), counter=self.draws - 1)
        return tuple(torch.from_numpy(a.copy()) for a in out)

    def _draw(self, rows):
        """New opponents (and swapped seats) for the matches in ``rows``."""
        count = int(rows.sum())
        if not count:
            return
        builtin = (
            self.rng.random(count) < self.builtin_share if self.builtins else np.zeros(count, bool)
        )
        picks = np.where(
            builtin,
            -1 - self.rng.integers(max(len(self.builtins), 1), size=count),
            self.rng.integers(len(self.snapshots), size=count),
        )
        self.opponent[rows] = picks
        self.seat[rows] = 1 - self.seat[rows]
        kinds = self.seats.kinds
        idx = np.flatnonzero(rows)
        kinds[idx, self.seat[idx]] = -1
        names = self.seats.names
        other = 1 - self.seat[idx]
        kinds[idx, other] = [names.index(self.builtins[-1 - p]) if p < 0 else -1 for p in picks]
        self.seats.new_matches(rows)

    def _view(self, obs, seat_of, rows=None):
        """One seat's observations of the matches (all, or ``rows``)."""
        take = np.arange(self.config.num_envs) if rows is None else rows
        seat = seat_of[take]
        if isinstance(obs, dict):
            return {k: v[take, seat] for k, v in obs.items()}
        return obs[take, seat]

    def run(self, on_rollout=None, on_snapshot=None):
        cfg, env, policy = self.config, self.env, self.policy
        n, steps = cfg.num_envs, cfg.num_steps
        rows_all = np.arange(n)
        size = policy.critic[0].in_features
        moves = int(env.single_action_space.n)
        low = int(env.single_action_space.start)
        iterations = cfg.iterations
        start = time.perf_counter()
        t0 = time.perf_counter()
        obs, _ = env.reset(seed=int(cfg.seed))
        self.seats.reseed()
        self.result.env_seconds += time.perf_counter() - t0
        acts = np.zeros((n, 2), dtype=env.engine._act_dtype)
        # The learner's open decision per match (waiting for its successor or the match's end).
        open_ = np.zeros(n, dtype=bool)
        o_x = torch.zeros((n, size))
        o_a = torch.zeros(n, dtype=torch.long)
        o_logp, o_v, o_r = torch.zeros(n), torch.zeros(n), np.zeros(n)
        o_mask = torch.zeros((n, moves), dtype=torch.bool)
        match_reward = np.zeros(n)
        finished = []
        ended = np.zeros(n, dtype=bool)
        for iteration in range(1, iterations + 1):
            if cfg.anneal_lr:
                frac = 1.0 - (iteration - 1) / iterations
                self.optimizer.param_groups[0]["lr"] = frac * cfg.learning_rate
            closed = []  # (rows, x, a, logp, v, mask, reward, done, next_v) in ply order
            for _ in range(steps):
                to_play, legal = env.to_play, env.action_mask
                valid = ~ended
                turn = to_play[rows_all, self.seat] & valid
                x_np = flatten(self.obs_space, self._view(obs, self.seat), n)
                mask_np = legal[rows_all, self.seat] | ~turn[:, None]
                action, logp, value = self._sample(policy, self.sampler, x_np, mask_np)
                x, mask = torch.from_numpy(x_np), torch.from_numpy(mask_np)
                # A new decision closes the open one, whose successor's value it now knows.
                close = turn & open_
                if close.any():
                    r = np.flatnonzero(close)
                    closed.append(self._closed(r, o_x, o_a, o_logp, o_v, o_mask, o_r, False, value))
                t = torch.from_numpy(turn)
                o_x[t], o_a[t], o_logp[t], o_v[t], o_mask[t] = (
                    x[t],
                    action[t],
                    logp[t],
                    value[t],
                    mask[t],
                )
                o_r[turn] = 0.0
                open_ |= turn
                self.seats.moves(acts)
                acts[rows_all, self.seat] = action.numpy() + low
                self._snapshot_moves(obs, legal, to_play, acts, low)
                t1 = time.perf_counter()
                obs, rewards, terminated, truncated, _ = env.step(acts)
                self.result.env_seconds += time.perf_counter() - t1
                mine = np.where(valid, rewards[rows_all, self.seat], 0.0)
                o_r += np.where(open_, mine, 0.0)
                match_reward += mine
                ended = (terminated[:, 0] | truncated[:, 0]) & valid
                done = ended & open_
                if done.any():
                    r = np.flatnonzero(done)
                    closed.append(self._closed(r, o_x, o_a, o_logp, o_v, o_mask, o_r, True, None))
                open_ &= ~ended
                if ended.any():
                    finished.extend(match_reward[ended].tolist())
                    match_reward[ended] = 0.0
                    self._draw(ended)
                self.steps += int(valid.sum())
            self._learn(closed)
            self.result.steps = self.steps
            self.result.seconds = time.perf_counter() - start
            recent = finished[-cfg.window :]
            self.result.curve.append(
                (
                    self.steps,
                    self.result.seconds,
                    float(np.mean(recent)) if recent else float("nan"),
                )
            )
            if iteration % self.snapshot_every == 0:
                self.snapshots.append(self._frozen())
                self.snapshot_steps.append(self.steps)
                if len(self.snapshots) > self.max_snapshots:
                    self.snapshots.pop(0)
                    self.snapshot_steps.pop(0)
                if on_snapshot is not None:
                    on_snapshot(self)
            if on_rollout is not None:
                on_rollout(self, iteration)
        self.result.seconds = time.perf_counter() - start
        return self.result

    def _closed(self, r, o_x, o_a, o_logp, o_v, o_mask, o_r, done, next_value):
        t = torch.from_numpy(r)
        nv = torch.zeros(len(r)) if next_value is None else next_value[t]
        return (
            r,
            o_x[t].clone(),
            o_a[t].clone(),
            o_logp[t].clone(),
            o_v[t].clone(),
            o_mask[t].clone(),
            torch.from_numpy(o_r[r].astype(np.float32)),
            torch.full((len(r),), 1.0 if done else 0.0),
            nv,
        )

    def _snapshot_moves(self, obs, legal, to_play, acts, low):
        other = 1 - self.seat
        moving = to_play[np.arange(self.config.num_envs), other]
        for j, (net, compiled) in enumerate(self.snapshots):
            rows = np.flatnonzero(moving & (self.opponent == j))
            if not rows.size:
                continue
            x = flatten(self.obs_space, self._view(obs, other, rows), rows.size)
            mask = np.ascontiguousarray(legal[rows, other[rows]])
            action, _, _ = self._sample(net, compiled, x, mask)
            acts[rows, other[rows]] = action.numpy() + low

    def _learn(self, closed):
        """GAE over each match's closed decisions (latest first), then PPO's update."""
        if not closed:
            return
        cfg = self.config
        carry = torch.zeros(cfg.num_envs)
        advs = [None] * len(closed)
        for e in range(len(closed) - 1, -1, -1):
            r, _, _, _, v, _, reward, done, nv = closed[e]
            t = torch.from_numpy(r)
            alive = 1.0 - done
            delta = reward + cfg.gamma * nv * alive - v
            carry[t] = delta + cfg.gamma * cfg.gae_lambda * alive * carry[t]
            advs[e] = carry[t].clone()
        x = torch.cat([c[1] for c in closed])
        a = torch.cat([c[2] for c in closed])
        logp = torch.cat([c[3] for c in closed])
        v = torch.cat([c[4] for c in closed])
        masks = torch.cat([c[5] for c in closed])
        adv = torch.cat(advs)
        self.result.decisions += len(adv)
        if self.compiled_update is not None:
            lr = self.optimizer.param_groups[0]["lr"]
            batch = (x, a, logp, adv, adv + v, v, masks)
            self.compiled_update.update(*(t.numpy() for t in batch), lr=lr)
            return
        update(self.policy, self.optimizer, cfg, self.generator, x, a, logp, adv, adv + v, v, masks)

    def as_policy(self):
        return Policy(self.policy, self.game, self.config.to_dict(), {"selfplay": True})

    def evaluate(self, matches=200, seed=None):
        """The greedy learner against each built-in agent, seats alternating."""
        policy = self.as_policy()
        seed = self.config.seed if seed is None else seed
        return [
            play(self.game, [_named(policy.selfplay, "ppo"), name], matches, seed=seed).summary
            for name in self.builtins
        ]


def _named(fn, name):
    def policy(obs, legal):
        return fn(obs, legal)

    policy.__name__ = name
    return policy


def train(game, config, run_dir=None, on_rollout=None, evaluation_matches=200, **kwargs):
    """Self-play training on ``game``; with ``run_dir``, the policy, the league's snapshots,
    the curve (PNG) and ``league.json`` (win rates with intervals) are written there."""
    trainer = LeagueTrainer(game, config, **kwargs)

    def on_snapshot(t):
        if run_dir is not None:
            save(
                os.path.join(run_dir, f"checkpoint_{t.steps}.pt"),
                t.policy,
                t.game,
                config.to_dict(),
                selfplay=True,
            )

    if run_dir is not None:
        os.makedirs(run_dir, exist_ok=True)
    result = trainer.run(on_rollout=on_rollout, on_snapshot=on_snapshot)
    if evaluation_matches:
        result.evaluations = trainer.evaluate(evaluation_matches)
    if run_dir is not None:
        save(
            os.path.join(run_dir, "policy.pt"),
            trainer.policy,
            trainer.game,
            config.to_dict(),
            selfplay=True,
        )
        with open(os.path.join(run_dir, "league.json"), "w") as f:
            json.dump(
                {
                    "game": trainer.game,
                    "plies": result.steps,
                    "decisions": result.decisions,
                    "seconds": round(result.seconds, 3),
                    "env_fraction": round(result.env_seconds / max(result.seconds, 1e-9), 4),
                    "league": trainer.league,
                    "evaluations": [_summary_dict(s) for s in result.evaluations],
                    "curve": [list(row) for row in result.curve],
                },
                f,
                indent=2,
            )

        # Last: the plot is optional (matplotlib), the results above are not.
        class _Curve:  # plot takes runs with a curve
            curve = result.curve

        result.plotted = try_plot(
            {f"{trainer.game} self-play": _Curve},
            os.path.join(run_dir, "curve.png"),
            title=f"PPO self-play on {trainer.game}: the learner's mean match reward",
        )
    return result


def _summary_dict(s):
    return {
        "agents": list(s.agents),
        "matches": s.matches,
        "wins": s.wins,
        "draws": s.draws,
        "losses": s.losses,
        "win_rate": list(s.win_rate),
        "mean_reward": list(s.mean_reward),
    }
