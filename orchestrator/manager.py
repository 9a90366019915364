"""The plugin manager: finds plugins, registers them, and collects their components.

Built-in plugins are declared as entry points of this distribution, in the same group
(``orchestrator``) as third-party ones, and registered with the same ``pm.register``.
``DEFAULT_PLUGINS`` lists them too, so a source checkout that was never installed still
works. ``ORCHESTRATOR_DISABLE_PLUGIN_AUTOLOAD=1`` skips third-party entry points;
``ORCHESTRATOR_BLOCK_PLUGINS=a,b`` (or ``block=``) skips plugins by name.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from types import ModuleType
from typing import Any

import pluggy

from orchestrator import hookspecs
from orchestrator.errors import PluginError
from orchestrator.registry import KINDS, ComponentRegistry

ENTRY_POINT_GROUP = "orchestrator"
DISTRIBUTION = "tuning-orchestrator"
DEFAULT_PLUGINS: tuple[tuple[str, str], ...] = (
    ("templates", "plugins.templates"),
    ("dlfusion", "plugins.dlfusion"),
    ("cuda", "plugins.cuda"),
    ("cnnopt", "plugins.cnnopt"),
    ("psa", "plugins.psa"),
    ("local", "plugins.measure"),
    ("baselines", "plugins.baselines"),
    ("observers", "plugins.observers"),
    ("replay", "orchestrator.testing.plugin"),
    ("gga", "plugins.gga"),
    ("tl", "plugins.tl"),
    ("history_search", "plugins.history_search"),
    ("tuna", "plugins.tuna"),
    ("es", "plugins.es"),
)
AUTOLOAD_ENV = "ORCHESTRATOR_DISABLE_PLUGIN_AUTOLOAD"
BLOCK_ENV = "ORCHESTRATOR_BLOCK_PLUGINS"

_HOOK_OF_KIND = {
    "space_generator": "orchestrator_add_space_generators",
    "pruner": "orchestrator_add_pruners",
    "cost_model": "orchestrator_add_cost_models",
    "searcher": "orchestrator_add_searchers",
    "measurer": "orchestrator_add_measurers",
    "planner": "orchestrator_add_planners",
}


@dataclass(frozen=True)
class PluginInfo:
    name: str
    module: str
    distribution: str
    version: str
    builtin: bool


@dataclass
class Plugins:
    """A loaded plugin manager and the components its plugins registered."""

    pm: pluggy.PluginManager
    info: dict[str, PluginInfo] = field(default_factory=dict)
    registries: dict[str, ComponentRegistry] = field(default_factory=dict)

    def registry(self, kind: str) -> ComponentRegistry:
        return self.registries[kind]

    def create(self, kind: str, name: str, **options: Any) -> Any:
        return self.registries[kind].create(name, **options)

    @property
    def hook(self) -> Any:
        return self.pm.hook

    def components_of(self, plugin: str) -> list[tuple[str, str]]:
        return [(kind, c.name) for kind, reg in self.registries.items()
                for c in reg if c.plugin == plugin]


def _blocked(block: Iterable[str] | None) -> set[str]:
    names = set(block or ())
    names.update(n.strip() for n in os.environ.get(BLOCK_ENV, "").split(",") if n.strip())
    return names


def _load(name: str, target: str, dist: str) -> ModuleType:
    try:
        return importlib.import_module(target)
    except Exception as exc:  # any import failure of a plugin is reported in one line
        where = f" (distribution {dist})" if dist else ""
        raise PluginError(
            f"plugin {name!r}{where} failed to load: {type(exc).__name__}: {exc}; "
            f"fix or uninstall it, or block it with {BLOCK_ENV}={name}"
        ) from None


def load_plugins(*, block: Iterable[str] | None = None,
                 extra: Iterable[tuple[str, object]] = (),
                 autoload: bool | None = None) -> Plugins:
    """Register built-in and installed plugins (plus ``extra`` objects) and collect components.

    ``extra`` is for plugins registered in code, e.g. ``[("mine", MyPlugin())]``.
    """
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    blocked = _blocked(block)
    if autoload is None:
        autoload = not os.environ.get(AUTOLOAD_ENV)
    plugins = Plugins(pm)

    eps: list[EntryPoint] = list(entry_points(group=ENTRY_POINT_GROUP))
    own = [ep for ep in eps if ep.dist is not None and ep.dist.name == DISTRIBUTION]
    third = [ep for ep in eps if ep not in own]
    builtin: list[tuple[str, str, str, str]] = (
        [(ep.name, ep.value, DISTRIBUTION, ep.dist.version) for ep in own]  # type: ignore[union-attr]
        if own else [(n, m, DISTRIBUTION, "source") for n, m in DEFAULT_PLUGINS]
    )
    for name, target, dist, version in builtin:
        if name not in blocked:
            _register(plugins, name, _load(name, target, dist), dist, version, builtin=True)
    if autoload:
        for ep in third:
            if ep.name in blocked:
                continue
            dist = ep.dist.name if ep.dist else ""
            version = ep.dist.version if ep.dist else ""
            if ep.name in plugins.info:
                other = plugins.info[ep.name].distribution
                raise PluginError(
                    f"two plugins are named {ep.name!r} (distributions {other} and {dist}); "
                    f"uninstall one or block it with {BLOCK_ENV}={ep.name}"
                )
            _register(plugins, ep.name, _load(ep.name, ep.value, dist), dist, version,
                      builtin=False)
    for name, obj in extra:
        if name not in blocked:
            _register(plugins, name, obj, "", "", builtin=False)
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        raise PluginError(f"a plugin implements an unknown hook: {exc}") from None

    for kind in KINDS:
        registry = ComponentRegistry(kind)
        hook = getattr(pm.hook, _HOOK_OF_KIND[kind])
        for impl in hook.get_hookimpls():
            try:
                impl.function(registry=registry.for_plugin(impl.plugin_name))
            except PluginError:
                raise
            except Exception as exc:
                raise PluginError(
                    f"plugin {impl.plugin_name!r} failed while registering {kind}s: "
                    f"{type(exc).__name__}: {exc}"
                ) from None
        plugins.registries[kind] = registry
    return plugins


def _register(plugins: Plugins, name: str, obj: object, dist: str, version: str,
              *, builtin: bool) -> None:
    try:
        plugins.pm.register(obj, name=name)
    except (ValueError, pluggy.PluginValidationError) as exc:
        raise PluginError(f"plugin {name!r} cannot be registered: {exc}") from None
    module = obj.__name__ if isinstance(obj, ModuleType) else type(obj).__module__
    plugins.info[name] = PluginInfo(name, module, dist or "(registered in code)", version, builtin)
