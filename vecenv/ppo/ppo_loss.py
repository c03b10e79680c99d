"""PPO's loss on one minibatch and its gradient with respect to the network's outputs (the
actor's logits or Gaussian means, the critic's values, ``log_std``): the clipped policy loss,
the clipped or plain value loss and the entropy bonus as ``trainer.update`` computes them, for
``CompiledUpdate`` to carry back through the layers."""

import math

import numba as nb
import numpy as np

_HALF_LOG_TWO_PI = 0.5 * math.log(2.0 * math.pi)
_F = np.float32
_ONE = _F(1.0)
_ADV_EPS = _F(1e-8)


@nb.njit(cache=True, error_model="numpy")
def loss_head(
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
    stats,
):
    """The loss's gradient with respect to the actor's outputs (into ``dlogits``), the critic's
    (into ``dvalue``) and ``log_std`` (into ``glog``, summed in ``glog_sum``), for the minibatch
    rows ``idx``; the minibatch's losses into ``stats``. ``probs`` is scratch for a row's
    log-probabilities and probabilities."""
    n_act = logits.shape[0]
    inv_m = 1.0 / m
    mean32, den32 = _F(0.0), _ONE
    if norm_adv and m > 1:
        total = 0.0
        for r in range(m):
            total += np.float64(adv[idx[r]])
        mean = total / m
        squares = 0.0
        for r in range(m):
            d = np.float64(adv[idx[r]]) - mean
            squares += d * d
        mean32 = _F(mean)
        den32 = _F(math.sqrt(squares / (m - 1))) + _ADV_EPS
    # The clamp bounds as PyTorch's float32 clamp sees the Python floats 1 -+ clip_coef.
    lo32, hi32 = _F(1.0 - clip_coef), _F(1.0 + clip_coef)
    c32 = _F(clip_coef)
    # The Gaussian's spread (log_std changes every step), as CompiledPolicy computes it.
    constant = 0.0
    row_entropy = 0.0
    if not discrete:
        for d in range(n_act):
            constant -= np.float64(log_std[d]) + _HALF_LOG_TWO_PI
            row_entropy += 0.5 + _HALF_LOG_TWO_PI + np.float64(log_std[d])
            glog_sum[d] = 0.0
    pg_sum = v_sum = ent_sum = kl_sum = 0.0
    clipped_rows = 0
    for r in range(m):
        q = idx[r]
        entropy = row_entropy
        if discrete:
            top = -np.inf
            for a in range(n_act):
                if not has_mask or mask[q, a]:
                    top = max(top, np.float64(logits[a, r]))
            total = 0.0
            for a in range(n_act):
                weight = 0.0
                if not has_mask or mask[q, a]:
                    weight = math.exp(np.float64(logits[a, r]) - top)
                probs[1, a] = weight
                total += weight
            # (logit - top) - log(total), in CompiledPolicy's order: the same float32 logp.
            log_total = math.log(total)
            entropy = 0.0
            for a in range(n_act):
                if probs[1, a] > 0.0:
                    lp = (np.float64(logits[a, r]) - top) - log_total
                    probs[0, a] = lp
                    probs[1, a] /= total
                    entropy -= probs[1, a] * lp
            new_logp = _F((np.float64(logits[act_index[q], r]) - top) - log_total)
        else:
            squares = 0.0
            for d in range(n_act):
                dev = (np.float64(act_value[q, d]) - np.float64(logits[d, r])) / math.exp(
                    np.float64(log_std[d])
                )
                squares += dev * dev
            new_logp = _F(constant - 0.5 * squares)
        log_ratio = new_logp - old_logp[q]
        ratio = _F(math.exp(np.float64(log_ratio)))
        a32 = (adv[q] - mean32) / den32
        t1 = -a32 * ratio
        t2 = -a32 * min(max(ratio, lo32), hi32)
        inside = lo32 <= ratio <= hi32
        g1 = -np.float64(a32)
        g2 = g1 if inside else 0.0
        if t1 > t2:
            g_ratio = g1
        elif t1 < t2:
            g_ratio = g2
        else:
            g_ratio = 0.5 * (g1 + g2)
        g_logp = g_ratio * np.float64(ratio) * inv_m
        pg_sum += np.float64(max(t1, t2))
        ent_sum += entropy
        kl_sum += (np.float64(ratio) - 1.0) - np.float64(log_ratio)
        if abs(np.float64(ratio) - 1.0) > clip_coef:
            clipped_rows += 1
        if discrete:
            g_ent = ent_coef * inv_m
            for a in range(n_act):
                p = probs[1, a]
                if p > 0.0:  # masked actions, and any whose probability underflows, get none
                    pick = 1.0 if a == act_index[q] else 0.0
                    dlogits[a, r] = _F(g_logp * (pick - p) + g_ent * p * (probs[0, a] + entropy))
                else:
                    dlogits[a, r] = _F(g_logp) if a == act_index[q] else _F(0.0)
        else:
            for d in range(n_act):
                std = math.exp(np.float64(log_std[d]))
                dev = (np.float64(act_value[q, d]) - np.float64(logits[d, r])) / std
                dlogits[d, r] = _F(g_logp * dev / std)
                glog_sum[d] += g_logp * (dev * dev - 1.0)
        v = value[0, r]
        ret = returns[q]
        if clip_vloss:
            old = old_values[q]
            delta = v - old
            clipped = old + min(max(delta, -c32), c32)
            e1, e2 = v - ret, clipped - ret
            s1, s2 = e1 * e1, e2 * e2
            d1 = 2.0 * np.float64(e1)
            d2 = 2.0 * np.float64(e2) if -c32 <= delta <= c32 else 0.0
            if s1 > s2:
                g_v = d1
            elif s1 < s2:
                g_v = d2
            else:
                g_v = 0.5 * (d1 + d2)
            v_sum += np.float64(max(s1, s2))
        else:
            e1 = v - ret
            g_v = 2.0 * np.float64(e1)
            v_sum += np.float64(e1 * e1)
        dvalue[0, r] = _F(0.5 * vf_coef * inv_m * g_v)
    for r in range(m, cols):
        for a in range(n_act):
            dlogits[a, r] = 0.0
        dvalue[0, r] = 0.0
    if not discrete:
        for d in range(n_act):
            glog[d] = _F(glog_sum[d] - ent_coef)
    stats[0] = pg_sum * inv_m
    stats[1] = 0.5 * v_sum * inv_m
    stats[2] = ent_sum * inv_m
    stats[3] = kl_sum * inv_m
    stats[4] = clipped_rows * inv_m
