"""The first layer of the compiled update on sparse inputs: forward and weight gradient from the
inputs that are not zero.

Image observations such as MinAtar's are mostly zeros (Seaquest's 10x10x10 channels hold a few
dozen ones), and the first layer, the widest, takes most of an update's arithmetic: on
Seaquest's 1,000 inputs and 256 units, 72% of it. Its forward pass and its weight gradient touch
every input; here they touch only the ones that are not zero.

``gather`` lists, column by column (a column is a batch row, as in ``vecenv.ppo.dense``), the
inputs that are not zero (NaN included) and their values, in input order. ``layer`` then sums,
for each output, its bias plus the products of the listed inputs in input order, each product
rounded and then added as ``dense.layer`` adds them: the products it leaves out are of inputs
equal to zero, which add nothing, so the results are ``dense.layer``'s bit for bit but for the
sign of an output that is exactly zero, and but for weights that are not finite (a NaN or
infinite weight of an input that is zero gives NaN in ``dense.layer`` and nothing here).
``weight_grad`` adds each listed input's products into its gradient row, columns in order: a
fixed order, so the same bits on every run and thread count, within float32 rounding of
``dense_grad.weight_grad`` (which folds its sums differently); a weight whose input is zero in
every column gets exactly 0, as there.

``worth`` says when the lists pay: when at most a quarter of the inputs are not zero.
"""

import numba as nb

from . import dense

DENSITY = 0.25  # the largest share of nonzero inputs for which the lists are used


@nb.njit(cache=True, error_model="numpy")
def count(src, n_in, width, starts):
    """How many of the first ``n_in`` rows' first ``width`` entries are not zero; and where
    each column's list begins, in ``starts`` (``width + 1`` entries: column ``r``'s list is
    ``starts[r]:starts[r + 1]``), for ``gather``."""
    for r in range(width + 1):
        starts[r] = 0
    for k in range(n_in):
        row = src[k]
        for r in range(width):
            if row[r] != 0.0:
                starts[r + 1] += 1
    for r in range(width):
        starts[r + 1] += starts[r]
    return starts[width]


@nb.njit(cache=True, error_model="numpy")
def worth(nonzero, n_in, width):
    """Whether ``nonzero`` entries of an (``n_in``, ``width``) input make the lists pay."""
    return nonzero <= DENSITY * n_in * width


@nb.njit(cache=True, error_model="numpy")
def gather(src, n_in, width, starts, index, values):
    """Column ``r``'s nonzero inputs of the (``n_in``, >= ``width``) ``src``: their rows in
    ``index[starts[r]:starts[r + 1]]`` (ascending) and values in ``values`` at the same places,
    ``starts`` as ``count`` left it; ``index`` and ``values`` need ``count``'s total."""
    # Inputs in ascending order fill each column's slots from its start.
    fill = starts[:width].copy()
    for k in range(n_in):
        row = src[k]
        for r in range(width):
            if row[r] != 0.0:
                p = fill[r]
                index[p] = k
                values[p] = row[r]
                fill[r] = p + 1


@nb.njit(cache=True, error_model="numpy")
def transpose(a, out):
    """``out[k, j] = a[j, k]`` for the whole of ``a``, in blocks that stay in cache."""
    rows, cols = a.shape
    block = 32
    for j0 in range(0, rows, block):
        for k0 in range(0, cols, block):
            for j in range(j0, min(j0 + block, rows)):
                for k in range(k0, min(k0 + block, cols)):
                    out[k, j] = a[j, k]


@nb.njit(cache=True, error_model="numpy")
def layer(wt, b, starts, index, values, dst, width, activation, acc):
    """``dense.layer``'s outputs for the first ``width`` columns from ``gather``'s lists:
    ``dst[j, r] = b[j] + sum over column r's nonzero inputs k of w[j, k] * x[k, r]`` (then
    ``activation``), with ``wt`` the weights transposed (inputs, outputs) and ``acc`` scratch
    of the outputs' length."""
    n_out = b.shape[0]
    for r in range(width):
        for j in range(n_out):
            acc[j] = b[j]
        for p in range(starts[r], starts[r + 1]):
            row = wt[index[p]]
            v = values[p]
            for j in range(n_out):
                acc[j] = acc[j] + row[j] * v
        if activation == dense.TANH:
            for j in range(n_out):
                dst[j, r] = dense.tanh(acc[j])
        elif activation == dense.RELU:
            for j in range(n_out):
                dst[j, r] = dense.relu(acc[j])
        else:
            for j in range(n_out):
                dst[j, r] = acc[j]


@nb.njit(cache=True, error_model="numpy")
def weight_grad(dy, starts, index, values, dw, width, dyt, dwt):
    """``dw[j, k] = sum_r dy[j, r] * x[k, r]`` over the first ``width`` columns from
    ``gather``'s lists of ``x``; ``dyt`` (>= ``width``, outputs) and ``dwt`` (inputs, outputs)
    are scratch."""
    n_out, n_in = dw.shape
    for r in range(width):
        for j in range(n_out):
            dyt[r, j] = dy[j, r]
    for k in range(n_in):
        for j in range(n_out):
            dwt[k, j] = 0.0
    for r in range(width):
        grad = dyt[r]
        for p in range(starts[r], starts[r + 1]):
            row = dwt[index[p]]
            v = values[p]
            for j in range(n_out):
                row[j] += grad[j] * v
    transpose(dwt, dw)
