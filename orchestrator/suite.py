"""Workload suite files: JSON objects whose list values hold named workloads.

The format is that of ``orchestrator/suites/default.json``: each list entry has ``name``,
``op`` and the operator's shape parameters; other top-level keys (``about``) are ignored.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from orchestrator.errors import InvalidTaskError, SuiteError
from orchestrator.task import Task

DEFAULT_SUITE = "default"


def read_suite(path: str | Path | None = None) -> list[Task]:
    """Every workload of a suite file (the built-in suite when ``path`` is None)."""
    if path is None or str(path) == DEFAULT_SUITE:
        text = resources.files("orchestrator").joinpath("suites/default.json").read_text()
        where = "built-in suite"
    else:
        where = str(path)
        try:
            text = Path(path).read_text()
        except OSError as exc:
            raise SuiteError(f"cannot read suite file {where}: {exc.strerror or exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SuiteError(f"suite file {where} is not valid JSON: {exc.msg} at line {exc.lineno}") from None
    if not isinstance(data, dict):
        raise SuiteError(f"suite file {where} must hold a JSON object of workload lists")
    tasks: list[Task] = []
    for group, entries in data.items():
        if not isinstance(entries, list):
            continue
        for i, entry in enumerate(entries):
            label = f"{where}: {group}[{i}]"
            if not isinstance(entry, dict) or "op" not in entry:
                raise SuiteError(f"{label} must be an object with an 'op' and shape parameters")
            name = str(entry.get("name") or f"{group}_{i}")
            shape = {k: v for k, v in entry.items() if k not in ("name", "op", "dtype")}
            try:
                tasks.append(Task.create(str(entry["op"]), shape, name=name,
                                         dtype=entry.get("dtype", "float32")))
            except InvalidTaskError as exc:
                raise SuiteError(f"{label} ({name}): {exc}") from None
    if not tasks:
        raise SuiteError(f"suite file {where} has no workloads")
    return tasks


def select(tasks: Sequence[Task], only: Sequence[str]) -> list[Task]:
    """The tasks named in ``only`` (in that order); all of them when ``only`` is empty."""
    if not only:
        return list(tasks)
    by_name = {t.name: t for t in tasks}
    missing = [n for n in only if n not in by_name]
    if missing:
        raise SuiteError(f"no workload named {', '.join(missing)} in the suite; "
                         f"known: {', '.join(t.name for t in tasks if t.name)}")
    return [by_name[n] for n in only]
