"""Each gga variant against gga, pooled over every set of turns that ran both, read from the
reports ``gga_turns.py`` wrote (``docs/results/*/gga-turns.md``). It measures nothing.

A variant (``--variant NAME=gga:KEY=VALUE,...``) takes its turns beside gga, so on each
layer of a report the two are timed side by side. One report says little: a variant
sooner on three shapes of one seed may be later on the next seed. Here every report's
layer runs of the same variant options are pooled: per layer run, gga's seconds to the
95% mark over the variant's (above 1: the variant is sooner), in the runs and on the
reported configs timed again (``--deployed``). A layer on one machine counts once, its
seeds' ratios averaged geometrically (``speedup_mean.over_seeds``), so the bootstrap
resamples machine-layers, not seeds of one. Runs that several reports read (a set's
layers read together, or timed again with more rounds) count once: a layer run is known
by its searchers' seconds in all. A variant is compared with the gga of its own turns,
whose defaults changed over the stops: the report names each option set's reports.

    python scripts/variant_pool.py docs/results/*/gga-turns.md --out docs/results/gga-variants.md
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from script_main import exit_status  # noqa: E402

from gga_ceiling import ReportError, cell_number, report_lines, report_machine  # noqa: E402
from machine import write_or_print  # noqa: E402
from speedup_mean import LayerSpeedup, MeanSpeedup, mean_speedup, over_seeds  # noqa: E402

RUNS_TABLE = "| layer | match | searcher | trials | best GFLOPS | / xgb | trials to 95% |"
AGAIN_TABLE = "| layer | searcher | final config again, over xgb's | own seconds to 95% |"
DEPLOYED = "## The configs the runs reported, timed again"
VARIANT = re.compile(r"--variant ([^=\s`]+)=gga:([^\s`]+)")
VIEWS = ("runs", "timed again")


@dataclass(frozen=True)
class Side:
    """One searcher on one layer: seconds to the mark (None: never), seconds in all, and
    its final best over xgb's (in the runs, or its final config timed again)."""

    to_mark: float | None
    in_all: float
    final: float | None


@dataclass(frozen=True)
class LayerRun:
    """One layer of one report: each searcher's side in the runs and timed again."""

    report: str
    machine: str
    date: str
    deployed_view: str  # "median" or "paired"; "" without timings again
    layer: str
    runs: dict[str, Side]
    again: dict[str, Side]

    @property
    def key(self) -> tuple[str, str, tuple[tuple[str, float], ...]]:
        """The same runs read by another report have the same searchers' seconds in all."""
        return (self.machine, self.layer,
                tuple(sorted((n, s.in_all) for n, s in self.runs.items())))


@dataclass(frozen=True)
class Report:
    """One ``gga-turns.md``: its gga variants and its layers."""

    path: Path
    variants: dict[str, str]  # name -> options, gga variants only
    layers: tuple[LayerRun, ...]


def _rows(lines: Sequence[str], start: int) -> list[list[str]]:
    out = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        out.append([c.strip() for c in line.strip().strip("|").split("|")])
    return out


def read_report(path: Path) -> Report:
    """A report's gga variants and its layers' runs; :class:`ReportError` if it is none."""
    lines = report_lines(path)
    command = next((ln for ln in lines if ln.startswith("Command: ")), "")
    if "gga_turns.py" not in command:
        raise ReportError(f"{path} names no gga_turns.py command: is it a gga-turns.md "
                          "written by scripts/gga_turns.py?")
    machine = report_machine(lines)
    date = next((ln[len("- Date: "):] for ln in lines if ln.startswith("- Date: ")), "")
    variants = dict(VARIANT.findall(command))
    try:
        runs, again, view = _read_tables(lines)
    except ReportError as e:
        raise ReportError(f"{path}: {e}") from None
    if not runs:
        raise ReportError(f"{path} has no runs table: is it a gga-turns.md written by "
                          "scripts/gga_turns.py?")
    layers = tuple(LayerRun(path.parent.name, machine, date, view if again else "", name,
                            sides, again.get(name, {}))
                   for name, sides in runs.items())
    return Report(path, variants, layers)


