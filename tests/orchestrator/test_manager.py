from __future__ import annotations

from importlib.metadata import EntryPoint

import pytest

from orchestrator import manager
from orchestrator.errors import OptionError, PluginError, UnknownComponentError
from orchestrator.hookspecs import hookimpl
from orchestrator.manager import DEFAULT_PLUGINS, load_plugins
from orchestrator.options import owner_name


def test_builtin_plugins_come_from_entry_points_like_third_party_ones():
    plugins = load_plugins(autoload=False)
    names = {n for n, _ in DEFAULT_PLUGINS}
    assert names <= set(plugins.info)
    assert all(plugins.info[n].builtin and plugins.info[n].distribution == manager.DISTRIBUTION
               for n in names)
    assert {"random", "grid"} <= set(plugins.registry("searcher").names())
    assert "replay" in plugins.registry("measurer")


def test_entry_points_and_default_plugins_agree():
    from importlib.metadata import entry_points
    own = {(ep.name, ep.value) for ep in entry_points(group=manager.ENTRY_POINT_GROUP)
           if ep.dist and ep.dist.name == manager.DISTRIBUTION}
    assert own == set(DEFAULT_PLUGINS)


class _Searchers:
    def __init__(self, name):
        self.name = name

    @hookimpl
    def orchestrator_add_searchers(self, registry):
        registry.add(self.name, object)


def test_duplicate_component_names_fail_naming_both_plugins():
    with pytest.raises(PluginError) as info:
        load_plugins(extra=[("first", _Searchers("dup")), ("second", _Searchers("dup"))],
                     autoload=False)
    assert "'first'" in str(info.value) and "'second'" in str(info.value)


def test_a_builtin_name_clash_is_reported_too():
    with pytest.raises(PluginError, match="'baselines'.*'mine'"):
        load_plugins(extra=[("mine", _Searchers("random"))], autoload=False)


def test_blocking_a_plugin_by_name(monkeypatch):
    plugins = load_plugins(block=["baselines"], autoload=False)
    assert "random" not in plugins.registry("searcher")
    monkeypatch.setenv(manager.BLOCK_ENV, "baselines,replay")
    plugins = load_plugins(autoload=False)
    assert "baselines" not in plugins.info and "replay" not in plugins.info


def _fake_entry_points(extra):
    real = list(manager.entry_points(group=manager.ENTRY_POINT_GROUP))
    return lambda group: real + extra


def test_a_broken_third_party_plugin_is_one_line_with_its_name(monkeypatch):
    broken = EntryPoint("broken-plugin", "no_such_module_xyz", manager.ENTRY_POINT_GROUP)
    monkeypatch.setattr(manager, "entry_points", _fake_entry_points([broken]))
    with pytest.raises(PluginError) as info:
        load_plugins()
    text = str(info.value)
    assert "broken-plugin" in text and "ModuleNotFoundError" in text and "\n" not in text


def test_autoload_off_skips_third_party_entry_points(monkeypatch):
    broken = EntryPoint("broken-plugin", "no_such_module_xyz", manager.ENTRY_POINT_GROUP)
    monkeypatch.setattr(manager, "entry_points", _fake_entry_points([broken]))
    monkeypatch.setenv(manager.AUTOLOAD_ENV, "1")
    plugins = load_plugins()
    assert "broken-plugin" not in plugins.info and "baselines" in plugins.info
    monkeypatch.delenv(manager.AUTOLOAD_ENV)
    assert "broken-plugin" not in load_plugins(block=["broken-plugin"]).info


def test_unknown_hook_is_a_plugin_error():
    class Typo:
        @hookimpl
        def orchestrator_add_searcherz(self, registry):
            pass

    with pytest.raises(PluginError, match="unknown hook"):
        load_plugins(extra=[("typo", Typo())], autoload=False)


def test_unknown_component_lists_known_names():
    plugins = load_plugins(autoload=False)
    with pytest.raises(UnknownComponentError, match="unknown searcher 'nope'; known: .*grid.*random"):
        plugins.create("searcher", "nope")


@pytest.mark.parametrize("kind,name,options", [
    ("searcher", "gga", {"population": 1}), ("searcher", "ga", {"population": 1}),
    ("searcher", "tl", {"keep": 0}), ("searcher", "xgb", {"plan_size": 0}),
    ("searcher", "fallback", {"omega": -1}), ("searcher", "auto", {"threshold": 2}),
    ("searcher", "cmaes", {"popsize": 1}), ("pruner", "psa", {"size": 0}),
    ("cost_model", "xgb", {"rounds": 0}), ("measurer", "local", {"repeat": 0}),
    ("measurer", "cuda", {"device": -1}), ("searcher", "tuna-es", {"population": 0}),
    ("searcher", "deap-ga", {"population": 0}), ("searcher", "deap-es", {"mu": 0}),
    ("cost_model", "cnnopt-ml", {"min_online": 0}),
    ("cost_model", "cnnopt-hybrid", {"min_online": 0}), ("pruner", "psa-512", {"size": 0})])
def test_a_shipped_components_range_errors_name_it_as_its_unknown_option_errors_do(
        kind, name, options):
    plugins = load_plugins()
    with pytest.raises(OptionError) as unknown:
        plugins.create(kind, name, no_such_option=1)
    with pytest.raises(OptionError) as out_of_range:
        plugins.create(kind, name, **options)
    owner = owner_name(kind, name)
    assert str(unknown.value).startswith(f"{owner}: unknown option")
    assert str(out_of_range.value).startswith(f"{owner}: option ")
