"""Saved policies: a network's weights with what rebuilds and plays it, no pickled objects.

A checkpoint is a ``torch.save`` of plain data (``weights_only`` loading works): the format tag, the
environment it was trained on, both spaces described as dicts, the hidden sizes and their activation
(tanh in files that name none), the hyper-parameters and the weights. ``load`` gives a ``Policy``,
which plays greedily by default.
"""

import numpy as np
import torch

from vecenv import checkpoints

from .network import ActorCritic, check_activation, describe, flatten, space_from, state_shapes

FORMAT = "vecenv.ppo/1"


def save(path, network, env_id, config=None, **extra):
    torch.save(
        {
            "format": FORMAT,
            "env": env_id,
            "observation_space": describe(network.observation_space),
            "action_space": describe(network.action_space),
            "hidden": list(network.hidden),
            "norm_obs": network.obs_norm is not None,
            "activation": network.activation,
            "config": dict(config or {}),
            "extra": extra,
            "weights": network.state_dict(),
        },
        path,
    )


def load(path, game=None):
    """The ``Policy`` saved at ``path``; a file that is no checkpoint is a ValueError naming it,
    and so is one trained on another game than ``game`` (where given). What the file declares
    is checked against bounds and against the weights it carries before the network is made
    (``vecenv.checkpoints``)."""
    return from_data(checkpoints.read(path, "PPO"), path, game)


def from_data(data, path, game=None):
    """``load``'s ``Policy`` from the data of the file ``path`` (``checkpoints.read``'s)."""
    checkpoints.check_format(path, data, FORMAT, "PPO")
    env_id = checkpoints.field(path, data, "env", "PPO", str)
    if game is not None and game_of(env_id) != game_of(game):
        raise ValueError(
            f"{path} was trained on {env_id}, so it cannot play {game}; "
            f"train one on {game} (vecenv train ppo --env {game})"
        )
    observation = checkpoints.field(path, data, "observation_space", "PPO", dict)
    action = checkpoints.field(path, data, "action_space", "PPO", dict)
    try:
        hidden = checkpoints.check_hidden(data.get("hidden"), "its hidden sizes")
        shapes = state_shapes(observation, action, hidden, bool(data.get("norm_obs", False)))
        activation = check_activation(data.get("activation", "tanh"))
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None
    checkpoints.check_weights(path, data.get("weights"), shapes)
    network = ActorCritic(
        space_from(data["observation_space"]),
        space_from(data["action_space"]),
        hidden,
        norm_obs=bool(data.get("norm_obs", False)),
        activation=activation,
    )
    network.load_state_dict(data["weights"])
    network.eval()
    config, extra = data.get("config"), data.get("extra")
    config = config if isinstance(config, dict) else {}
    extra = extra if isinstance(extra, dict) else {}
    return Policy(network, env_id, config, extra)


def game_of(env_id):
    """The game an env id names (a folder name, Gymnasium id, ``vecenv/<Id>`` or ``gym.<Id>``),
    as the registry spells it; an id the registry does not know, as it is."""
    from vecenv import registry

    bare = env_id.removeprefix("gym.").removeprefix("vecenv/")
    try:
        return registry.resolve(bare)
    except ValueError:
        return bare