def _read_tables(lines: Sequence[str]) -> tuple[dict[str, dict[str, Side]],
                                                dict[str, dict[str, Side]], str]:
    """The sides of each layer in the runs and timed again, and the reading of the
    timings again ("median" or "paired"; "" without them)."""
    runs: dict[str, dict[str, Side]] = {}
    again: dict[str, dict[str, Side]] = {}
    deployed, view = False, ""
    for i, line in enumerate(lines):
        if line.startswith(DEPLOYED):
            deployed, view = True, "median"
        elif deployed and line.startswith("Paired view"):
            view = "paired"
        elif line.startswith(RUNS_TABLE) and not deployed:
            for c in _rows(lines, i):
                in_all = cell_number(c[8]) if len(c) >= 9 else None
                if in_all is None:
                    raise ReportError(f"a runs row has an unexpected form: {c!r}")
                runs.setdefault(c[0], {})[c[2]] = Side(cell_number(c[7]), in_all,
                                                       cell_number(c[5]))
        elif line.startswith(AGAIN_TABLE):
            for c in _rows(lines, i):
                if len(c) < 4:
                    raise ReportError(f"a timed-again row has an unexpected form: {c!r}")
                got = runs.get(c[0], {}).get(c[1])
                if got is not None:
                    again.setdefault(c[0], {})[c[1]] = Side(cell_number(c[3]), got.in_all,
                                                            cell_number(c[2]))
    return runs, again, view


def speedup(a: Side, b: Side, layer: str) -> LayerSpeedup | None:
    """``b``'s seconds over ``a``'s (above 1: ``a`` sooner), a side that never reached the
    mark standing in with its seconds in all; None where neither reached it."""
    if a.to_mark is None and b.to_mark is None:
        return None
    return LayerSpeedup(layer, a.to_mark if a.to_mark is not None else a.in_all,
                        b.to_mark if b.to_mark is not None else b.in_all,
                        never=a.to_mark is None, other_never=b.to_mark is None)


@dataclass(frozen=True)
class Pooled:
    """A variant's pooled comparison in one view."""

    options: str
    view: str
    layer_runs: int
    reports: tuple[str, ...]
    over_gga: MeanSpeedup | None
    sooner: int  # layer runs where the variant reached the mark before gga
    later: int
    gga_over_xgb: MeanSpeedup | None
    variant_over_xgb: MeanSpeedup | None
    finals: tuple[float, ...]  # the variant's final over gga's, per layer run


def _side(run: LayerRun, view: str) -> dict[str, Side]:
    return run.runs if view == "runs" else run.again


def pool(reports: Sequence[Report], deployed_view: str = "paired") -> list[Pooled]:
    """Every variant's options against gga, in the runs and timed again. For the timings
    again, a layer run read by several reports is taken from the newest report of
    ``deployed_view`` ("median" or "paired"), else from the newest of the other view."""
    by_options: dict[str, dict[tuple, list[tuple[LayerRun, str]]]] = {}
    for rep in reports:
        for name, options in rep.variants.items():
            for run in rep.layers:
                if name in run.runs and "gga" in run.runs:
                    by_options.setdefault(options, {}).setdefault(run.key, []).append((run, name))
    out = []
    for options, runs in sorted(by_options.items()):
        for view in VIEWS:
            picked: list[tuple[LayerRun, str]] = []
            for got in runs.values():
                if view == "runs":  # the same in every report: the first written
                    picked.append(min(got, key=lambda g: (g[0].date, g[0].report)))
                    continue
                timed = [g for g in got if g[0].again]
                if timed:
                    picked.append(max(timed, key=lambda g: (g[0].deployed_view == deployed_view,
                                                            g[0].date)))
            out.append(_pooled(options, view, picked))
    return out


def _pooled(options: str, view: str, picked: Sequence[tuple[LayerRun, str]]) -> Pooled:
    # items are named machine:layer, so that over_seeds averages a layer's seeds on one
    # machine into one item and keeps the same layer on two machines apart
    over_gga: list[LayerSpeedup] = []
    vs_xgb: dict[str, list[LayerSpeedup]] = {"gga": [], "variant": []}
    finals: list[float] = []
    for run, name in picked:
        sides = _side(run, view)
        g, v, x = sides.get("gga"), sides.get(name), sides.get("xgb")
        if g is None or v is None:
            continue
        where = f"{run.machine}:{run.layer}"
        if (s := speedup(v, g, where)) is not None:
            over_gga.append(s)
        if v.final is not None and g.final:
            finals.append(v.final / g.final)
        for who, side in (("gga", g), ("variant", v)):
            if x is not None and (got := speedup(side, x, where)) is not None:
                vs_xgb[who].append(got)
    return Pooled(options, view, len(picked), tuple(sorted({r.report for r, _ in picked})),
                  mean_speedup(over_seeds([over_gga])),
                  sum(1 for s in over_gga if s.ratio > 1), sum(1 for s in over_gga if s.ratio < 1),
                  mean_speedup(over_seeds([vs_xgb["gga"]])),
                  mean_speedup(over_seeds([vs_xgb["variant"]])), tuple(finals))


