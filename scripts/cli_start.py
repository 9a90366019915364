"""Wall seconds of a short ``orchestrator tune`` command with the host CPU's LLVM name asked
of TVM (an empty cache: the command's own process imports TVM) or remembered (the cache
file of ``orchestrator.host_cpu``: it never does), side by side in rounds.

Each command tunes a small dense workload into a new history database, so both settings
build and time the same number of configs; the order of the two alternates from round
to round. Reported: median seconds per setting and the median of the per-round ratios
(asked over remembered) with its distribution-free interval (``scripts/paired.py``).

    python scripts/cli_start.py --rounds 9
    python scripts/cli_start.py --smoke        # CI: one round, two trials
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from script_main import exit_status  # noqa: E402

from machine import machine_header, write_report  # noqa: E402
from paired import paired_ratio  # noqa: E402

SETTINGS = ("asked", "remembered")
SHAPE = "M=64,K=64,N=64"


@dataclass(frozen=True)
class Sample:
    round: int
    setting: str
    seconds: float


def command(db: Path, trials: int) -> list[str]:
    return [sys.executable, "-m", "orchestrator", "tune", "--op", "dense", "--shape", SHAPE,
            "--trials", str(trials), "--batch-size", str(trials), "--db", str(db), "--json"]


def run_once(setting: str, scratch: Path, trials: int, serial: int) -> float:
    """Seconds of one command; ``asked``: with an empty cache directory."""
    cache = scratch / ("cache-remembered" if setting == "remembered" else f"cache-{serial}")
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    db = scratch / f"history-{serial}.db"
    start = time.perf_counter()
    done = subprocess.run(command(db, trials), env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"error: the {setting} command failed: "
                         f"{(done.stderr.strip().splitlines() or ['?'])[-1]}")
    if setting == "asked" and not (cache / "orchestrator" / "host-cpu.json").exists():
        raise SystemExit("error: the command did not remember the host CPU")
    if setting == "asked":
        shutil.rmtree(cache, ignore_errors=True)
    db.unlink(missing_ok=True)
    return seconds


def measure(rounds: int, trials: int) -> list[Sample]:
    samples = []
    with tempfile.TemporaryDirectory(prefix="cli-start-") as d:
        scratch = Path(d)
        run_once("asked", scratch, trials, -1)  # warms the OS file cache for both
        subprocess.run([sys.executable, "-c", "from orchestrator.target import detect_host; "
                        "detect_host()"], check=True,
                       env={**os.environ, "XDG_CACHE_HOME": str(scratch / "cache-remembered")})
        serial = 0
        for r in range(rounds):
            for setting in (SETTINGS if r % 2 == 0 else SETTINGS[::-1]):
                seconds = run_once(setting, scratch, trials, serial)
                serial += 1
                samples.append(Sample(r, setting, seconds))
                print(f"round {r + 1}/{rounds} {setting}: {seconds:.2f} s", flush=True)
    return samples


def report(samples: list[Sample], trials: int, cmd: str, note: str = "") -> str:
    rounds = sorted({s.round for s in samples})
    by = {(s.round, s.setting): s.seconds for s in samples}
    asked = [by[(r, "asked")] for r in rounds]
    remembered = [by[(r, "remembered")] for r in rounds]
    ratio = paired_ratio(remembered, asked)  # asked / remembered
    lines = ["# Seconds of a short `orchestrator tune`: host CPU asked of TVM or remembered",
             "", machine_header(), "", f"Command: `{cmd}`", ""]
    if note:
        lines += [note, ""]
    lines += [
        f"Each command: `orchestrator tune --op dense --shape {SHAPE} --trials {trials} "
        f"--batch-size {trials} --json` into a new history database, wall seconds from start "
        "to exit. `asked`: an empty cache directory, so the command's own process imports "
        "TVM to learn the CPU's LLVM name (as every command did before the cache); "
        "`remembered`: the cache file holds it, and the command's own process never imports "
        "TVM (its build and run workers still do). "
        f"{len(rounds)} rounds, the order of the two alternating.", "",
        "| median s, asked | median s, remembered | asked / remembered, median of pairs "
        "[interval] | pairs |", "|---|---|---|---|",
        f"| {statistics.median(asked):.2f} | {statistics.median(remembered):.2f} | "
        f"{f'{ratio.text()} at {ratio.level:.1%}' if ratio else '-'} | {len(rounds)} |",
        "", "All runs (seconds):", "", "| round | asked | remembered |", "|---|---|---|"]
    lines += [f"| {r + 1} | {by[(r, 'asked')]:.2f} | {by[(r, 'remembered')]:.2f} |"
              for r in rounds]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--trials", type=int, default=8)
    ap.add_argument("--smoke", action="store_true", help="CI: one round of two trials")
    ap.add_argument("--out", type=Path, default=Path("docs/results/cli-start.md"))
    a = ap.parse_args(argv)
    if a.rounds < 1 or a.trials < 1:
        ap.error("--rounds and --trials must be at least 1")
    cmd = "python scripts/cli_start.py " + " ".join(argv if argv is not None else sys.argv[1:])
    rounds, trials = (1, 2) if a.smoke else (a.rounds, a.trials)
    samples = measure(rounds, trials)
    text = report(samples, trials, cmd.strip(),
                  note="Smoke run (CI): one round; no figure here is a result." if a.smoke
                  else "")
    write_report(a.out, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(exit_status(main))
