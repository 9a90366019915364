"""Which knob values the configs at the mark hold, in each set of turns of one layer.

Reads finished turns of ``gga_turns.py`` (``WORK/<layer>/turns/<searcher>.db`` of every
run that took turns: xgb, gga, ga and any ``--variant``) and pools every trial's first
timing. A trial is *at the mark* when that timing is at 95% of xgb's best in the same
turns (its confirmed best where the turns were made with ``--confirm``), as the turns
report counts it. For each knob value the script gives how many trials held it and the
share of those at the mark, per turns directory (a split knob's innermost factor, its
side of the register tile, also counts as a knob of its own), then the value with the
highest share in each directory side by side: if the same values lead in every
directory, the top of the space is a place a searcher can be guided to; if they change
from one set of turns to the next on the same machine and shape, which configs are at
the mark is decided by the timings of the day more than by the config. It measures
nothing.

    python scripts/top_knobs.py gnet_3a_5x5 /work/gga/unseen4-z4-c0-s0 /work/gga/unseen4-z4-c0-s1
    python scripts/top_knobs.py gnet_3a_5x5 DIR ... --out docs/results/top-knobs.md
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from script_main import exit_status  # noqa: E402

import reproduce_gga as rg  # noqa: E402  (sets TVM_NUM_THREADS before TVM loads)
from first_configs import (  # noqa: E402
    FirstConfigsError, RunTrials, open_turns_db, read_run)

from sqlmodel import Session, select  # noqa: E402

from history.models import RunRow  # noqa: E402

# Files of a turns directory that are not a searcher's run.
NOT_RUNS = ("deployed", "remeasure", "runoff")
# A value held by fewer trials than this is left out of a directory's leaders: its share
# at the mark is too coarse to lead.
MIN_TRIALS = 5
INNERMOST = "innermost"


@dataclass(frozen=True)
class ValueCount:
    knob: str
    value: str  # canonical JSON
    trials: int
    at_mark: int

    @property
    def share(self) -> float:
        return self.at_mark / self.trials


@dataclass(frozen=True)
class Turns:
    """One set of turns of the layer: its runs and the pooled counts."""

    name: str  # the directory's name
    runs: tuple[RunTrials, ...]
    counts: tuple[ValueCount, ...]
    confirmed: bool = False  # made with --confirm: xgb's best is its confirmed best

    @property
    def reference(self) -> float:
        return self.runs[0].reference

    @property
    def trials(self) -> int:
        return sum(len(r.trials) for r in self.runs)

    @property
    def at_mark(self) -> int:
        level = rg.MARK * self.reference
        return sum(t.timed_at(level) for r in self.runs for t in r.trials)

    def leader(self, knob: str) -> ValueCount | None:
        """The value of ``knob`` with the highest share at the mark (of those held by at
        least MIN_TRIALS trials; the one held more often on ties)."""
        held = [c for c in self.counts if c.knob == knob and c.trials >= MIN_TRIALS]
        return max(held, key=lambda c: (c.share, c.trials), default=None)


def searchers(work: Path, layer: str) -> list[str]:
    """The runs that took turns on ``layer`` in ``work``, xgb first, by database name."""
    turns = work / layer / "turns"
    if not turns.is_dir():
        raise FirstConfigsError(f"{turns} does not exist: give gga_turns --work directories "
                                f"that ran {layer}")
    names = sorted(p.stem for p in turns.glob("*.db") if p.stem not in NOT_RUNS)
    return sorted(names, key=lambda n: n != rg.REFERENCE)


def held_values(config: dict[str, Any]) -> list[tuple[str, Any]]:
    """A config's knob values, and for every split knob also its innermost factor as the
    knob ``"<name> innermost"``: the register tile's side along that loop, which the
    configs at the mark may share where their whole splits differ."""
    out: list[tuple[str, Any]] = []
    for knob, value in config.items():
        out.append((knob, value))
        if isinstance(value, list) and len(value) > 1:
            out.append((f"{knob} {INNERMOST}", value[-1]))
    return out


def count_values(runs: Sequence[RunTrials], mark: float = rg.MARK) -> tuple[ValueCount, ...]:
    """Every knob value's trials and trials at the mark, pooled over ``runs`` (failed
    trials count as measured, not at the mark)."""
    trials: dict[tuple[str, str], int] = defaultdict(int)
    top: dict[tuple[str, str], int] = defaultdict(int)
    for run in runs:
        level = mark * run.reference
        first = json.loads(run.first_config) if run.first_config else {}
        for t in run.trials:
            config = {**first, **t.changed}
            for knob, value in held_values(config):
                key = (knob, json.dumps(value, separators=(",", ":")))
                trials[key] += 1
                top[key] += t.timed_at(level)
    return tuple(ValueCount(k, v, n, top[(k, v)]) for (k, v), n in sorted(trials.items()))


def made_with_confirm(work: Path, layer: str) -> bool:
    """Whether xgb's newest run in the turns of ``layer`` in ``work`` was made with
    ``--confirm``, read from the options the run recorded."""
    db = work / layer / "turns" / f"{rg.REFERENCE}.db"
    store = open_turns_db(db, "the mark is 95% of xgb's best in the same turns")
    try:
        with Session(store.engine) as s:
            key = s.exec(select(RunRow.resume_key).order_by(RunRow.id.desc())).first()
    finally:
        store.close()
    if key is None:
        raise FirstConfigsError(f"{db} holds no run")
    try:
        return bool(json.loads(key).get("confirm", 0))
    except (ValueError, AttributeError) as exc:
        raise FirstConfigsError(f"{db}: its run's options are not readable ({exc})") from exc


def read_turns(work: Path, layer: str) -> Turns:
    """The turns of ``layer`` in ``work``, xgb's best read by its re-timings where the
    turns were made with ``--confirm``, as their report reads it."""
    names = searchers(work, layer)
    confirmed = made_with_confirm(work, layer)
    runs = tuple(read_run(work, layer, s, confirmed) for s in names)
    return Turns(work.name, runs, count_values(runs), confirmed)


def turns_section(turns: Turns, shown: int = 3) -> list[str]:
    level = rg.MARK * turns.reference
    best = "confirmed best" if turns.confirmed else "best"
    lines = [f"## {turns.name}", "",
             f"xgb's {best} {turns.reference:.1f} GFLOPS, the mark {level:.1f}; "
             f"{turns.at_mark} of {turns.trials} trials at it, first timings. "
             "First trial timed at the mark: "
             + ", ".join(f"{r.searcher} {r.first_timed_at() or 'never'}"
                         for r in turns.runs) + ".", "",
             f"| knob | value: trials, at the mark (share); the {shown} highest shares |",
             "|---|---|"]
    for knob in sorted({c.knob for c in turns.counts}):
        held = sorted((c for c in turns.counts if c.knob == knob),
                      key=lambda c: (-c.share, -c.trials))[:shown]
        cells = "; ".join(f"`{c.value}`: {c.trials}, {c.at_mark} ({c.share:.2f})" for c in held)
        lines.append(f"| {knob} | {cells} |")
    return lines + [""]


def leaders_table(all_turns: Sequence[Turns]) -> list[str]:
    """Each knob's leading value in each set of turns, and in how many sets it leads."""
    knobs = sorted({c.knob for t in all_turns for c in t.counts})
    lines = ["| knob | " + " | ".join(t.name for t in all_turns) + " | sets led by one value |",
             "|---|" + "---|" * len(all_turns) + "---|"]
    for knob in knobs:
        leaders = [t.leader(knob) for t in all_turns]
        cells = ["-" if c is None else f"`{c.value}` ({c.share:.2f})" for c in leaders]
        values = [c.value for c in leaders if c is not None]
        most = max((values.count(v) for v in set(values)), default=0)
        lines.append(f"| {knob} | " + " | ".join(cells) + f" | {most} of {len(all_turns)} |")
    return lines