def _mean(m: MeanSpeedup | None) -> str:
    if m is None:
        return "-"
    b = f"{m.bound} " if m.bound in ("<=", ">=") else "? " if m.bound else ""
    return f"{b}{m.geometric:.2f}x [{m.low:.2f}, {m.high:.2f}]"


def _verdict(m: MeanSpeedup | None) -> str:
    """Against 1x: "sooner" where the whole interval is above 1, "later" where below."""
    if m is None:
        return "-"
    return {"met": "sooner", "not met": "later"}.get(m.verdict(1.0), "undecided")


def table(pooled: Sequence[Pooled]) -> list[str]:
    lines = ["| variant options | view | layer runs | machine-layers | over gga (> 1: sooner) "
             "| verdict | sooner, later (layer runs) | gga over xgb | variant over xgb | "
             "final over gga's: median, runs under 0.98 |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for p in pooled:
        if p.layer_runs == 0:
            continue
        fin = (f"{statistics.median(p.finals):.3f}, {sum(1 for f in p.finals if f < 0.98)} "
               f"of {len(p.finals)}" if p.finals else "-")
        lines.append(f"| `{p.options}` | {p.view} | {p.layer_runs} | "
                     f"{p.over_gga.layers if p.over_gga else 0} | {_mean(p.over_gga)} | "
                     f"{_verdict(p.over_gga)} | {p.sooner}, {p.later} | "
                     f"{_mean(p.gga_over_xgb)} | {_mean(p.variant_over_xgb)} | {fin} |")
    return lines


def chance_line(pooled: Sequence[Pooled], level: float = 0.95) -> str:
    """How many verdicts chance alone would decide among the table's rows."""
    n = sum(1 for p in pooled if p.over_gga is not None)
    decided = sum(1 for p in pooled if _verdict(p.over_gga) in ("sooner", "later"))
    return (f"Verdicts decided: {decided} of {n} rows. Where no variant differed from gga, "
            f"about {(1 - level) * n:.1f} of {n} would be decided by chance alone at a "
            f"{level:.0%} interval, so a lone decided row is a lead for more seeds, not a "
            "finding.")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("reports", nargs="+", type=Path, help="gga-turns.md files")
    ap.add_argument("--deployed-view", choices=("median", "paired"), default="paired",
                    help="which reading of the timings again to prefer where a layer run "
                         "has both [paired]")
    ap.add_argument("--out", type=Path, help="write the markdown here (default: print it)")
    args = ap.parse_args(argv)
    reports = []
    for p in args.reports:
        try:
            reports.append(read_report(p))
        except ReportError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
    pooled = pool(reports, args.deployed_view)
    if not any(p.layer_runs for p in pooled):
        print("error: no report among the files given ran a gga variant (--variant "
              "NAME=gga:...) beside gga", file=sys.stderr)
        return 2
    lines = ["# gga's variants against gga, pooled over the reported turns", "",
             f"Written by `scripts/variant_pool.py` from {len(args.reports)} reports of "
             "`gga_turns.py`; it measures nothing (each report names its machine, Python, "
             "apache-tvm and TVM_NUM_THREADS). Per layer run, gga's seconds to 95% of xgb's "
             "best over the variant's, beside it in the same turns: above 1 the variant was "
             "sooner. A side that never reached the mark stands in with its seconds in all "
             "(`<=`, `>=`: the mean is a bound that way; `?`: both ways). Each layer on one "
             "machine counts once, its seeds averaged geometrically; the interval is a 95% "
             "bootstrap over machine-layers, and the verdict says \"sooner\" or \"later\" "
             "only where the whole interval is on one side of 1. \"gga over xgb\" and "
             "\"variant over xgb\" are the same averages on the same layer runs. Finals are "
             "the variant's best over gga's (in the runs) or its final config's over gga's "
             "(timed again), without intervals. Timed again: the "
             f"{args.deployed_view} reading where a layer run has one.", "",
             *table(pooled), "", chance_line(pooled), "", "Reports, by variant options:", ""]
    for p in pooled:
        if p.view == "runs" and p.layer_runs:
            lines.append(f"- `{p.options}`: {', '.join(p.reports)}")
    text = "\n".join(lines) + "\n"
    write_or_print(args.out, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(exit_status(main))