class Policy:
    """A trained network that plays: ``act`` over a batch, ``agent`` as the command line's
    agent (one observation), ``selfplay`` as ``vecenv.selfplay``'s Python policy."""

    def __init__(self, network, env_id, config=None, extra=None):
        self.network, self.env_id = network, env_id
        self.config, self.extra = dict(config or {}), dict(extra or {})
        self.observation_space = network.observation_space
        self.action_space = network.action_space

    def check_game(self, game, source="the policy"):
        """ValueError naming both games unless this policy was trained on ``game``: its network
        would not fit the other's observations (or would play nonsense)."""
        if game_of(self.env_id) != game_of(game):
            raise ValueError(
                f"{source} was trained on {self.env_id}, so it cannot play {game}; "
                f"train one on {game} (vecenv train ppo --env {game})"
            )

    def kaggle_submission(self):
        """The text of one self-contained Kaggle ``submission.py`` playing this policy's greedy
        legal moves (``vecenv.kaggle.submission``), its network in numpy. A policy of a game
        whose rules the file does not carry, or of other than Dict observations and Discrete
        actions from 0, is a ValueError."""
        from vecenv.kaggle import submission

        game = game_of(self.env_id)
        submission.check_game(game)
        space, action = describe(self.observation_space), describe(self.action_space)
        if space["kind"] != "dict" or action["kind"] != "discrete" or action["start"] != 0:
            raise ValueError(
                "a Kaggle submission plays a policy of Dict observations and Discrete actions "
                f"from 0, not {space['kind']} observations and {action['kind']} actions"
            )
        keep = ("kind", "shape", "n", "start", "nvec")
        fields = [[name, {k: f[k] for k in keep if k in f}] for name, f in space["fields"]]
        net, norm = self.network, None
        if net.obs_norm is not None:  # float64, as the policy scales by them
            norm = tuple(t.detach().cpu().numpy() for t in (net.obs_norm.mean, net.obs_norm.var))
        layers = [
            (
                layer.weight.detach().cpu().numpy().astype(np.float32),
                layer.bias.detach().cpu().numpy().astype(np.float32),
            )
            for layer in net.actor
            if isinstance(layer, torch.nn.Linear)
        ]
        return submission.source(
            {
                "kind": "ppo",
                "game": game,
                "configuration": {},
                "fields": fields,
                "norm": norm,
                "actor": layers,
                "activation": net.activation,
                "actions": int(action["n"]),
            }
        )

    def act(self, obs, batch, mask=None, greedy=True, generator=None):
        """Actions for a batch of ``batch`` observations (as the env takes them)."""
        x = torch.from_numpy(flatten(self.observation_space, obs, batch))
        m = None if mask is None else torch.from_numpy(np.array(mask, dtype=bool))
        raw = self.network.best(x, m) if greedy else self.network.sample(x, m, generator)[0]
        return self.network.to_env(raw)

    def agent(self, observation, action_space, np_random):
        """One observation's greedy action (the ``vecenv train`` agent signature)."""
        batched = _batch_one(observation)
        legal = batched.get("legal") if isinstance(batched, dict) else None
        return self.act(batched, 1, legal)[0]

    def selfplay(self, obs, legal):
        """``vecenv.selfplay``'s policy signature: a batch of one seat's observations."""
        fields = (
            self.observation_space.spaces if hasattr(self.observation_space, "spaces") else None
        )
        view = {k: obs[k] for k in fields} if fields is not None else obs
        batch = len(next(iter(obs.values())))
        return self.act(view, batch, legal).astype(np.int64)

    def percept(self, percept):
        """The arena client's policy signature: an action request's percept (its observation,
        Kaggle-style fields for a game of several agents, and its legal moves)."""
        observation = percept["observation"] if isinstance(percept, dict) else percept
        legal = percept.get("legal") if isinstance(percept, dict) else None
        mask = None
        if legal and self.network.discrete:
            mask = np.zeros((1, int(self.action_space.n)), dtype=bool)
            mask[0, np.asarray(legal, dtype=np.int64) - int(self.action_space.start)] = True
        if isinstance(observation, dict):
            fields = getattr(self.observation_space, "spaces", {})
            # A policy trained on the Gymnasium face sees the legal moves as a field.
            observation = {
                k: mask[0] if k == "legal" and k not in observation else observation[k]
                for k in fields
            }
        batched = _batch_one(observation)
        action = self.act(batched, 1, mask)[0]
        return int(action) if self.network.discrete else action.tolist()


def _batch_one(observation):
    if isinstance(observation, dict):
        return {k: np.asarray(v)[None] for k, v in observation.items()}
    return np.asarray(observation)[None]
