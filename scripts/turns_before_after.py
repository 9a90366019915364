"""The same turns run before and after a change, side by side, read from the reports
``gga_turns.py`` wrote. It measures nothing.

Each ``--pair`` names two reports of the same layers, seed and command, the first made
before the change and the second after. Per layer it gives the first result (the earliest
own second at which any run on the layer had a result) and each searcher's seconds to
the 95% mark, before and after, with the ratio before / after (above 1: sooner after).
Over every layer of every pair it gives the median ratio with its distribution-free
interval (``paired.median_interval``) and how many layers were sooner after. A searcher's
ratio is left out ("-" and not counted) unless it reached the mark in both reports, so a
layer it reached in one report only shows in the table and not in the median.

    python scripts/turns_before_after.py \\
        --pair docs/results/gga-znver3-unseen4-c3-s0/gga-turns.md \\
               docs/results/gga-znver3-unseen4-c3b-s0/gga-turns.md \\
        --pair docs/results/gga-znver3-unseen4-c3-s1/gga-turns.md \\
               docs/results/gga-znver3-unseen4-c3b-s1/gga-turns.md \\
        --out docs/results/some-dir/before-after.md
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from script_main import exit_status  # noqa: E402

from gga_ceiling import LayerRow, Report, ReportError, View, read_report  # noqa: E402
from machine import write_or_print  # noqa: E402
from paired import median_interval  # noqa: E402

QUANTITIES = ("first", "gga", "xgb", "ga")
LABELS = {"first": "first result", "gga": "gga to 95%", "xgb": "xgb to 95%",
          "ga": "ga to 95%"}
VIEWS = ("runs", "timed again")


@dataclass(frozen=True)
class LayerPair:
    """One layer's row in the report before a change and in the report after it."""

    pair: int  # 1-based, in the order the pairs were given
    layer: str
    before: LayerRow
    after: LayerRow

    def seconds(self, quantity: str) -> tuple[float | None, float | None]:
        return getattr(self.before, quantity), getattr(self.after, quantity)

    def ratio(self, quantity: str) -> float | None:
        """Seconds before over seconds after; None unless both are there and above 0."""
        b, a = self.seconds(quantity)
        return b / a if b is not None and a is not None and b > 0 and a > 0 else None


def _view(report: Report, view: str) -> View:
    found = [v for v in report.views if v.name == view]
    if not found:
        raise ReportError(f"{report.path} has no {view!r} targets table "
                          f"(it has: {', '.join(v.name for v in report.views)})")
    return found[0]


def pair_layers(number: int, before: Report, after: Report, view: str) -> list[LayerPair]:
    """The layers of one pair of reports, in the first report's order; :class:`ReportError`
    when the two reports do not hold the same layers."""
    b, a = _view(before, view), _view(after, view)
    b_rows = {r.layer: r for r in b.rows}
    a_rows = {r.layer: r for r in a.rows}
    if set(b_rows) != set(a_rows):
        raise ReportError(f"{before.path} and {after.path} hold different layers "
                          f"({', '.join(sorted(b_rows))} against {', '.join(sorted(a_rows))}): "
                          "give two reports of the same turns")
    return [LayerPair(number, r.layer, r, a_rows[r.layer]) for r in b.rows]


def _secs(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}"


def table(pairs: Sequence[LayerPair]) -> list[str]:
    head = "| pair | layer | " + " | ".join(
        f"{LABELS[q]}, before / after (s) | ratio" for q in QUANTITIES) + " |"
    rows = [head, "|---|---|" + "---|---|" * len(QUANTITIES)]
    for p in pairs:
        cells = []
        for q in QUANTITIES:
            b, a = p.seconds(q)
            r = p.ratio(q)
            cells.append(f"{_secs(b)} / {_secs(a)} | {'-' if r is None else f'{r:.2f}x'}")
        rows.append(f"| {p.pair} | {p.layer} | " + " | ".join(cells) + " |")
    return rows


def summary(pairs: Sequence[LayerPair]) -> list[str]:
    """One line per quantity: the median ratio before / after with its interval."""
    lines = []
    for q in QUANTITIES:
        ratios = [r for r in (p.ratio(q) for p in pairs) if r is not None]
        if not ratios:
            lines.append(f"- {LABELS[q]}: no layer with seconds before and after.")
            continue
        low, high, level = median_interval(ratios)
        sooner = sum(1 for r in ratios if r > 1)
        lines.append(f"- {LABELS[q]}: before / after a median {statistics.median(ratios):.2f}x "
                     f"[{low:.2f}, {high:.2f}] at {100 * level:.1f}% over {len(ratios)} "
                     f"layer runs; sooner after on {sooner} of {len(ratios)}.")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pair", nargs=2, action="append", type=Path, required=True,
                    metavar=("BEFORE", "AFTER"), help="two gga-turns.md of the same turns")
    ap.add_argument("--view", choices=VIEWS, default="runs",
                    help="the runs' own seconds, or the reported configs timed again")
    ap.add_argument("--out", type=Path, help="write the markdown here (default: print it)")
    args = ap.parse_args(argv)
    pairs: list[LayerPair] = []
    machine = ""
    try:
        for i, (b, a) in enumerate(args.pair, start=1):
            before, after = read_report(b), read_report(a)
            machine = machine or before.machine
            for r in (before, after):  # every report, of every pair, on one machine
                if r.machine != machine:
                    raise ReportError(f"{r.path} ran on {r.machine}, {args.pair[0][0]} on "
                                      f"{machine}: compare turns made on the same machine")
            pairs += pair_layers(i, before, after, args.view)
    except ReportError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    named = [f"{i}. before `{b}`, after `{a}`" for i, (b, a) in enumerate(args.pair, start=1)]
    text = "\n".join([
        "# The same turns before and after a change", "",
        f"Written by `scripts/turns_before_after.py` (view: {args.view}); it measures nothing. "
        f"Machine, as the reports name it: {machine}; each report names its Python, apache-tvm "
        "and TVM_NUM_THREADS. Seconds are each run's own clock; a ratio is before over after "
        "(above 1: sooner after); the interval holds the median ratio (order statistics). A "
        "ratio is left out (\"-\") unless the searcher reached the mark in both reports.", "",
        "Pairs:", "", *named, "", *table(pairs), "", *summary(pairs)]) + "\n"
    write_or_print(args.out, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(exit_status(main))
