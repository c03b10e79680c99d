"""The figures of saved runs over time, one line per figure, as a PNG (matplotlib)."""

import datetime


def plot_history(runs, path, gated_only=True):
    """``runs``: (path, run) pairs, oldest first. Each figure's median is drawn relative to its
    first saved value, so figures of every size share one axis (1.0 = as first saved)."""
    from matplotlib.figure import Figure

    series = {}
    for _, run in runs:
        when = datetime.datetime.fromisoformat(run["created"])
        for name, fig in run["figures"].items():
            if (gated_only and not fig.get("gate", True)) or fig.get("value") is None:
                continue
            series.setdefault(name, []).append((when, fig["value"]))
    fig = Figure(figsize=(7.2, 4.4), layout="constrained")
    ax = fig.add_subplot()
    for name, points in series.items():
        first = points[0][1]
        ax.plot([w for w, _ in points], [v / first for _, v in points], marker="o", label=name)
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_ylabel("time over calibration, relative to the first run")
    ax.set_title(f"{len(runs)} saved run(s): higher is slower")
    ax.grid(True, alpha=0.3)
    if series:
        ax.legend(fontsize="small")
    fig.autofmt_xdate()
    fig.savefig(path, dpi=120)
    return len(series)
