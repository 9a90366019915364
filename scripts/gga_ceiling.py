"""How far issue 4's time targets were within reach in turns already reported, read from
the reports ``gga_turns.py`` wrote (``docs/results/*/gga-turns.md``). It measures nothing.

No searcher reaches the 95% mark before a layer's first result (its set-up and one round
of builds and timing), so xgb's (ga's) seconds to the mark over the layer's first result
is the most any searcher could show there: the ceiling. Averaged over a report's layers
as gga's speed-ups are (geometric mean, bootstrap interval over layers), a ceiling under
5x (3x) puts the target out of reach of every searcher on those runs, however good its
history; a ceiling far above gga's mean says the time went after gga's first result. The
reports keep each layer's seconds to the mark and first result in their targets tables,
for the runs and, with ``--deployed``, for the reported configs timed again; the
databases they came from need not be kept.

    python scripts/gga_ceiling.py docs/results/*/gga-turns.md --out docs/results/gga-ceiling.md
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

from machine import write_or_print  # noqa: E402
from speedup_mean import (  # noqa: E402
    TIME_TARGETS, LayerSpeedup, MeanSpeedup, mean_speedup)

TABLE = "| layer | gga / xgb seconds to 95% |"
DEPLOYED = "## The configs the runs reported, timed again"
GGA_MEAN = re.compile(r"^- gga over (xgb|ga): geometric mean (?:<= |>= )?([0-9.]+)x")
NAME = re.compile(r"^\[?([^\]]+)\]?")


class ReportError(ValueError):
    """A file that is not a ``gga_turns.py`` report with targets tables."""


class NoFirstResults(ReportError):
    """A ``gga_turns.py`` report from before its targets tables gave first results."""


@dataclass(frozen=True)
class LayerRow:
    """One layer of a targets table: seconds to the mark (None: never reached)."""

    layer: str
    gga: float | None
    xgb: float | None
    ga: float | None
    first: float | None


@dataclass(frozen=True)
class View:
    """One targets table of a report ("runs" or "timed again"), gga's means under it, and
    the ceilings over xgb and ga averaged over the layers where each reached the mark
    (None: no such layer)."""

    name: str
    rows: tuple[LayerRow, ...]
    gga_means: dict[str, float]  # by the other searcher, as the report printed them
    ceilings: dict[str, MeanSpeedup | None]

    @classmethod
    def of(cls, name: str, rows: tuple[LayerRow, ...], gga_means: dict[str, float]) -> View:
        return cls(name, rows, gga_means,
                   {o: mean_speedup(ceiling_items(rows, o)) for o, _ in TIME_TARGETS})

    def ceiling(self, other: str) -> MeanSpeedup | None:
        return self.ceilings[other]

    def share(self) -> float | None:
        """gga's geometric mean over xgb as printed, over the ceiling over xgb."""
        c, g = self.ceilings["xgb"], self.gga_means.get("xgb")
        return None if c is None or g is None else g / c.geometric


@dataclass(frozen=True)
class Report:
    """One report: its machine as named, its batch size and its views."""

    path: Path
    machine: str
    batch: int
    views: tuple[View, ...]


def cell_number(text: str) -> float | None:
    """A report table's number cell; None for an empty one or ``-`` (never reached);
    :class:`ReportError` for any other cell that is not a number."""
    text = text.strip()
    if text in ("", "-"):
        return None
    try:
        return float(text)
    except ValueError:
        raise ReportError(f"a table cell is not a number: {text!r}") from None


def report_lines(path: Path) -> list[str]:
    """The lines of a ``gga_turns.py`` report; :class:`ReportError` if it cannot be read."""
    try:
        return path.read_text().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise ReportError(f"cannot read {path}: {e}") from None


def report_machine(lines: Sequence[str]) -> str:
    """The machine a report names, without its core count ("?" if it names none)."""
    machine = next((ln[len("- Machine: "):] for ln in lines if ln.startswith("- Machine: ")), "?")
    return re.split(r", \d+ cores? available", machine)[0]


def ceiling_items(rows: Sequence[LayerRow], other: str) -> list[LayerSpeedup]:
    """Each layer's first result against ``other``'s seconds to the mark (layers where
    ``other`` never reached it, or without a first result, left out)."""
    out = []
    for r in rows:
        o = r.xgb if other == "xgb" else r.ga
        if o is not None and r.first is not None and r.first > 0:
            out.append(LayerSpeedup(r.layer, r.first, o))
    return out


