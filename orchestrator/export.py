"""A task's best recorded config, built into a library for the user (``orchestrator
build``): the config with the fastest timing on the target among those built by a
template that is installed now (a timing of an older template version stands for other
code), compiled with that template, exported with a JSON note of where it came from."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.errors import OrchestratorError
from orchestrator.kernels import KernelCheck, build_library, check_library
from orchestrator.manager import Plugins
from orchestrator.space import Space
from orchestrator.target import TargetInfo
from orchestrator.task import Task


@dataclass(frozen=True)
class BestRecord:
    """The fastest timing of a task's config on a target, with the space that builds it."""

    task: Task
    space: Space
    record: Any  # history.store.Record (history imports the orchestrator types)


@dataclass(frozen=True)
class ExportedKernel:
    """A library written by :func:`export_best`, its note and, if asked, its check."""

    best: BestRecord
    library: Path
    note: Path
    check: KernelCheck | None = None


def find_best(store: Any, plugins: Plugins, task: Task, target: TargetInfo) -> BestRecord:
    """The fastest recorded config of ``task`` on ``target`` among the templates of every
    installed space generator that supports the task; a one-line error when there is none."""
    task_id = store.find_task(task)
    target_id = store.find_target(target) if task_id is not None else None
    if task_id is None or target_id is None:
        raise OrchestratorError(
            f"no measurement of {task.label()} on {_describe(target)} in {store.url}; "
            f"tune it first (orchestrator tune ...) or pass --db or --target")
    best: BestRecord | None = None
    templates: list[str] = []
    for comp in plugins.registry("space_generator"):
        generator = comp.factory()
        if not generator.supports(task, target):
            continue
        space = generator.generate(task, target)
        templates.append(space.template)
        found = store.best(task_id, target_id, k=1, templates=space.reusable_templates)
        if found and (best is None or found[0].result.latency < best.record.result.latency):
            best = BestRecord(task, space, found[0])
    if best is None:
        raise OrchestratorError(
            f"no successful measurement of {task.label()} on {_describe(target)} built by an "
            f"installed template ({', '.join(templates) or 'none supports it'}) in "
            f"{store.url}; tune it again")
    return best


def export_best(best: BestRecord, target: TargetInfo, out_dir: Path, *, check: bool = False,
                source: str = "") -> ExportedKernel:
    """Build ``best``'s config into ``out_dir/<name>.so`` and write ``<name>.json`` beside
    it; with ``check``, run the library once against the NumPy reference and time it."""
    stem = file_stem(best.task)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OrchestratorError(f"cannot write to --out {out_dir}: {exc.strerror or exc}; "
                                f"give a directory you can write") from None
    library, note = out_dir / f"{stem}.so", out_dir / f"{stem}.json"
    config = best.record.result.config
    try:
        build_library(best.space, config, target, library)
    except Exception as exc:
        raise OrchestratorError(f"building the best config of {best.task.label()} failed: "
                                f"{type(exc).__name__}: {_first_line(exc)}") from None
    checked = _check(library, best.task) if check else None
    note.write_text(json.dumps(_note(best, target, source, checked), indent=1) + "\n")
    return ExportedKernel(best, library, note, checked)


def _check(library: Path, task: Task) -> KernelCheck:
    """:func:`check_library`, with a library that cannot be loaded or run as a failed
    check rather than a traceback."""
    try:
        return check_library(library, task)
    except Exception as exc:
        return KernelCheck(f"the library did not run: {type(exc).__name__}: "
                           f"{_first_line(exc)}")


def file_stem(task: Task) -> str:
    """The workload's name, or its operator and key hash, as a safe file name."""
    name = task.name or f"{task.op}-{task.key_hash[:10]}"
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


def _note(best: BestRecord, target: TargetInfo, source: str,
          checked: KernelCheck | None) -> dict[str, Any]:
    rec = best.record
    note: dict[str, Any] = {
        "task": best.task.to_dict(), "target": target.tvm_json,
        "config": rec.result.config.to_dict(), "template": best.space.template,
        "entry": "main", "arguments": "the inputs, then the output buffer",
        "recorded": {"latency_ms": rec.result.latency * 1e3,
                     "gflops": rec.result.gflops(best.task.flops), "measurement_id": rec.id,
                     "run_id": rec.run_id, "created_at": rec.created_at,
                     "tvm_version": rec.tvm_version, "template": rec.template or "-",
                     "database": source},
    }
    if checked is not None:
        note["checked"] = {"matches_reference": checked.ok, "mismatch": checked.mismatch,
                           "latency_ms": (checked.latency * 1e3 if checked.ok else None),
                           "threads": checked.threads}
    return note


def _describe(target: TargetInfo) -> str:
    return f"{target.kind} {target.arch}"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[-1] if text else "(no message)"
