"""The actor-critic network, and how observations and actions meet it.

Observations of any of the spaces games declare (a Box, a Discrete, a Dict of them) are flattened
into one float32 vector, Dict fields in the space's order and Discrete values one-hot. Discrete
actions get a categorical head that takes a legal-move mask; Box actions a Gaussian with a learned,
state-independent log standard deviation, clipped to the bounds when played. Spaces are stored as
plain dicts (``describe``/``space_from``), so a checkpoint loads without pickled objects.
"""

import numpy as np
import torch
from gymnasium import spaces
from torch import nn
from torch.distributions import Categorical, Normal

from vecenv import memory
from vecenv.checkpoints import check_budget, mlp_shapes, parameters

MASKED_LOGIT = -1e9  # a logit no legal move reaches: masked moves get probability 0
LEGAL = "legal"  # a Dict observation's field of legal moves (a bool per Discrete action)


def describe(space):
    """A JSON-able description of a Box, Discrete or Dict space."""
    if isinstance(space, spaces.Box):
        return {
            "kind": "box",
            "shape": list(space.shape),
            "dtype": str(space.dtype),
            "low": space.low.astype(np.float64).ravel().tolist(),
            "high": space.high.astype(np.float64).ravel().tolist(),
        }
    if isinstance(space, spaces.Discrete):
        return {"kind": "discrete", "n": int(space.n), "start": int(space.start)}
    if isinstance(space, spaces.MultiDiscrete):
        return {
            "kind": "multidiscrete",
            "nvec": space.nvec.ravel().tolist(),
            "start": space.start.ravel().tolist(),
            "shape": list(space.shape),
        }
    if isinstance(space, spaces.Dict):
        return {"kind": "dict", "fields": [[k, describe(s)] for k, s in space.spaces.items()]}
    raise ValueError(f"the trainer takes Box, Discrete, MultiDiscrete and Dict spaces, not {space}")


def space_from(desc):
    kind = desc["kind"]
    if kind == "box":
        shape = tuple(desc["shape"])
        low = np.array(desc["low"]).reshape(shape)
        high = np.array(desc["high"]).reshape(shape)
        return spaces.Box(
            low.astype(desc["dtype"]), high.astype(desc["dtype"]), shape, desc["dtype"]
        )
    if kind == "discrete":
        return spaces.Discrete(desc["n"], start=desc["start"])
    if kind == "multidiscrete":
        shape = tuple(desc["shape"])
        nvec = np.array(desc["nvec"], dtype=np.int64).reshape(shape)
        return spaces.MultiDiscrete(nvec, start=np.array(desc["start"], np.int64).reshape(shape))
    if kind == "dict":
        return spaces.Dict({k: space_from(d) for k, d in desc["fields"]})
    raise ValueError(f"unknown space kind {kind!r}")


MAX_FEATURES = 2**24  # the most inputs (or actions) a saved network's spaces may declare
MAX_FIELDS = 1024  # the most fields of a Dict space, nested at most MAX_NESTING deep
MAX_NESTING = 8
_DTYPES = {
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
}


def described_size(desc, what="the observation space", depth=0):
    """The flattened size of the space ``desc`` (``describe``'s output, as a checkpoint file
    carries it) without making the space, or ValueError unless it is a well-formed description
    within the bounds above (``space_from`` then makes it safely)."""

    def fail(why):
        raise ValueError(f"{what} is malformed: {why}")

    def count(value, low, high, name):
        if not is_int(value) or not low <= value <= high:
            fail(f"{name} must be an integer in [{low}, {high}]")
        return int(value)

    if not isinstance(desc, dict) or depth > MAX_NESTING:
        fail("not a space description" if depth <= MAX_NESTING else "nested too deep")
    kind = desc.get("kind")
    if kind == "discrete":
        count(desc.get("start"), -(2**62), 2**62, "start")
        return count(desc.get("n"), 1, MAX_FEATURES, "n")
    if kind in ("box", "multidiscrete"):
        shape = desc.get("shape")
        if not isinstance(shape, list) or len(shape) > 32:
            fail("its shape is no list of sizes")
        cells = 1
        for d in shape:
            cells *= count(d, 0, MAX_FEATURES, "a size")
        if cells > MAX_FEATURES:
            fail(f"{cells:,} entries, over {MAX_FEATURES:,}")
        keys = ("low", "high") if kind == "box" else ("nvec", "start")
        for key in keys:
            values = desc.get(key)
            if not isinstance(values, list) or len(values) != cells:
                fail(f"{key} must be a list of {cells} numbers")
            if not all(isinstance(v, (int, float)) for v in values):
                fail(f"{key} must be numbers")
        if kind == "box":
            if desc.get("dtype") not in _DTYPES:
                fail(f"dtype must be one of {', '.join(sorted(_DTYPES))}")
            return cells
        total = sum(count(n, 1, MAX_FEATURES, "nvec") for n in desc["nvec"])
        for v in desc["start"]:
            count(v, -(2**62), 2**62, "start")
        if total > MAX_FEATURES:
            fail(f"{total:,} one-hot features, over {MAX_FEATURES:,}")
        return total
    if kind == "dict":
        fields = desc.get("fields")
        if not isinstance(fields, list) or len(fields) > MAX_FIELDS:
            fail(f"its fields must be a list of at most {MAX_FIELDS}")
        names, total = set(), 0
        for item in fields:
            if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)):
                fail("a field must be [name, space]")
            if item[0] in names:
                fail(f"field {item[0]!r} twice")
            names.add(item[0])
            total += described_size(item[1], what, depth + 1)
        if total > MAX_FEATURES:
            fail(f"{total:,} features, over {MAX_FEATURES:,}")
        return total
    fail(f"unknown space kind {str(kind)[:40]!r}")