def _table(lines: Sequence[str], start: int) -> tuple[LayerRow, ...]:
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 7 or "/" not in cells[1]:
            raise ReportError(f"a targets table row has an unexpected form: {line[:80]!r}")
        g, x = cells[1].split("/", 1)
        m = NAME.match(cells[0])
        rows.append(LayerRow(m.group(1) if m else cells[0], cell_number(g), cell_number(x),
                             cell_number(cells[3]), cell_number(cells[6])))
    return tuple(rows)


def _means(lines: Sequence[str], start: int) -> dict[str, float]:
    out: dict[str, float] = {}
    for line in lines[start:]:
        if line.startswith(TABLE) or line.startswith("## "):
            break
        m = GGA_MEAN.match(line)
        if m and m.group(1) not in out:
            out[m.group(1)] = float(m.group(2))
    return out


def read_report(path: Path) -> Report:
    """The targets tables of one ``gga-turns.md``; :class:`ReportError` if it has none."""
    lines = report_lines(path)
    batch = re.search(r"batches of (\d+)", "\n".join(lines))
    views, deployed = [], False
    for i, line in enumerate(lines):
        if line.startswith(DEPLOYED):
            deployed = True
        if line.startswith(TABLE) and "first result (s)" in line:
            try:
                rows = _table(lines, i)
            except ReportError as e:
                raise ReportError(f"{path}: {e}") from None
            views.append(View.of("timed again" if deployed else "runs", rows,
                                 _means(lines, i + 2)))
    if not views and any(ln.startswith(TABLE) for ln in lines):
        raise NoFirstResults(f"{path} is older than the first-result column")
    if not views:
        raise ReportError(f"{path} has no targets table with first results: is it a "
                          "gga-turns.md written by scripts/gga_turns.py?")
    return Report(path, report_machine(lines),
                  int(batch.group(1)) if batch else 8, tuple(views))


def _cell(m: MeanSpeedup | None) -> str:
    return "-" if m is None else f"{m.geometric:.2f}x [{m.low:.2f}, {m.high:.2f}]"


def report_rows(reports: Sequence[Report]) -> list[str]:
    """Markdown table rows, one per report and view."""
    rows = []
    for rep in reports:
        for v in rep.views:
            items = ceiling_items(v.rows, "xgb")
            reach = sum(1 for i in items if i.ratio >= 5)
            gx, share = v.gga_means.get("xgb"), v.share()
            rows.append(f"| {rep.path.parent.name} | {rep.machine} | {rep.batch} | {v.name} | "
                        f"{len(items)} | {_cell(v.ceiling('xgb'))} | {reach} | "
                        f"{'-' if gx is None else f'{gx:.2f}x'} | "
                        f"{'-' if share is None else f'{share:.2f}'} | {_cell(v.ceiling('ga'))} |")
    return rows


EARLY = 2.0  # "early": at the mark within this many times the layer's first result


def machine_rows(reports: Sequence[Report]) -> list[str]:
    """Markdown table rows by machine, batch size and view: the report views, their median
    ceiling and gga's median share of it, and the layer runs where xgb and gga were at the
    mark within :data:`EARLY` times the layer's first result."""
    groups: dict[tuple[str, int, str], list[View]] = {}
    for rep in reports:
        for v in rep.views:
            groups.setdefault((rep.machine, rep.batch, v.name), []).append(v)
    rows = []
    for (machine, batch, view), views in sorted(groups.items()):
        ceil = [c.geometric for v in views if (c := v.ceiling("xgb")) is not None]
        over_ga = [c.geometric for v in views if (c := v.ceiling("ga")) is not None]
        share = [s for v in views if (s := v.share()) is not None]
        layers = [r for v in views for r in v.rows if r.first is not None and r.xgb is not None]
        early = {n: sum(1 for r in layers if (s := getattr(r, n)) is not None
                        and s <= EARLY * r.first) for n in ("xgb", "gga")}
        rows.append(
            f"| {machine} | {batch} | {view} | {len(views)} | "
            f"{f'{statistics.median(ceil):.2f}x' if ceil else '-'} | "
            f"{sum(1 for c in ceil if c < 5)} | "
            f"{f'{statistics.median(share):.2f}' if share else '-'} | "
            f"{early['xgb']} of {len(layers)} | {early['gga']} of {len(layers)} | "
            f"{f'{statistics.median(over_ga):.2f}x' if over_ga else '-'} | "
            f"{sum(1 for c in over_ga if c < 3)} |")
    return rows


