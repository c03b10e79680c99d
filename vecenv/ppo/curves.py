"""Learning curves: a run's rows as CSV, and one PNG plot of one or more runs (optional: it
needs matplotlib, and a run's results are written before it)."""

import csv
import os


def write_csv(run, path):
    """``steps,seconds,<metric>`` after every update of ``run``: the running mean's column is
    ``mean_return``, or ``mean_reward_per_step`` for a run measured in segments."""
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["steps", "seconds", run.config.metric])
        for steps, seconds, mean in run.curve:
            writer.writerow([steps, f"{seconds:.4f}", f"{mean:.4f}"])


def plot(runs, path, title="", threshold=None):
    """Mean return against env steps and against wall-clock seconds, side by side, for
    ``runs`` ({label: Run}); matplotlib draws to a file, no display needed."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    fig, (by_steps, by_time) = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for label, run in runs.items():
        steps = [row[0] for row in run.curve]
        seconds = [row[1] for row in run.curve]
        means = [row[2] for row in run.curve]
        by_steps.plot(steps, means, label=label)
        by_time.plot(seconds, means, label=label)
    for ax, xlabel in ((by_steps, "environment steps"), (by_time, "wall-clock seconds")):
        if threshold is not None:
            ax.axhline(threshold, color="grey", linestyle="--", linewidth=1)
        ax.set_xlabel(xlabel)
        ax.grid(alpha=0.3)
    metrics = {run.config.metric for run in runs.values() if hasattr(run, "config")}
    per_step = metrics == {"mean_reward_per_step"}
    by_steps.set_ylabel("mean reward per step" if per_step else "mean episode return")
    by_time.legend(loc="lower right")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def try_plot(runs, path, **kwargs):
    """``plot`` where matplotlib is installed; True if the plot was written. Without it, a
    stale plot at ``path`` from an earlier run is removed rather than left to mislead."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        if os.path.exists(path):
            os.remove(path)
        return False
    plot(runs, path, **kwargs)
    return True
