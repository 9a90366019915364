"""A tuning process that gets killed: ``python -m tests.plugins.measure.parent_script``.

It measures one good config (so that a build worker and the runner are up), prints the
workers' pids as one JSON line, then measures a kernel that never returns.
"""

from __future__ import annotations

import json

from orchestrator.target import detect_host
from plugins.measure.local import LocalMeasurer
from tests.plugins.measure import helpers


def main() -> None:
    measurer = LocalMeasurer(build_workers=1, run_timeout=600, repeat=1, min_repeat_ms=1)
    target = detect_host()
    space = helpers.space()
    measurer.measure(space, target, [helpers.config("ok")])
    print(json.dumps(measurer.worker_pids()), flush=True)
    measurer.measure(space, target, [helpers.config("hang")])


if __name__ == "__main__":
    main()
