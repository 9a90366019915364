"""Every error the orchestrator raises on purpose derives from :class:`OrchestratorError`.

The CLI turns these into one line on stderr and exit code 2. Failed measurements are
not errors: they are :class:`~orchestrator.result.MeasureResult` values with a status.
"""

from __future__ import annotations


class OrchestratorError(Exception):
    """Root of all orchestrator errors; its message is one line that says what to do."""

    exit_code = 2


class InvalidTaskError(OrchestratorError):
    """An unknown operator, a missing or impossible shape parameter."""


class SuiteError(OrchestratorError):
    """A workload suite file that cannot be read or has a malformed entry."""


class UnknownComponentError(OrchestratorError):
    """A searcher, measurer, space generator, pruner or cost model name nobody registered."""


class OptionError(OrchestratorError):
    """A plugin option the component does not take, or a value of the wrong kind."""


class PluginError(OrchestratorError):
    """A plugin failed to load, registered a duplicate name, or broke its hook contract."""


class InvalidConfigError(OrchestratorError):
    """A config that a space or schedule template cannot apply (raised before building)."""


class TargetError(OrchestratorError):
    """A target that cannot be detected or parsed."""


class HistoryError(OrchestratorError):
    """The history database cannot be opened, read or written."""


class SchemaVersionError(HistoryError):
    """The history database was written by another schema version."""
