"""PPO's update compiled: every epoch and minibatch of ``trainer.update`` as one numba call.

On the small networks PPO trains, each PyTorch minibatch step (two MLP forwards, the loss,
backward, ``clip_grad_norm_``, ``Adam.step``) costs milliseconds of dispatch for little
arithmetic. ``CompiledUpdate`` runs the whole update (forward, the PPO loss's gradient by a
hand-written backward pass, gradient clipping and Adam) in one kernel call per update.

What it computes is ``trainer.update``'s: for each epoch, the batch's rows in the epoch's order
cut into minibatches of ``max(1, rows // num_minibatches)`` rows (the last one shorter where they
do not divide); per minibatch the advantages normalised by their mean and standard deviation
(``ddof=1``, plus 1e-8) where ``norm_adv`` and there is more than one row; the loss
``pg - ent_coef * entropy + vf_coef * v_loss`` with the clipped policy loss and the clipped (or
plain) value loss, each halved; its gradient clipped to ``max_grad_norm`` by the global L2 norm
of all parameters as ``torch.nn.utils.clip_grad_norm_`` clips (scale ``max_norm / (norm +
1e-6)`` where that is below 1); then one ``torch.optim.Adam`` step (betas 0.9 and 0.999,
``eps`` 1e-5, no weight decay, bias-corrected, all in float32 as PyTorch's single-tensor Adam
writes it). Where ``torch.maximum`` meets a tie its gradient is split in half between the two
sides, as PyTorch's is.

Parameters are updated in the network's own tensors, so the module keeps owning them:
checkpoints, evaluation and ``CompiledPolicy`` see each step. The kernel works on one flat copy
of them (every layer's weight and bias, then ``log_std``), taken before and written back after
each update, with a table of where each layer lies (``layout``): its types are the same for every
network, so it compiles once whatever the depth and widths (a tuple of per-layer arrays would be
a type of its own for each depth, about 10 s of compiling each). Adam's moments
and step count live here (``load_optimizer``/``store_optimizer`` move them from and to a
``torch.optim.Adam``). Replacing a parameter object rather than writing into it is refused: build
a new ``CompiledUpdate`` then.

Arithmetic. Observations are normalised and the layers run exactly as ``CompiledPolicy`` runs
them (``vecenv.ppo.dense``), and log-probabilities are taken the same way (float64 on the float32
outputs, rounded to float32), so on a batch the compiled rollout sampled the first minibatch's
probability ratios are exactly 1. The loss's own arithmetic (softmax, Gaussian densities) runs
in float64 on float32 values, its clip and tie decisions in float32 as PyTorch makes them. The
backward products (``vecenv.ppo.dense_grad``) sum over the minibatch in vector lanes folded by a
fixed tree. Gradients agree with PyTorch's to float32 rounding: both sit within about 1e-4 of
the largest gradient from a float64 computation, PyTorch's usually the farther. Results are the
same on every run and do not depend on the thread count: the actor's and the critic's passes
run side by side on two of numba's threads where it has them (``numba.set_num_threads``; the
trainer gives the update ``torch_threads``), each network's arithmetic on one thread.
Gradient norms are summed in float64.

Sparse observations. Where the network has at least ``SPARSE_MIN`` inputs and a minibatch's
are at most a quarter nonzero (image observations such as MinAtar's, 1-8% nonzero), the first
layer's forward pass and weight gradient run from the nonzero inputs alone (``vecenv.ppo.sparse``):
the same outputs (a zero's sign aside), the gradient within float32 rounding, the same bits on
every run and thread count. ``sparse_inputs=False`` keeps the dense path.

Minibatch order: each epoch's permutation of the rows comes from the caller (an int64 array
of shape (epochs, rows)) or from counter-based streams (``vecenv.ppo.minibatches``).
"""

import math

import numba as nb
import numpy as np
import torch

from . import dense, sparse
from .adam import clip_and_adam
from .compiled import _features, _unsupported, _word, activation_code
from .dense_grad import activation_grad, input_grad, row_sums, weight_grad
from .minibatches import are_permutations, permutations
from .ppo_loss import loss_head

LANES = dense.LANES
SPARSE_MAX = 2**22  # the most first-layer weights (inputs x units) run from sparse inputs
SPARSE_MIN = 64  # the fewest inputs worth it: a few inputs cost little either way
STATS = ("policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction", "grad_norm")


