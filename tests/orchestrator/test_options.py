from __future__ import annotations

import pytest

from orchestrator.errors import OrchestratorError
from orchestrator.options import as_bool


@pytest.mark.parametrize("value,expected", [
    (True, True), (False, False), ("true", True), (" Yes ", True), ("on", True), ("1", True),
    (1, True), ("FALSE", False), ("no", False), ("off", False), ("0", False), (0, False),
    ("", False)])
def test_on_off_options_from_python_or_the_command_line(value, expected):
    assert as_bool("p", "flag", value) is expected


def test_anything_else_is_a_one_line_error_naming_the_plugin_and_option():
    with pytest.raises(OrchestratorError, match=r"^p: option flag must be true or false, got 'maybe'$"):
        as_bool("p", "flag", "maybe")
    with pytest.raises(OrchestratorError, match="got None"):
        as_bool("p", "flag", None)
