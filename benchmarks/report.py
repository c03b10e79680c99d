"""Results of one run, the comparisons between them, and the table printed at its end.

A benchmark calls ``record(benchmark, key, calls, num_envs)`` after timing; its throughput (from
the best round) goes into ``benchmark.extra_info`` and into ``RESULTS``. Test modules declare the
comparisons they feed with ``compare(...)``; as soon as both sides of one are recorded its ratio is
written into the extra_info of both benchmarks, so ``--benchmark-json`` and ``--benchmark-autosave``
keep it, and ``summary_lines()`` prints every comparison at the end of the run. Beside each ratio
from the best rounds, the same ratio from the median round time over the calibration kernel
(``..._calibrated``, see ``vecenv.perf``) is kept: the figure that noise moves least.
"""

import json
import os
import re
import statistics
from dataclasses import dataclass
from pathlib import Path

RESULTS = {}  # key -> Result
EXTRA = {}  # key -> extra_info of benchmarks that are not throughputs (startup)
COMPARISONS = []  # in declaration order
LABELS = {}  # key -> how the table names it


@dataclass
class Result:
    rate: float  # env-steps per second, from the best round
    extra_info: dict


@dataclass(frozen=True)
class Comparison:
    section: str
    title: str
    num: tuple  # the key measured
    den: tuple  # the key it is measured against
    kind: str  # "ratio": rate(num) / rate(den); "overhead": time(num) / time(den) - 1
    target: float = None  # ratio at least / overhead at most
    target_text: str = ""

    def value(self, calibrated=False):
        a, b = RESULTS.get(self.num), RESULTS.get(self.den)
        if a is None or b is None:
            return None
        ra, rb = (_calibrated_rate(a), _calibrated_rate(b)) if calibrated else (a.rate, b.rate)
        if ra is None or rb is None:
            return None
        if self.kind == "ratio":
            return ra / rb
        return rb / ra - 1.0

    def met(self, value):
        if self.target is None or value is None:
            return None
        return value >= self.target if self.kind == "ratio" else value <= self.target


def _calibrated_rate(result):
    """Units per calibration round, from the median round time over the calibration before it."""
    info = result.extra_info
    norm = (info.get("vecenv_perf") or {}).get("norm")
    if not norm:
        return None
    return info["calls_per_round"] * info["num_envs"] / statistics.median(norm)


def is_reference(key):
    """Whether ``key`` is only ever what others are measured against (a peer, a reference)."""
    dens = any(c.den == key for c in COMPARISONS)
    return dens and not any(c.num == key for c in COMPARISONS)


def label(key, text):
    LABELS[key] = text


def compare(section, title, num, den, kind="ratio", target=None, target_text=""):
    comp = Comparison(section, title, num, den, kind, target, target_text)
    if comp not in COMPARISONS:
        COMPARISONS.append(comp)
    return comp


def _slug(key):
    return "/".join(str(k) for k in key)


def record(benchmark, key, calls, num_envs, unit="steps", **info):
    """Store the throughput of ``calls`` step calls over ``num_envs`` per round under ``key``, and
    update every comparison it takes part in. ``unit`` names what is counted (steps, episodes,
    matches, plies) in the printed table."""
    benchmark.extra_info.update(
        {"key": _slug(key), "num_envs": num_envs, "calls_per_round": calls, "unit": unit, **info}
    )
    if is_reference(key):
        # A peer or reference loop: its slowdown is not a regression of vecenv's, so the
        # regression check shows its figure but does not fail on it (vecenv.perf.pytest_plugin).
        benchmark.extra_info["gate"] = False
    if benchmark.disabled or not benchmark.stats:
        return
    # The best round: on a shared machine other work only ever adds time, so the fastest round is
    # the steadiest estimate of what the code costs (the median is kept beside it).
    best, median = benchmark.stats.stats.min, benchmark.stats.stats.median
    rate = calls * num_envs / best
    benchmark.extra_info["env_steps_per_s"] = rate
    benchmark.extra_info["env_steps_per_s_median"] = calls * num_envs / median
    benchmark.extra_info["us_per_call"] = best / calls * 1e6
    RESULTS[key] = Result(rate, benchmark.extra_info)
    for comp in COMPARISONS:
        if key not in (comp.num, comp.den):
            continue
        value = comp.value()
        if value is None:
            continue
        name = "ratio" if comp.kind == "ratio" else "overhead"
        RESULTS[comp.num].extra_info[f"{name}_vs_{_slug(comp.den)}"] = round(value, 4)
        RESULTS[comp.den].extra_info[f"{name}_of_{_slug(comp.num)}"] = round(value, 4)
        calibrated = comp.value(calibrated=True)
        if calibrated is not None:
            RESULTS[comp.num].extra_info[f"{name}_vs_{_slug(comp.den)}_calibrated"] = round(
                calibrated, 4
            )
        if comp.target is not None:
            RESULTS[comp.num].extra_info[f"target_{name}_vs_{_slug(comp.den)}"] = comp.target


