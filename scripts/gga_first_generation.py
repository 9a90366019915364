"""gga's first generation in finished turns, part by part: the lead batch's configs, the
rest of the history candidates, and the probes (one-knob variants of trial 1, the best
history candidate by filtering metric), each part's fastest first timing over xgb's best
in the same turns.

It answers one question about gga's default first generation: is trial 1, the config
the probes vary, also the fastest of the candidates measured before the probes? Where it
is not, the probes spend their trials around a slower config (gga's ``probe_from``
option). The parts are read by position, as gga proposes them with the options given:
``--lead`` configs, then candidates up to ``--population`` minus ``--probe``, then the
probes. Runs with other options (or resumed runs) are not laid out so.

    python scripts/gga_first_generation.py --layers r18_l2,r18_l3 --turns 0=/work/gga/r18x \\
        --turns 2=/work/gga/r18s2 --out docs/results/gga-xeon-first-generation
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from script_main import exit_status  # noqa: E402

from first_configs import read_run  # noqa: E402  (sets TVM_NUM_THREADS before TVM loads)

from orchestrator.errors import OrchestratorError  # noqa: E402


@dataclass(frozen=True)
class Parts:
    """One gga run's first generation, each part's best first timing over xgb's best."""

    layer: str
    seed: str
    lead: tuple[float, ...]  # each lead config's own ratio, in order
    candidates: float  # the best of the other history candidates
    probes: float  # the best probe
    fastest_before_probes: int  # its trial number (1 = the config the probes vary)


def _ratio(gflops: float | None, reference: float) -> float:
    return 0.0 if gflops is None else gflops / reference


def read_parts(work: Path, layer: str, seed: str, lead: int, population: int, probe: int,
               confirmed: bool = True) -> Parts:
    """The parts of the newest gga run of ``layer`` in ``work`` (a gga_turns ``--work``)."""
    run = read_run(work, layer, "gga", confirmed)
    if len(run.trials) < population:
        raise OrchestratorError(f"{work / layer}: gga's run has {len(run.trials)} trials, fewer "
                                f"than one generation of {population}")
    r = [_ratio(t.gflops, run.reference) for t in run.trials[:population]]
    n_cands = population - probe
    before = r[:n_cands]
    return Parts(layer, seed, tuple(r[:lead]), max(r[lead:n_cands], default=0.0),
                 max(r[n_cands:], default=0.0), before.index(max(before)) + 1)


def report(parts: Sequence[Parts], header: str, command: str, lead: int, population: int,
           probe: int) -> list[str]:
    lead_cols = " | ".join(f"lead {i + 1}" for i in range(lead))
    lines = [
        "# gga's first generation, part by part", "", header, "", f"Command: `{command}`", "",
        "Read from finished turns' databases; nothing was timed for this report.", "",
        f"Each part's fastest first timing over xgb's best in the same turns (its confirmed "
        f"best), read by position: trials 1-{lead} the lead batch, {lead + 1}-"
        f"{population - probe} the other history candidates, {population - probe + 1}-"
        f"{population} the probes of trial 1. \"fastest before the probes\" is the trial "
        f"number of the fastest of trials 1-{population - probe}.", "",
        f"| layer | seed | {lead_cols} | other candidates | probes | fastest before the probes |",
        "|---|---|" + "---|" * (lead + 3)]
    for p in parts:
        leads = " | ".join(f"{x:.3f}" for x in p.lead)
        lines.append(f"| {p.layer} | {p.seed} | {leads} | {p.candidates:.3f} | {p.probes:.3f} | "
                     f"{p.fastest_before_probes} |")
    other = [p for p in parts if p.fastest_before_probes != 1]
    beat = [p for p in parts if len(p.lead) > 1 and max(p.lead[1:]) > p.lead[0]]
    above = [p for p in other if p.probes > max(*p.lead, p.candidates)]
    lines += ["", f"- Trial 1 (the config the probes vary) was not the fastest before the "
                  f"probes in {len(other)} of {len(parts)} runs.",
              f"- A later lead config was faster than trial 1 in {len(beat)} of {len(parts)} "
              f"runs.",
              f"- In those {len(other)} runs a probe was faster than every config before it in "
              f"{len(above)}.", ""]
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--layers", required=True, help="comma-separated layers the turns ran")
    ap.add_argument("--turns", action="append", required=True, metavar="SEED=DIR",
                    help="a gga_turns.py --work directory and its seed's label (repeatable)")
    ap.add_argument("--lead", type=int, default=2, help="gga's lead batch [%(default)s]")
    ap.add_argument("--population", type=int, default=16, help="gga's P [%(default)s]")
    ap.add_argument("--probe", type=int, default=8, help="gga's probes [%(default)s]")
    ap.add_argument("--out", type=Path, help="report directory (gga-first-generation.md)")
    args = ap.parse_args(argv)
    if not 1 <= args.lead <= args.population - args.probe or args.probe < 0:
        ap.error("--lead must be within [1, population - probe] and --probe >= 0")
    turns = []
    for item in args.turns:
        seed, sep, folder = item.partition("=")
        if not sep or not seed or not folder:
            ap.error(f"--turns takes SEED=DIR, got {item!r}")
        turns.append((seed, Path(folder)))
    parts = [read_parts(folder, layer, seed, args.lead, args.population, args.probe)
             for seed, folder in turns for layer in args.layers.split(",")]
    from machine import machine_header

    argv = sys.argv[1:] if argv is None else argv
    text = "\n".join(report(parts, machine_header(),
                            f"python scripts/gga_first_generation.py {shlex.join(argv)}",
                            args.lead, args.population, args.probe))
    print(text)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "gga-first-generation.md").write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(exit_status(main))