@nb.njit(cache=True, inline="always")
def _weight(flat, layout, i):
    """Layer ``i``'s weight (out, in) in ``flat`` (the parameters or their gradients)."""
    at, out, n_in = layout[i, 0], layout[i, 2], layout[i, 3]
    return flat[at : at + out * n_in].reshape(out, n_in)


@nb.njit(cache=True, inline="always")
def _bias(flat, layout, i):
    at = layout[i, 1]
    return flat[at : at + layout[i, 2]]


@nb.njit(cache=True, error_model="numpy")
def _forward(params, layout, first, depth, feat, acts, m, cols, activation, lists, scratch, which):
    """The Linear/activation stack of layers ``first .. first + depth - 1`` (``layout``'s rows)
    on ``feat``'s first ``m`` columns; layer ``i``'s output in ``acts[i]`` viewed as (width,
    cols). Where ``lists`` (``sparse.gather``'s, of ``feat``) holds a nonzero count (its fourth
    item), the first layer runs from them, with network ``which``'s part of ``scratch``."""
    src = feat
    for i in range(depth):
        w = _weight(params, layout, first + i)
        b = _bias(params, layout, first + i)
        width = w.shape[0]
        dst = acts[i, : width * cols].reshape(width, cols)
        act = activation if i < depth - 1 else dense.NONE
        if i == 0 and lists[3] >= 0:
            n_in = w.shape[1]
            wt = scratch[0][which, : n_in * width].reshape(n_in, width)
            sparse.transpose(w, wt)
            starts, index, values = lists[0], lists[1], lists[2]
            sparse.layer(wt, b, starts, index, values, dst, cols, act, scratch[2][which])
        else:
            dense.layer(w, b, src, dst, m, act)
        src = dst


@nb.njit(cache=True, error_model="numpy")
def _backward(
    params,
    grads,
    layout,
    first,
    depth,
    feat,
    acts,
    grad,
    spare,
    cols,
    activation,
    lists,
    scratch,
    which,
):
    """Parameter gradients (into ``grads``, laid out as ``params``) of the stack of layers
    ``first .. first + depth - 1`` from its output's gradient, held in ``grad`` viewed as (out,
    cols) with zero columns past the minibatch's rows; ``spare`` is scratch. The first layer's
    weight gradient comes from ``lists`` where ``_forward``'s did."""
    out = layout[first + depth - 1, 2]
    dy = grad[: out * cols].reshape(out, cols)
    for i in range(depth - 1, -1, -1):
        w = _weight(params, layout, first + i)
        gw = _weight(grads, layout, first + i)
        n_in = w.shape[1]
        x = feat if i == 0 else acts[i - 1, : n_in * cols].reshape(n_in, cols)
        if i == 0 and lists[3] >= 0:
            width = w.shape[0]
            dwt = scratch[0][which, : n_in * width].reshape(n_in, width)
            dyt = scratch[1][which, : cols * width].reshape(cols, width)
            sparse.weight_grad(dy, lists[0], lists[1], lists[2], gw, cols, dyt, dwt)
        else:
            weight_grad(dy, x, gw, cols)
        row_sums(dy, _bias(grads, layout, first + i), cols)
        if i > 0:
            dx = spare[: n_in * cols].reshape(n_in, cols)
            input_grad(w, dy, dx, cols)
            activation_grad(dx, x, n_in, cols, activation)
            grad, spare = spare, grad
            dy = dx


# The actor and the critic share no parameter, so their passes run side by side, one network a
# task: each network's arithmetic is the same whichever thread runs it and however many there
# are, so the results do not depend on the thread count.
@nb.njit(cache=True, parallel=True, error_model="numpy")
def _forward_both(params, layout, depths, feat, a_acts, c_acts, m, cols, activation, lists, scr):
    """The actor (``layout``'s first ``depths[0]`` layers) and the critic (the next
    ``depths[1]``) side by side."""
    for which in nb.prange(2):
        if which == 0:
            _forward(params, layout, 0, depths[0], feat, a_acts, m, cols, activation, lists, scr, 0)
        else:
            first, depth = depths[0], depths[1]
            _forward(params, layout, first, depth, feat, c_acts, m, cols, activation, lists, scr, 1)


