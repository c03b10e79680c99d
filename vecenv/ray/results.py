"""The result arrays of a batch spread over Ray workers, as ``vecenv.ray`` lays them out: one
flat name -> array mapping (what the shared memory holds), each worker's slice of it, and the
infos of the slices merged into the batch's."""

import numpy as np

from vecenv.gym.spaces import episode_obs


def split(num_envs, num_workers):
    """The (first, count) slices of ``num_envs`` episodes over ``num_workers`` workers: counts
    differ by at most one, the larger first."""
    base, extra = divmod(num_envs, num_workers)
    slices, first = [], 0
    for w in range(num_workers):
        n = base + (w < extra)
        slices.append((first, n))
        first += n
    return slices


def flat_results(obs, rewards, terminated, truncated, steady):
    """A step's result buffers as one flat name -> array mapping (observation fields first, the
    steady infos last)."""
    flat = {f"obs:{k}": v for k, v in obs.items()} if isinstance(obs, dict) else {"obs": obs}
    flat.update(rewards=rewards, terminated=terminated, truncated=truncated)
    flat.update({f"info:{k}": v for k, v in steady.items()})
    return flat


def slice_results(arrays, first, n):
    """Episodes ``first .. first + n - 1`` of flat result arrays, the observation regrouped."""
    end = first + n
    part = {k: v[first:end] for k, v in arrays.items()}
    fields = {k[4:]: part.pop(k) for k in list(part) if k.startswith("obs:")}
    part["obs"] = fields if fields else part.pop("obs")
    part["infos"] = {k[5:]: part.pop(k) for k in list(part) if k.startswith("info:")}
    return part


def put(buffer, obs, first, n):
    if isinstance(buffer, dict):
        for k, v in buffer.items():
            v[first : first + n] = obs[k]
    else:
        buffer[first : first + n] = obs


def final_infos(obs, first, n):
    """Same-step infos of a slice whose episodes were lost: their last observation."""
    final = np.full(n, None, dtype=object)
    for i in range(n):
        final[i] = episode_obs(obs, first + i)
    done = np.ones(n, dtype=np.bool_)
    return {"final_obs": final, "_final_obs": done, "final_info": {}, "_final_info": done}


def merge_infos(infos, part, first, n, total):
    """A worker's infos (arrays over its slice) placed into the whole batch's, laid out as
    gymnasium's ``_add_info``: a key missing from a worker reads None, False or 0 there."""
    for key, value in part.items():
        if isinstance(value, dict):
            merge_infos(infos.setdefault(key, {}), value, first, n, total)
            continue
        value = np.asarray(value)
        if key not in infos:
            infos[key] = (
                np.full(total, None, dtype=object)
                if value.dtype == object
                else np.zeros((total,) + value.shape[1:], dtype=value.dtype)
            )
        infos[key][first : first + n] = value
