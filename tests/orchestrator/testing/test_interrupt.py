"""InterruptAfter stops a run at its n-th recorded batch, as Ctrl-C would."""

from __future__ import annotations

import pytest

from orchestrator.loop import tune
from orchestrator.manager import load_plugins
from orchestrator.testing import TOY_TASK, InterruptAfter


def test_interrupts_at_the_nth_batch_with_the_batches_before_it_recorded(toy_plugin, db,
                                                                         toy_target):
    stop = InterruptAfter(3)
    plugins = load_plugins(extra=[("toy", toy_plugin), ("stop", stop)], autoload=False)
    with pytest.raises(KeyboardInterrupt):
        tune(TOY_TASK, target=toy_target, db=db, plugins=plugins, measurer="toy-replay",
             space_generator="toy", trials=100, batch_size=4)
    assert stop.seen == 3 and len(db.results(1, 1)) == 12
    assert db.runs()[0].status == "interrupted"
