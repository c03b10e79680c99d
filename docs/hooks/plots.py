"""The performance pages' plots, drawn at build time from the saved results of the latest runs
(``docs/training/race/race.json``, ``docs/training/ppo_zoo.json``,
``docs/training/minatar.json``, ``docs/alphazero/connectx.json``), so a new run's results are a
new picture at the next build and no picture is committed; so is the replay of a trained
connectx network's match (``alphazero/replay.html``, the Kaggle face's HTML replay).
"""

import io
import json
from pathlib import Path

from mkdocs.structure.files import File

DOCS = Path(__file__).resolve().parents[1]
RACE = DOCS / "training" / "race" / "race.json"
ZOO = DOCS / "training" / "ppo_zoo.json"
MINATAR = DOCS / "training" / "minatar.json"
ALPHAZERO = DOCS / "alphazero" / "connectx.json"


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def race_plot(results, out):
    """Each side of the race: median seconds to the threshold (left) and env-steps/s (right)."""
    plt = _pyplot()
    sides = list(results["sides"].values())
    labels = [side["label"] for side in sides]
    seconds = [side["summary"].get("median_seconds_to_threshold") for side in sides]
    rates = [side["summary"].get("median_steps_per_second") or 0 for side in sides]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 0.5 * len(sides) + 1.6), sharey=True)
    ys = range(len(sides))
    left.barh(ys, [s or 0 for s in seconds], color="#3f51b5")
    for y, s in zip(ys, seconds, strict=True):
        left.text(s or 0, y, f" {s:.1f} s" if s else " not reached", va="center", fontsize=8)
    left.set_xscale("symlog", linthresh=1)
    left.set_xlabel(f"median seconds to {results['threshold']:g} (lower is better)")
    left.set_yticks(list(ys), labels, fontsize=8)
    left.invert_yaxis()
    right.barh(ys, rates, color="#009688")
    for y, r in zip(ys, rates, strict=True):
        right.text(r, y, f" {r:,.0f}", va="center", fontsize=8)
    right.set_xlabel("env-steps/s while training (higher is better)")
    fig.suptitle(f"{results['env']}: the PPO race of {results['date'][:10]}", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=100, format="png")
    plt.close(fig)


def zoo_plot(results, out):
    """Steps each seed took to reach its game's target, one row per tuned game."""
    plt = _pyplot()
    games = results["games"]
    fig, ax = plt.subplots(figsize=(8, 0.5 * len(games) + 1.4))
    for y, game in enumerate(games):
        steps = [a["steps"] for a in game["attempts"] if a["solved"]]
        ax.scatter(steps, [y] * len(steps), color="#3f51b5", zorder=3)
        ax.plot([0, game["budget"]], [y, y], color="#cccccc", zorder=1)
    ax.set_yticks(
        range(len(games)), [f"{g['id']} ({g['solved']}/{len(g['seeds'])})" for g in games]
    )
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("env steps to the target, one point per seed (grey: the step budget)")
    ax.set_title(f"Tuned PPO configurations, run of {results['machine']['date']}", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=100, format="png")
    plt.close(fig)


def minatar_plot(results, out):
    """Each MinAtar run's running mean against its env steps, one panel per game, the published
    return drawn in."""
    plt = _pyplot()
    games = sorted({run["game"] for run in results["runs"]})
    fig, axes = plt.subplots(1, len(games), figsize=(4.2 * len(games), 3.4), squeeze=False)
    for ax, game in zip(axes[0], games, strict=True):
        runs = [run for run in results["runs"] if run["game"] == game]
        for run in runs:
            steps = [row[0] / 1e6 for row in run["curve"]]
            means = [row[2] for row in run["curve"]]
            sticky = ", sticky" if run["sticky_action_prob"] else ""
            changed = "".join(f", {k} {v}" for k, v in run.get("changed", {}).items())
            label = f"run {run['name']}, seed {run['seed']}{sticky}{changed}"
            ax.plot(steps, means, lw=1.2, label=label)
        published = runs[0]["published"]
        ax.axhline(published, color="#c62828", ls="--", lw=1, label=f"published {published:g}")
        ax.set_title(game.removeprefix("minatar_").replace("_", " ").title(), fontsize=10)
        ax.set_xlabel("env steps (millions)")
        ax.legend(fontsize=7, loc="lower right")
    axes[0][0].set_ylabel("mean return, last 100 episodes")
    title = "PPO on MinAtar, gymnax-blines' configuration (fields changed as labelled), 2 vCPUs"
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=100, format="png")
    plt.close(fig)


def alphazero_plot(results, out):
    """Each run's evaluations during training (win rate with its 95% interval) against the
    minutes they came at, one panel per opponent, the issue's target drawn in."""
    plt = _pyplot()
    runs = results["runs"]
    opponents = sorted({point["opponent"] for run in runs for point in run["curve"]})
    opponents = [o for o in opponents if o != "random"] or opponents
    fig, axes = plt.subplots(1, len(opponents), figsize=(5.5 * len(opponents), 3.6), sharey=True)
    axes = axes if len(opponents) > 1 else [axes]
    for ax, opponent in zip(axes, opponents, strict=True):
        for run in runs:
            points = [p for p in run["curve"] if p["opponent"] == opponent]
            minutes = [p["minutes"] for p in points]
            rate = [p["win_rate"][0] for p in points]
            low = [p["win_rate"][0] - p["win_rate"][1] for p in points]
            high = [p["win_rate"][2] - p["win_rate"][0] for p in points]
            ax.errorbar(minutes, rate, yerr=[low, high], capsize=2, marker="o", markersize=3,
                        label=f"seed {run['seed']}")  # fmt: skip
        if opponent == "negamax":
            ax.axhline(0.9, color="#999999", linestyle="--", linewidth=1, label="target 90%")
        ax.set_title(f"vs {opponent} ({points[0]['matches'] if points else 0} matches each)")
        ax.set_xlabel("training minutes")
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("win rate, 95% interval")
    axes[0].legend(fontsize=8, loc="lower right")
    fig.suptitle(
        f"AlphaZero on connectx during training, run {results['name']} "
        f"of {results['machine']['date']}",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(out, dpi=100, format="png")
    plt.close(fig)


PLOTS = {
    "performance/race.png": (RACE, race_plot),
    "performance/zoo.png": (ZOO, zoo_plot),
    "training/minatar.png": (MINATAR, minatar_plot),
    "alphazero/connectx.png": (ALPHAZERO, alphazero_plot),
}


def replay_page(results):
    """The recorded match of ``results["replay"]`` as the Kaggle face's HTML replay."""
    from vecenv import kaggle

    replay = results["replay"]
    env = kaggle.make("connectx", steps=replay["steps"])
    return env.render(mode="html")


def on_files(files, config):
    for uri, (source, draw) in PLOTS.items():
        picture = io.BytesIO()
        draw(json.loads(source.read_text()), picture)
        files.append(File.generated(config, uri, content=picture.getvalue()))
    page = replay_page(json.loads(ALPHAZERO.read_text()))
    files.append(File.generated(config, "alphazero/replay.html", content=page))
    return files