def record_rounds(key, times, calls, num_envs):
    """Store the throughput of a side timed by hand (in the setup of another benchmark's rounds,
    so that both see the same spells of a shared machine): its best round of ``calls`` step calls
    over ``num_envs``. Returns its figures, for the benchmark's extra_info."""
    best = min(times)
    info = {"key": _slug(key), "num_envs": num_envs, "calls_per_round": calls}
    info.update(env_steps_per_s=calls * num_envs / best, us_per_call=best / calls * 1e6)
    RESULTS[key] = Result(calls * num_envs / best, info)
    return info


def record_extra(key, benchmark, **info):
    """Store figures of a benchmark that is not a throughput (its extra_info too)."""
    benchmark.extra_info.update(info)
    if not benchmark.disabled:
        EXTRA[key] = dict(info)


def startup_lines():
    """Cold compile and warm start per game, against the budgets."""
    lines = []
    for key, info in EXTRA.items():
        if key[0] != "startup":
            continue
        if not lines:
            lines.append(
                "-- Startup: import vecenv + make(num_envs=8) + first step, in a fresh "
                "process (in-process time; process wall time in brackets)"
            )
        cold, warm = info["cold_s"], info["warm_s"]
        lines.append(
            f"  {key[1]}: cold {cold:.2f} s ({info['cold_wall_s']:.2f} s)"
            f" [budget < 5 s: {'met' if cold < 5 else 'MISSED'}], "
            f"warm {warm:.2f} s ({info['warm_wall_s']:.2f} s)"
            f" [budget < 1 s: {'met' if warm < 1 else 'MISSED'}]; warm split: import "
            f"{info['warm_import_s']:.2f} s, make {info['warm_make_s']:.2f} s, "
            f"first step {info['warm_step_s']:.3f} s"
        )
    return lines


def _rate(result):
    rate, unit = result.rate, result.extra_info.get("unit", "steps")
    if rate >= 1e6:
        return f"{rate / 1e6:.3g} M {unit}/s"
    if rate >= 1e3:
        return f"{rate / 1e3:.3g} k {unit}/s"
    return f"{rate:.3g} {unit}/s"


def _verdict(comp, value):
    met = comp.met(value)
    if met is None:
        return ""
    return f"  [{comp.target_text}: {'met' if met else 'MISSED'}]"


def _line(comp):
    a, b = RESULTS.get(comp.num), RESULTS.get(comp.den)
    na, nb = LABELS.get(comp.num, _slug(comp.num)), LABELS.get(comp.den, _slug(comp.den))
    if a is None and b is None:
        return None
    if a is None or b is None:
        have, missing = (na, a) if a is not None else (nb, b), nb if a is not None else na
        return f"{comp.title}: {have[0]} {_rate(have[1])}; {missing} not measured"
    value = comp.value()
    if comp.kind == "ratio":
        tail = f"ratio {value:.2f}x"
    else:
        tail = f"{na} overhead vs {nb}: {value * 100:+.0f}%"
    return f"{comp.title}: {na} {_rate(a)}, {nb} {_rate(b)}, {tail}{_verdict(comp, value)}"


def summary_lines(smoke):
    """The end-of-run table (or the smoke-mode notice)."""
    if smoke:
        return ["smoke mode, no figures (benchmarks disabled: each body ran once)"]
    lines = []
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    if load:
        lines.append(
            f"{os.cpu_count()} CPUs, load average {load[0]:.2f} / {load[1]:.2f} "
            f"(1 / 5 min): other work on the machine adds noise; compare ratios."
        )
    lines.append(
        "Throughputs from the best round of each benchmark, per second in each row's unit."
    )
    section = None
    for comp in COMPARISONS:
        text = _line(comp)
        if text is None:
            continue
        if comp.section != section:
            section = comp.section
            lines.append("")
            lines.append(f"-- {section}")
        lines.append("  " + text)
    startup = startup_lines()
    if startup:
        lines.append("")
        lines.extend(startup)
    if len(lines) <= 1:
        lines.append("no comparisons measured")
    return lines


# -- the scripts' reports (not pytest) ---------------------------------------------------------


def load_average():
    """The load average, as the scripts' reports give it before and after a run."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def check_run_name(parser, name):
    """A script's ``--name`` names its files: letters, digits, '-' and '_' (or none), else
    ``parser.error``."""
    if not re.fullmatch(r"[A-Za-z0-9_-]*", name):
        parser.error(f"--name: letters, digits, '-' and '_' (it names files), got {name!r}")


def finish_run(report, markdown, out, stem):
    """A script's run ended: its load average after, its tables printed and, where ``out`` is a
    folder, written there with the raw figures (``stem``.json and ``stem``.md)."""
    report["load_after"] = load_average()
    text = markdown(report)
    if out:
        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{stem}.json").write_text(json.dumps(report, indent=1) + "\n")
        (folder / f"{stem}.md").write_text(text)
    print(text)
    return report