def report(layer: str, all_turns: Sequence[Turns], command: str, header: str) -> str:
    lines = [f"# Knob values at the mark: {layer}", "", header, "",
             f"Command: `{command}`", "",
             "Written by `scripts/top_knobs.py` from the databases of finished turns; it "
             "measures nothing. A trial is at the mark when its first timing is at 95% of "
             "xgb's best in the same turns; every run of the turns is pooled (xgb, gga, ga "
             "and any variant), so a value a searcher dwelt on is held by many trials. The "
             "share is of a value's trials; a leader is the value of the highest share among "
             f"those held by at least {MIN_TRIALS} trials.", "",
             "## Each knob's leading value, set of turns by set of turns", "",
             *leaders_table(all_turns), ""]
    for t in all_turns:
        lines += turns_section(t)
    return "\n".join(lines).rstrip("\n")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("layer", help="a layer or shape name the turns ran, e.g. gnet_3a_5x5")
    ap.add_argument("work", type=Path, nargs="+", help="gga_turns.py --work directories")
    ap.add_argument("--out", type=Path,
                    help="write the report to this Markdown file rather than print it")
    args = ap.parse_args(argv)
    all_turns = [read_turns(w, args.layer) for w in args.work]
    from machine import machine_header, write_or_print

    argv = sys.argv[1:] if argv is None else argv
    text = report(args.layer, all_turns, f"python scripts/top_knobs.py {shlex.join(argv)}",
                  machine_header())
    write_or_print(args.out, text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(exit_status(main))