def is_int(value):
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def state_shapes(observation, action, hidden, norm_obs):
    """The shapes of ``ActorCritic``'s state dict (key -> shape) for the described spaces
    (``described_size``-checked descriptions), without making it."""
    size = described_size(observation)
    shapes = {}
    if action.get("kind") == "discrete":
        outputs = described_size(action, "the action space")
    elif action.get("kind") == "box":
        outputs = described_size(action, "the action space")
        for key in ("log_std", "low", "high"):
            shapes[key] = (outputs,)
    else:
        raise ValueError("the action space is malformed: Discrete or Box")
    if norm_obs:
        shapes.update({"obs_norm.mean": (size,), "obs_norm.var": (size,), "obs_norm.count": ()})
    shapes.update(mlp_shapes("critic", [size, *hidden, 1]))
    shapes.update(mlp_shapes("actor", [size, *hidden, outputs]))
    return shapes


def check_size(observation_space, action_space, hidden, decisions=0, copies=0):
    """ValueError unless training an ``ActorCritic`` of these spaces and ``hidden`` sizes fits in
    the memory budget, checked before any of it is allocated: the network with its gradients and
    Adam's moments (``checkpoints.check_budget``), ``copies`` more of its weights (a league's
    snapshots), and a rollout of ``decisions`` (steps x environments) of the flattened
    observation, action, mask and six numbers each, twice over (the update's copies)."""
    outputs = getattr(action_space, "n", None)
    if outputs is None:
        outputs = int(np.prod(action_space.shape, dtype=np.int64))
    size = flat_size(observation_space)
    sizes = [size, *hidden]
    shapes = mlp_shapes("critic", [*sizes, 1])
    shapes.update(mlp_shapes("actor", [*sizes, int(outputs)]))
    network = check_budget(shapes, "the policy")
    rollout = 2 * int(decisions) * (4 * size + 9 * int(outputs) + 32)
    total = network + 4 * parameters(shapes) * int(copies) + rollout
    limit = memory.budget()
    if total > limit:
        raise ValueError(
            f"a rollout of {int(decisions):,} decisions (num_steps x num_envs) of "
            f"{size:,} features takes {memory.show(rollout)} beside the policy's "
            f"{memory.show(total - rollout)}, over the memory budget of {memory.show(limit)}; "
            "lower num_envs or num_steps, or raise the budget with "
            f"{memory.ENV_VAR} (e.g. {memory.ENV_VAR}=16G)"
        )


def flat_size(space):
    if isinstance(space, spaces.Box):
        return int(np.prod(space.shape, dtype=np.int64))
    if isinstance(space, spaces.Discrete):
        return int(space.n)
    if isinstance(space, spaces.MultiDiscrete):
        return int(space.nvec.sum())
    if isinstance(space, spaces.Dict):
        return sum(flat_size(s) for s in space.spaces.values())
    raise ValueError(
        f"the trainer takes Box, Discrete, MultiDiscrete and Dict observations, not {space}"
    )


ONE_HOT_WIDTH = 4096  # the most one-hot features one observation field may take


def one_hot_space(space):
    """``space`` with every bounded integer observation turned into the categories of its
    values, which ``flatten`` encodes one-hot: one integer (a Box of one entry, as a state's
    index) into a Discrete, several (a board's cells) into a MultiDiscrete, one-hot each. A
    network reads a state index or a cell's contents far better so than as numbers. Float
    Boxes, and a Dict's other fields, stay as they are; a field whose values would take more
    than ``ONE_HOT_WIDTH`` features (2048's tiles, say) is a ValueError."""
    if isinstance(space, spaces.Dict):
        return spaces.Dict({k: one_hot_space(s) for k, s in space.spaces.items()})
    if not isinstance(space, spaces.Box) or not np.issubdtype(space.dtype, np.integer):
        return space
    if space.dtype == np.bool_:
        return space
    low, high = space.low.astype(np.int64), space.high.astype(np.int64)
    width = int((high - low + 1).sum())
    if width > ONE_HOT_WIDTH:
        raise ValueError(
            f"one-hot observations of {space} would take {width:,} features "
            f"(at most {ONE_HOT_WIDTH:,}): turn one_hot_obs off for this game"
        )
    if low.size == 1:
        return spaces.Discrete(int(high.ravel()[0] - low.ravel()[0] + 1), start=int(low.ravel()[0]))
    return spaces.MultiDiscrete(high - low + 1, start=low)