@nb.njit(cache=True, parallel=True, error_model="numpy")
def _backward_both(params, grads, layout, depths, feat, a_acts, c_acts, g, cols, act, lists, scr):
    for which in nb.prange(2):
        if which == 0:
            depth = depths[0]
            _backward(
                params, grads, layout, 0, depth, feat, a_acts, g[0], g[1], cols, act, lists, scr, 0
            )
        else:
            first, depth = depths[0], depths[1]
            _backward(
                params,
                grads,
                layout,
                first,
                depth,
                feat,
                c_acts,
                g[2],
                g[3],
                cols,
                act,
                lists,
                scr,
                1,
            )


@nb.njit(cache=True, error_model="numpy")
def _update(
    order,
    minibatch,
    x,
    act_index,
    act_value,
    old_logp,
    adv,
    returns,
    old_values,
    mask,
    has_mask,
    discrete,
    mean,
    var,
    norm_clip,
    norm_eps,
    has_norm,
    params,
    layout,
    depths,
    log_std_at,
    grad,
    exp_avg,
    exp_avg_sq,
    step,
    lr,
    norm_adv,
    clip_coef,
    clip_vloss,
    ent_coef,
    vf_coef,
    max_norm,
    activation,
    features,
    feat,
    a_acts,
    c_acts,
    g,
    lists,
    scratch,
    glog_sum,
    probs,
    stats,
):
    """Every epoch's minibatch steps over the batch (see the module). Returns how many steps
    were taken: fewer than all where a gradient was not finite (that step is not taken)."""
    size = x.shape[0]
    n_feat = x.shape[1]
    n_act = layout[depths[0] - 1, 2]
    # log_std and its gradient (Box actions; empty for Discrete ones).
    log_std = params[log_std_at:]
    glog = grad[log_std_at:]
    a_last, c_last = depths[0] - 1, depths[1] - 1
    # The batch's features once (the statistics do not change during the update), transposed.
    _features(x, 0, size, mean, var, norm_clip, norm_eps, has_norm, features)
    done = 0
    for e in range(order.shape[0]):
        for begin in range(0, size, minibatch):
            m = min(minibatch, size - begin)
            cols = (m + LANES - 1) // LANES * LANES
            idx = order[e, begin : begin + m]
            fv = feat[: n_feat * cols].reshape(n_feat, cols)
            for k in range(n_feat):
                src = features[k]
                dst = fv[k]
                for r in range(m):
                    dst[r] = src[idx[r]]
                for r in range(m, cols):
                    dst[r] = 0.0
            # The first layer from the nonzero inputs where they are few enough to pay.
            nonzero = -1
            if lists[3] >= 0:
                nonzero = sparse.count(fv, n_feat, cols, lists[0])
                if sparse.worth(nonzero, n_feat, m):  # of the real columns, not the padding
                    sparse.gather(fv, n_feat, cols, lists[0], lists[1], lists[2])
                else:
                    nonzero = -1
            use = (lists[0], lists[1], lists[2], nonzero)
            _forward_both(
                params, layout, depths, fv, a_acts, c_acts, m, cols, activation, use, scratch
            )
            logits = a_acts[a_last, : n_act * cols].reshape(n_act, cols)
            value = c_acts[c_last, :cols].reshape(1, cols)
            dlogits = g[0, : n_act * cols].reshape(n_act, cols)
            dvalue = g[2, :cols].reshape(1, cols)
            row = stats[done]
            loss_head(
                idx,
                m,
                cols,
                logits,
                value,
                act_index,
                act_value,
                old_logp,
                adv,
                returns,
                old_values,
                mask,
                has_mask,
                discrete,
                log_std,
                glog,
                norm_adv,
                clip_coef,
                clip_vloss,
                ent_coef,
                vf_coef,
                dlogits,
                dvalue,
                glog_sum,
                probs,
                row,
            )
            _backward_both(
                params, grad, layout, depths, fv, a_acts, c_acts, g, cols, activation, use, scratch
            )
            row[5] = clip_and_adam(params, grad, exp_avg, exp_avg_sq, max_norm, lr, step + 1)
            if not math.isfinite(row[5]):
                return done
            step += 1
            done += 1
    return done


def _view(tensor):
    return tensor.detach().numpy()


def _layers(stack):
    return list(stack)[::2]