def summary(reports: Sequence[Report]) -> list[str]:
    """The report: by machine, then a row per report and view, then counts."""
    lines = ["| machine | batch | view | report views | median ceiling over xgb | views with "
             "a ceiling under 5x | median gga / ceiling | layer runs with xgb at the mark "
             f"within {EARLY:g}x the first result | the same, gga | median ceiling over ga | "
             "views with a ceiling over ga under 3x |",
             "|---|---|---|---|---|---|---|---|---|---|---|", *machine_rows(reports), "",
             "Layer runs are counted once per report that holds them; reports that read "
             "the same turns again (a set's layers read together, or again with more "
             "rounds) count them again.", "",
             *_totals(reports), "", "By report:", "",
             "| report | machine | batch | view | layers | ceiling over xgb (5x) | layers at "
             "5x or more | gga over xgb, as reported | gga / ceiling | ceiling over ga (3x) |",
             "|---|---|---|---|---|---|---|---|---|---|", *report_rows(reports)]
    return lines


def _totals(reports: Sequence[Report]) -> list[str]:
    lines = []
    for view in ("runs", "timed again"):
        got = [(rep.batch, c, v.share()) for rep in reports for v in rep.views
               if v.name == view and (c := v.ceiling("xgb")) is not None]
        if not got:
            continue
        ceil = [c for _, c, _ in got]
        below = sum(1 for c in ceil if c.geometric < 5)
        low_side = sum(1 for c in ceil if c.high < 5)
        by_batch: dict[int, list[float]] = {}
        for batch, c, _ in got:
            by_batch.setdefault(batch, []).append(c.geometric)
        batches = "; ".join(f"batches of {b}: median {statistics.median(g):.2f}x over "
                            f"{len(g)}" for b, g in sorted(by_batch.items()))
        share = [s for _, _, s in got if s is not None]
        lines.append(
            f"- {view}: ceiling over xgb under 5x on {below} of {len(ceil)} report views "
            f"(its whole interval under 5x on {low_side}); median ceiling {batches}"
            + (f"; gga's geometric mean a median {statistics.median(share):.2f} of the "
               f"ceiling (range {min(share):.2f} to {max(share):.2f})" if share else "")
            + ".")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("reports", nargs="+", type=Path, help="gga-turns.md files")
    ap.add_argument("--out", type=Path, help="write the markdown here (default: print it)")
    args = ap.parse_args(argv)
    reports, older = [], []
    for p in args.reports:
        try:
            reports.append(read_report(p))
        except NoFirstResults:
            older.append(p)
        except ReportError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
    if not reports:
        print("error: no report with first results among the files given; give the "
              "gga-turns.md files of gga_turns.py runs", file=sys.stderr)
        return 2
    header = ["# How far the time targets were within reach: ceilings of the reported turns",
              "", f"Written by `scripts/gga_ceiling.py` from {len(args.reports)} reports of "
              "`gga_turns.py` (named under \"By report\"); it measures nothing (each report names "
              "its machine, Python, apache-tvm and TVM_NUM_THREADS). The ceiling over xgb "
              "of a layer is xgb's seconds to 95% of its best over the layer's first result "
              "(the earliest own second any run had a result): what a searcher at the mark "
              "with its first result would show, the most any could. Each figure is a "
              "geometric mean over the report's layers with a 95% bootstrap interval, as "
              "gga's speed-ups are averaged; layers where xgb (for the ceiling over ga, ga) "
              "never reached the mark are left out. \"gga / ceiling\" is gga's geometric "
              "mean over xgb as the report printed it, over the ceiling. Targets: "
              + ", ".join(f"{t:g}x {o}" for o, t in TIME_TARGETS) + ".", ""]
    reports.sort(key=lambda r: (r.machine, r.batch, r.path.parent.name))
    if older:
        header += [f"Left out, written before the reports gave first results: "
                   f"{', '.join(p.parent.name for p in older)}.", ""]
    text = "\n".join(header + summary(reports)) + "\n"
    write_or_print(args.out, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(exit_status(main))