def legal_field(observation_space, action_space):
    """Whether the observations carry legal moves the trainer masks its actions with: a Dict
    with a ``legal`` field of one bool per action of a Discrete action space (as ``Policy``
    plays such a game)."""
    if not isinstance(observation_space, spaces.Dict) or LEGAL not in observation_space.spaces:
        return False
    legal = observation_space.spaces[LEGAL]
    return (
        isinstance(action_space, spaces.Discrete)
        and isinstance(legal, spaces.Box)
        and legal.dtype == np.bool_
        and legal.shape == (int(action_space.n),)
    )


def flatten(space, obs, batch):
    """A batch of observations as a (batch, flat_size) float32 array."""
    if isinstance(space, spaces.Box):
        return np.asarray(obs, dtype=np.float32).reshape(batch, -1)
    if isinstance(space, spaces.Discrete):
        index = np.asarray(obs).reshape(batch) - space.start
        if index.size and (index.min() < 0 or index.max() >= space.n):
            raise ValueError(f"observations outside {space}: {np.asarray(obs).ravel()[:8]}")
        out = np.zeros((batch, space.n), dtype=np.float32)
        out[np.arange(batch), index] = 1.0
        return out
    if isinstance(space, spaces.MultiDiscrete):
        nvec, start = space.nvec.ravel(), space.start.ravel()
        index = np.asarray(obs).reshape(batch, nvec.size) - start
        if index.size and ((index < 0).any() or (index >= nvec).any()):
            raise ValueError(f"observations outside {space}")
        offsets = np.concatenate(([0], np.cumsum(nvec)[:-1]))
        out = np.zeros((batch, int(nvec.sum())), dtype=np.float32)
        np.put_along_axis(out, index + offsets, 1.0, axis=1)
        return out
    parts = [flatten(s, obs[k], batch) for k, s in space.spaces.items()]
    return np.concatenate(parts, axis=1)


# The activations a network's hidden layers may use (PPOConfig.activation, saved with a policy).
ACTIVATIONS = {"tanh": nn.Tanh, "relu": nn.ReLU}


def check_activation(activation):
    """``activation`` where it names one of ``ACTIVATIONS``, else a ValueError."""
    if not isinstance(activation, str) or activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
    return activation


def _mlp(sizes, last_gain, activation="tanh"):
    threads = torch.get_num_threads()
    # The orthogonal initialisation runs a QR decomposition whose bits depend on PyTorch's
    # thread count: on one thread, a seed gives the same network whatever torch_threads says.
    torch.set_num_threads(1)
    try:
        return _layers(sizes, last_gain, activation)
    finally:
        torch.set_num_threads(threads)


def _layers(sizes, last_gain, activation):
    layers = []
    for i in range(len(sizes) - 1):
        linear = nn.Linear(sizes[i], sizes[i + 1])
        last = i == len(sizes) - 2
        # Orthogonal weights, as the PPO implementations this one follows use.
        nn.init.orthogonal_(linear.weight, last_gain if last else np.sqrt(2))
        nn.init.zeros_(linear.bias)
        layers.append(linear)
        if not last:
            layers.append(ACTIVATIONS[activation]())
    return nn.Sequential(*layers)


def fold_moments(mean, var, count, x):
    """Fold the rows of ``x`` into a running ``mean`` and ``var`` (float64 arrays, updated in
    place) over ``count`` rows so far (Chan et al.'s parallel variance); returns the new count."""
    x = np.asarray(x, dtype=np.float64)
    n = x.shape[0]
    if n == 0:
        return count
    batch_mean, batch_var = x.mean(axis=0), x.var(axis=0)
    delta = batch_mean - mean
    total = count + n
    m2 = var * count + batch_var * n + delta**2 * count * n / total
    mean += delta * n / total
    var[...] = m2 / total
    return total