def _tensors(network):
    """The parameters, in the update's order: the actor's layers', the critic's, log_std."""
    layers = _layers(network.actor) + _layers(network.critic)
    out = [p for layer in layers for p in (layer.weight, layer.bias)]
    if not network.discrete:
        out.append(network.log_std)
    return out


def _reason(network):
    """Why ``network`` cannot be updated here, or None where it can."""
    reason = _unsupported(network)
    if reason is not None:
        return reason
    layers = _layers(network.actor) + _layers(network.critic)
    if any(layer.bias is None for layer in layers):
        return "a layer has no bias"
    ours = _tensors(network)
    if {id(p) for p in network.parameters()} != {id(p) for p in ours}:
        return "it has parameters besides its layers' and log_std"
    if len({p.data_ptr() for p in ours}) != len(ours):
        return "some of its parameters share storage"
    if not all(p.requires_grad for p in ours):
        return "some of its parameters do not require gradients"
    return None


class CompiledUpdate:
    """``trainer.update`` for one ``ActorCritic``, as one numba call per update (see the
    module). ``config`` gives the PPO settings (a ``PPOConfig``: ``update_epochs``,
    ``num_minibatches``, ``norm_adv``, ``clip_coef``, ``clip_vloss``, ``ent_coef``, ``vf_coef``,
    ``max_grad_norm``, and ``seed`` for the drawn minibatch orders). ``steps`` counts Adam's
    steps, ``updates`` the updates so far (the index of the next drawn order)."""

    @staticmethod
    def supports(network):
        """Whether ``network`` is one this class can update (else use PyTorch)."""
        return _reason(network) is None

    def __init__(self, network, config, sparse_inputs=True):
        reason = _reason(network)
        if reason is not None:
            raise ValueError(f"CompiledUpdate cannot update this network: {reason}")
        self.network, self.config = network, config
        self._settings = _settings(config)
        self.discrete = bool(network.discrete)
        self.activation = activation_code(network)
        actor, critic = _layers(network.actor), _layers(network.critic)
        self.obs_size = actor[0].in_features
        self.action_size = actor[-1].out_features
        tensors = _tensors(network)
        self._tensors = tensors
        self._pointers = [p.data_ptr() for p in tensors]
        sizes = [p.numel() for p in tensors]
        self._offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        total = int(self._offsets[-1])
        self._grad = np.zeros(total, dtype=np.float32)
        self.exp_avg = np.zeros(total, dtype=np.float32)
        self.exp_avg_sq = np.zeros(total, dtype=np.float32)
        self.steps = 0
        self.updates = 0
        # The kernel's flat copy of the parameters (in the gradients' layout) and where each
        # layer's weight and bias lie in it: (offset of the weight, of the bias, out, in) a row.
        self._views = tuple(_view(p).reshape(-1) for p in tensors)
        self._flat = np.zeros(total, dtype=np.float32)
        layers = actor + critic
        self._layout = np.array(
            [
                [
                    self._offsets[2 * k],
                    self._offsets[2 * k + 1],
                    layer.out_features,
                    layer.in_features,
                ]
                for k, layer in enumerate(layers)
            ],
            dtype=np.int64,
        )
        self._log_std_at = int(self._offsets[2 * len(layers)])  # the end, for Discrete actions
        norm = network.obs_norm
        if norm is None:
            self._mean = self._var = np.zeros(0)
            self._norm = (0.0, 0.0, False)
        else:
            self._mean, self._var = _view(norm.mean), _view(norm.var)
            self._norm = (float(norm.clip), float(norm.eps), True)
        widths = [layer.out_features for layer in actor + critic] + [self.obs_size]
        self._widest = max(widths)
        self._depths = (len(actor), len(critic))
        # The first layer from the nonzero inputs (``sparse``) where they are few, unless told
        # not to, the inputs are few, or its scratch (the first layer's weights twice over)
        # would be large.
        self._first = max(actor[0].out_features, critic[0].out_features)
        self.sparse_inputs = (
            bool(sparse_inputs)
            and self.obs_size >= SPARSE_MIN
            and self.obs_size * self._first <= SPARSE_MAX
        )
        self._glog_sum = np.zeros(self.action_size)
        self._probs = np.zeros((2, self.action_size))
        self._no_mask = np.zeros((0, self.action_size), dtype=np.bool_)
        self._no_index = np.zeros(0, dtype=np.int64)
        self._no_value = np.zeros((0, self.action_size), dtype=np.float32)
        self._rows = self._cols = 0
        self._stats = np.zeros((0, len(STATS)))
        self._reserve(1)

    def _spans(self):
        return zip(self._tensors, self._offsets[:-1], self._offsets[1:], strict=True)

    def _reserve(self, rows):
        """Scratch for a batch of ``rows`` rows (grown by doubling, so rarely); returns the
        minibatch size and the number of minibatch steps."""
        minibatch = max(1, rows // self._settings["minibatches"])
        steps = self._settings["epochs"] * -(-rows // minibatch)
        cols = -(-minibatch // LANES) * LANES
        if rows > self._rows:
            self._rows = max(rows, 2 * self._rows, 64)
            self._features = np.zeros((self.obs_size, self._rows), dtype=np.float32)
            self._seen = np.zeros(self._rows, dtype=np.bool_)
        if steps > self._stats.shape[0]:
            self._stats = np.zeros((max(steps, 2 * self._stats.shape[0]), len(STATS)))
        if cols > self._cols:
            self._cols = max(cols, 2 * self._cols)
            flat = self._widest * self._cols
            self._feat = np.zeros(self.obs_size * self._cols, dtype=np.float32)
            self._a_acts = np.zeros((self._depths[0], flat), dtype=np.float32)
            self._c_acts = np.zeros((self._depths[1], flat), dtype=np.float32)
            # Each network's output gradient and its scratch: the actor's, then the critic's.
            self._g = np.zeros((4, flat), dtype=np.float32)
            self._sparse_scratch(self._cols)
        return minibatch, steps

    def _sparse_scratch(self, cols):
        """``sparse.gather``'s lists for a minibatch of ``cols`` columns and each network's
        scratch for its first layer (tiny where the first layer runs dense)."""
        n_in, width = self.obs_size, self._first
        if not self.sparse_inputs:
            n_in = width = cols = 0
        room = int(sparse.DENSITY * n_in * cols) + 1
        self._lists = (
            np.zeros(cols + 1, dtype=np.int64),
            np.zeros(room, dtype=np.int64),
            np.zeros(room, dtype=np.float32),
            0 if self.sparse_inputs else -1,
        )
        self._scratch = (
            np.zeros((2, n_in * width), dtype=np.float32),
            np.zeros((2, cols * width), dtype=np.float32),
            np.zeros((2, width), dtype=np.float32),
        )

    def update(
        self,
        obs,
        actions,
        logp,
        advantages,
        returns,
        values,
        masks=None,
        *,
        lr,
        order=None,
        ent_coef=None,
    ):
        """One update: every epoch's minibatch steps over the batch's rows. ``obs`` (rows,
        obs_size) float32 flattened observations; ``actions`` (rows,) integers or (rows,
        width) float32; ``logp``, ``advantages``, ``returns``, ``values`` (rows,) float32 (the
        rollout's log-probabilities and values); ``masks`` an optional (rows, actions) bool
        legal-move mask; ``lr`` this update's learning rate; ``order`` an optional (epochs,
        rows) int64 array of permutations (else ``permutations(config.seed, updates, ...)``);
        ``ent_coef`` this update's entropy bonus where it is annealed (else the config's).
        Returns the (steps, len(STATS)) float64 losses of each minibatch step, a view that the
        next update overwrites."""
        self._check_parameters()
        s = self._settings
        obs = _floats(obs, "obs", 2)
        rows = obs.shape[0]
        if obs.shape[1] != self.obs_size:
            raise ValueError(f"obs must have shape (rows, {self.obs_size}), got {obs.shape}")
        act_index, act_value = self._checked_actions(actions, rows)
        vectors = []
        for name, v in (
            ("logp", logp),
            ("advantages", advantages),
            ("returns", returns),
            ("values", values),
        ):
            v = _floats(v, name, 1)
            if v.shape != (rows,):
                raise ValueError(f"{name} must have shape ({rows},), got {v.shape}")
            vectors.append(v)
        has_mask = masks is not None
        masks = self._checked_masks(masks, rows, act_index) if has_mask else self._no_mask
        lr = _number(lr, "lr")
        ent = s["ent_coef"] if ent_coef is None else _number(ent_coef, "ent_coef", zero=True)
        minibatch, total = self._reserve(rows)
        if order is None:
            order = permutations(s["seed"], self.updates, s["epochs"], rows)
        else:
            order = self._checked_order(order, rows)
        self.updates += 1
        if rows == 0:
            return self._stats[:0]
        threads = nb.get_num_threads()  # numba's count is per calling thread: put it back after
        nb.set_num_threads(s["threads"])
        try:
            done = self._run(order, minibatch, obs, (act_index, act_value), vectors, masks, lr, ent)
        finally:
            nb.set_num_threads(threads)
        self.steps += done
        if done < total:
            per_epoch = total // s["epochs"]
            raise ValueError(
                f"the gradient is not finite at epoch {done // per_epoch}, minibatch "
                f"{done % per_epoch} (NaN parameters?); {done} steps were taken"
            )
        return self._stats[:total]

    def _run(self, order, minibatch, obs, actions, vectors, masks, lr, ent):
        """The kernel's call on checked inputs; returns the steps it took."""
        s = self._settings
        norm_clip, norm_eps, has_norm = self._norm
        flat = self._flat
        for view, a, b in zip(self._views, self._offsets[:-1], self._offsets[1:], strict=True):
            flat[a:b] = view
        done = _update(
            order,
            minibatch,
            obs,
            *actions,
            *vectors,
            masks,
            masks is not self._no_mask,
            self.discrete,
            self._mean,
            self._var,
            norm_clip,
            norm_eps,
            has_norm,
            flat,
            self._layout,
            self._depths,
            self._log_std_at,
            self._grad,
            self.exp_avg,
            self.exp_avg_sq,
            self.steps,
            lr,
            s["norm_adv"],
            s["clip_coef"],
            s["clip_vloss"],
            ent,
            s["vf_coef"],
            s["max_grad_norm"],
            self.activation,
            self._features,
            self._feat,
            self._a_acts,
            self._c_acts,
            self._g,
            self._lists,
            self._scratch,
            self._glog_sum,
            self._probs,
            self._stats,
        )
        for view, a, b in zip(self._views, self._offsets[:-1], self._offsets[1:], strict=True):
            view[:] = flat[a:b]
        return done

    @property
    def threads(self):
        """numba threads the update runs on: 2 (the actor beside the critic) or 1."""
        return self._settings["threads"]

    @property
    def parameters(self):
        """The network's parameters this updates: each layer's weight and bias, the actor's
        layers first, then the critic's, then ``log_std`` (Box actions)."""
        return list(self._tensors)

    @property
    def gradients(self):
        """The last step's gradients after clipping (as PyTorch leaves ``p.grad``), numpy
        arrays in the order and shapes of ``parameters``; the next step overwrites them."""
        return [self._grad[a:b].reshape(p.shape) for p, a, b in self._spans()]

    def _check_parameters(self):
        try:
            current = _tensors(self.network)
        except AttributeError:  # a layer swapped for another kind of module
            current = []
        same = len(current) == len(self._tensors) and all(
            p is q for p, q in zip(current, self._tensors, strict=True)
        )
        if not same or [p.data_ptr() for p in current] != self._pointers:
            raise ValueError(
                "the network's parameters were replaced, not written in place: "
                "build a new CompiledUpdate"
            )

    def _checked_actions(self, actions, rows):
        if not isinstance(actions, np.ndarray):
            raise ValueError(f"actions must be a numpy array, got {type(actions).__name__}")
        if self.discrete:
            if actions.dtype.kind not in "iu":
                raise ValueError(f"Discrete actions must be integers, got {actions.dtype}")
            if actions.shape != (rows,):
                raise ValueError(f"actions must have shape ({rows},), got {actions.shape}")
            if rows and (actions.min() < 0 or actions.max() >= self.action_size):
                raise ValueError(f"actions must be in [0, {self.action_size})")
            return np.ascontiguousarray(actions, dtype=np.int64), self._no_value
        actions = _floats(actions, "actions", 2)
        if actions.shape != (rows, self.action_size):
            raise ValueError(
                f"actions must have shape ({rows}, {self.action_size}), got {actions.shape}"
            )
        return self._no_index, actions

    def _checked_masks(self, masks, rows, act_index):
        if not self.discrete:
            raise ValueError("legal-move masks apply to Discrete actions only")
        if not isinstance(masks, np.ndarray) or masks.dtype != np.bool_:
            raise ValueError("masks must be a numpy bool array")
        if masks.shape != (rows, self.action_size):
            raise ValueError(
                f"masks must have shape ({rows}, {self.action_size}), got {masks.shape}"
            )
        masks = np.ascontiguousarray(masks)
        if rows and not masks[np.arange(rows), act_index].all():
            raise ValueError("every action must be legal under its row's mask")
        return masks

    def _checked_order(self, order, rows):
        epochs = self._settings["epochs"]
        if not isinstance(order, np.ndarray) or order.dtype != np.int64:
            raise ValueError("order must be a numpy int64 array")
        if order.shape != (epochs, rows):
            raise ValueError(f"order must have shape ({epochs}, {rows}), got {order.shape}")
        order = np.ascontiguousarray(order)
        if not are_permutations(order, self._seen):
            raise ValueError("every row of order must be a permutation of range(rows)")
        return order

    def load_optimizer(self, optimizer):
        """Take Adam's moments and step count from ``optimizer`` (a ``torch.optim.Adam`` over
        this network's parameters; parameters it has no state for start from zero)."""
        steps = set()
        for p, a, b in self._spans():
            state = optimizer.state.get(p, {})
            if not state:
                self.exp_avg[a:b] = self.exp_avg_sq[a:b] = 0.0
                steps.add(0)
                continue
            self.exp_avg[a:b] = state["exp_avg"].detach().reshape(-1).numpy()
            self.exp_avg_sq[a:b] = state["exp_avg_sq"].detach().reshape(-1).numpy()
            steps.add(int(float(state["step"])))
        if len(steps) > 1:
            raise ValueError(f"the optimizer's parameters are at different steps: {steps}")
        self.steps = steps.pop()

    def store_optimizer(self, optimizer):
        """Write Adam's moments and step count into ``optimizer`` (a ``torch.optim.Adam`` over
        this network's parameters), so PyTorch can carry on from here."""
        for p, a, b in self._spans():
            optimizer.state[p] = {
                "step": torch.tensor(float(self.steps)),
                "exp_avg": torch.from_numpy(self.exp_avg[a:b].reshape(p.shape).copy()),
                "exp_avg_sq": torch.from_numpy(self.exp_avg_sq[a:b].reshape(p.shape).copy()),
            }


def _settings(config):
    """The PPO settings the kernel reads, checked."""
    out = {}
    for key, name in (("epochs", "update_epochs"), ("minibatches", "num_minibatches")):
        value = getattr(config, name)
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
        out[key] = int(value)
    for name in ("norm_adv", "clip_vloss"):
        value = getattr(config, name)
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"{name} must be true or false, got {value!r}")
        out[name] = bool(value)
    for name in ("clip_coef", "max_grad_norm"):
        out[name] = _number(getattr(config, name), name)
    for name in ("ent_coef", "vf_coef"):
        out[name] = _number(getattr(config, name), name, zero=True)
    out["seed"] = _word(getattr(config, "seed", 0), "seed")
    threads = getattr(config, "torch_threads", 1)
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1:
        raise ValueError(f"torch_threads must be a positive integer, got {threads!r}")
    # The actor and the critic take a thread each at most; numba has no more than it started.
    out["threads"] = min(int(threads), 2, nb.config.NUMBA_NUM_THREADS)
    return out


def _number(value, name, zero=False):
    """``value`` as a finite float above 0 (or at least 0 where ``zero``), else ValueError."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    value = float(value)
    if not math.isfinite(value) or value < 0 or (value == 0 and not zero):
        raise ValueError(f"{name} must be a finite number {'>=' if zero else '>'} 0, got {value}")
    return value


def _floats(x, name, ndim):
    """``x`` as a C-contiguous float32 array of ``ndim`` dimensions, finite, else ValueError."""
    if not isinstance(x, np.ndarray):
        raise ValueError(f"{name} must be a numpy array, got {type(x).__name__}")
    if x.dtype != np.float32:
        raise ValueError(f"{name} must be float32, got {x.dtype}")
    if x.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {x.shape}")
    x = np.ascontiguousarray(x)
    # A float64 sum is finite exactly when every float32 entry is: one pass, no temporary.
    if not math.isfinite(np.add.reduce(x, axis=None, dtype=np.float64)):
        raise ValueError(f"{name} holds NaN or infinite values")
    return x
