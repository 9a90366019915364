"""Typed registries handed to the registration hooks (like tox's ToxEnvRegister)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from orchestrator.errors import PluginError, UnknownComponentError
from orchestrator.options import coerce_options, owner_name

KINDS = ("space_generator", "pruner", "cost_model", "searcher", "measurer", "planner")


@dataclass(frozen=True)
class Component:
    """A named component: ``factory(**options)`` returns a fresh instance."""

    kind: str
    name: str
    factory: Callable[..., Any]
    plugin: str
    description: str = ""


class ComponentRegistry:
    """All components of one kind, by name. Duplicate names are an error naming both plugins."""

    def __init__(self, kind: str) -> None:
        if kind not in KINDS:
            raise ValueError(kind)
        self.kind = kind
        self._components: dict[str, Component] = {}
        self._plugin = "<unknown>"

    def for_plugin(self, plugin: str) -> ComponentRegistry:
        """The same registry, attributing the next ``add`` calls to ``plugin``."""
        self._plugin = plugin
        return self

    def add(self, name: str, factory: Callable[..., Any], *, description: str = "") -> None:
        """Register ``factory`` under ``name`` (lower-case letters, digits, '-' and '_')."""
        if not name or not all(c.isalnum() or c in "-_" for c in name):
            raise PluginError(f"plugin {self._plugin}: invalid {self.kind} name {name!r}")
        if name in self._components:
            other = self._components[name].plugin
            raise PluginError(
                f"{self.kind} {name!r} is registered by both plugin {other!r} and plugin "
                f"{self._plugin!r}; block one with ORCHESTRATOR_BLOCK_PLUGINS={self._plugin}"
            )
        if not description:
            lines = (factory.__doc__ or "").strip().splitlines()
            description = lines[0] if lines else ""
        self._components[name] = Component(self.kind, name, factory, self._plugin, description)

    def get(self, name: str) -> Component:
        try:
            return self._components[name]
        except KeyError:
            known = ", ".join(sorted(self._components)) or "none"
            raise UnknownComponentError(
                f"unknown {owner_name(self.kind, name)}; known: {known} "
                "(see `orchestrator plugins`)"
            ) from None

    def create(self, name: str, **options: Any) -> Any:
        """A new ``name`` made with ``options``, checked and converted against its factory's
        parameters first (an unknown option or a wrong value is a one-line error)."""
        component = self.get(name)
        owner = owner_name(self.kind, name)
        return component.factory(**coerce_options(owner, component.factory, options))

    def names(self) -> list[str]:
        return sorted(self._components)

    def __iter__(self):
        return iter(self._components.values())

    def __contains__(self, name: object) -> bool:
        return name in self._components