class RunningNorm(nn.Module):
    """Observations scaled by their running mean and variance, clipped to +-``clip`` (as
    Stable-Baselines3's ``VecNormalize``). The statistics are buffers, so a checkpoint carries
    them and a loaded policy sees what it was trained on; only ``update`` changes them (the
    trainer calls it on every rollout step's batch, never during the update or in play)."""

    def __init__(self, size, clip=10.0, eps=1e-8):
        super().__init__()
        self.clip, self.eps = float(clip), float(eps)
        self.register_buffer("mean", torch.zeros(size, dtype=torch.float64))
        self.register_buffer("var", torch.ones(size, dtype=torch.float64))
        self.register_buffer("count", torch.tensor(eps, dtype=torch.float64))

    def update(self, x):
        """Fold a (batch, size) array into the statistics."""
        # The buffers' storage is shared with numpy, so fold_moments updates them in place.
        self.count.fill_(fold_moments(self.mean.numpy(), self.var.numpy(), float(self.count), x))

    def forward(self, x):
        scale = torch.rsqrt(self.var + self.eps)
        return ((x - self.mean) * scale).clamp(-self.clip, self.clip).float()


class ActorCritic(nn.Module):
    """Separate actor and critic MLPs over the flattened observation (scaled by a
    ``RunningNorm`` first where ``norm_obs``), their hidden layers followed by ``activation``
    (tanh or relu)."""

    def __init__(
        self,
        observation_space,
        action_space,
        hidden=(64, 64),
        norm_obs=False,
        log_std_init=0.0,
        activation="tanh",
    ):
        super().__init__()
        self.observation_space, self.action_space = observation_space, action_space
        self.hidden = tuple(int(h) for h in hidden)
        self.activation = check_activation(activation)
        size = flat_size(observation_space)
        self.obs_norm = RunningNorm(size) if norm_obs else None
        self.critic = _mlp([size, *self.hidden, 1], 1.0, activation)
        if isinstance(action_space, spaces.Discrete):
            self.discrete = True
            self.actor = _mlp([size, *self.hidden, int(action_space.n)], 0.01, activation)
        elif isinstance(action_space, spaces.Box):
            self.discrete = False
            width = int(np.prod(action_space.shape, dtype=np.int64))
            self.actor = _mlp([size, *self.hidden, width], 0.01, activation)
            self.log_std = nn.Parameter(torch.full((width,), float(log_std_init)))
            self.register_buffer(
                "low", torch.as_tensor(action_space.low.ravel(), dtype=torch.float32)
            )
            self.register_buffer(
                "high", torch.as_tensor(action_space.high.ravel(), dtype=torch.float32)
            )
        else:
            raise ValueError(f"the trainer takes Discrete and Box actions, not {action_space}")

    def features(self, x):
        """The networks' input: the flattened observations, normalised where ``obs_norm``."""
        return x if self.obs_norm is None else self.obs_norm(x)

    def value(self, x):
        return self.critic(self.features(x)).squeeze(-1)

    def distribution(self, x, mask=None):
        out = self.actor(self.features(x))
        if self.discrete:
            if mask is not None:
                out = torch.where(mask, out, torch.full_like(out, MASKED_LOGIT))
            return Categorical(logits=out, validate_args=False)
        return Normal(out, self.log_std.exp().expand_as(out), validate_args=False)

    def evaluate(self, x, action, mask=None):
        """Log-probabilities, entropies and values of given actions (the update's pass)."""
        dist = self.distribution(x, mask)
        if self.discrete:
            return dist.log_prob(action), dist.entropy(), self.value(x)
        return dist.log_prob(action).sum(-1), dist.entropy().sum(-1), self.value(x)

    @torch.no_grad()
    def sample(self, x, mask=None, generator=None):
        """Sampled actions (raw: indices, or unclipped Gaussian draws), their log-probabilities
        and the values, drawn from ``generator`` so a seed fixes them."""
        dist = self.distribution(x, mask)
        if self.discrete:
            probs = dist.probs
            action = torch.multinomial(probs, 1, generator=generator).squeeze(-1)
            return action, dist.log_prob(action), self.value(x)
        noise = torch.randn(dist.mean.shape, generator=generator)
        action = dist.mean + dist.stddev * noise
        return action, dist.log_prob(action).sum(-1), self.value(x)

    @torch.no_grad()
    def best(self, x, mask=None):
        """The most likely actions (greedy play)."""
        dist = self.distribution(x, mask)
        return dist.probs.argmax(-1) if self.discrete else dist.mean

    def to_env(self, action):
        """Raw actions (a tensor or a numpy array) as the env takes them: offset by the
        Discrete start, or clipped to the Box (as numpy arrays in the space's dtype)."""
        space = self.action_space
        action = action.numpy() if isinstance(action, torch.Tensor) else np.asarray(action)
        if self.discrete:
            return action.astype(np.int64) + int(space.start)
        clipped = np.clip(action, self.low.numpy(), self.high.numpy())
        return clipped.reshape((-1,) + space.shape).astype(space.dtype)
