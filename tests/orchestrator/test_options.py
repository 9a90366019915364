from __future__ import annotations

from pathlib import Path
from typing import Optional, Union

import pytest

from orchestrator.errors import OptionError, OrchestratorError
from orchestrator.options import (as_bool, at_least, coerce_options, number, one_of,
                                  option_names, owner_name, unknown_option, unknown_options,
                                  whole, within)


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


@pytest.mark.parametrize("kind,name,expected", [
    ("searcher", "gga", "searcher 'gga'"), ("cost_model", "xgb", "cost model 'xgb'"),
    ("cost model", "cnnopt-rf", "cost model 'cnnopt-rf'"),
    ("space_generator", "tvm", "space generator 'tvm'")])
def test_owner_name_is_the_kind_in_words_and_the_quoted_name(kind, name, expected):
    assert owner_name(kind, name) == expected


def _factory(count: int = 1, rate: float = 0.5, flag: bool = False, name: str = "a",
             limit: int | None = None, anything=None) -> dict:
    return {"count": count, "rate": rate, "flag": flag, "name": name, "limit": limit,
            "anything": anything}


def test_options_are_converted_to_the_annotated_types():
    got = coerce_options("searcher 'x'", _factory, {"count": "3", "rate": 2, "flag": "yes",
                                                     "name": 7, "limit": None,
                                                     "anything": [1]})
    assert got == {"count": 3, "rate": 2.0, "flag": True, "name": "7", "limit": None,
                   "anything": [1]}
    assert type(got["rate"]) is float
    assert coerce_options("s", _factory, {"count": 4.0, "limit": "5"}) == {"count": 4, "limit": 5}
    assert coerce_options("s", _factory, {"name": Path("a/b")}) == {"name": Path("a/b")}



def test_annotations_given_as_objects_convert_too():
    """A third-party plugin without ``from __future__ import annotations`` has its
    annotations as objects, ``Optional[int]`` among them."""
    def plain(count=1, limit=None, names=None, rate=0.5, where=None, items=None):
        return None
    plain.__annotations__ = {"count": int, "limit": Optional[int], "names": Union[str, Path],
                             "rate": float | None, "where": Optional[Path],
                             "items": list[int]}
    got = coerce_options("searcher 'p'", plain, {"count": "3", "limit": "4", "names": 5,
                                                  "rate": "0.25", "where": None,
                                                  "items": "as given"})
    assert got == {"count": 3, "limit": 4, "names": "5", "rate": 0.25, "where": None,
                   "items": "as given"}
    with pytest.raises(OptionError, match="^searcher 'p': option limit takes a whole number, "
                                          "got 'many'$"):
        coerce_options("searcher 'p'", plain, {"limit": "many"})

@pytest.mark.parametrize("options,message", [
    ({"count": "abc"}, "^searcher 'x': option count takes a whole number, got 'abc'$"),
    ({"count": 2.5}, "option count takes a whole number, got 2.5"),
    ({"count": True}, "option count takes a whole number, got True"),
    ({"rate": "fast"}, "option rate takes a number, got 'fast'"),
    ({"limit": "none"}, "option limit takes a whole number"),
    ({"flag": "maybe"}, "option flag must be true or false"),
    ({"name": {"a": 1}}, "option name takes text"),
    ({"popsize": 4}, "^searcher 'x': unknown option 'popsize'; known: anything, count, flag, "
                     "limit, name, rate$"),
])
def test_a_wrong_option_is_a_one_line_error_naming_it(options, message):
    with pytest.raises(OptionError, match=message):
        coerce_options("searcher 'x'", _factory, options)


def test_a_factory_with_kwargs_gets_unknown_names_as_given():
    def open_ended(count: int = 1, **rest):
        return rest
    assert coerce_options("m", open_ended, {"count": "2", "other": "x"}) == {"count": 2,
                                                                            "other": "x"}


def test_also_lists_the_options_a_factory_passes_on():
    with pytest.raises(OptionError, match="known: anything, count, extra, flag, limit, name, rate$"):
        coerce_options("s", _factory, {"bogus": 1}, also=["extra"])
    with pytest.raises(OptionError, match="it takes no options"):
        coerce_options("s", lambda: None, {"bogus": 1})


def test_option_names_leave_out_kwargs_and_positional_only_parameters():
    def made(a, /, b: int = 1, *args, c: str = "", **rest):
        return rest
    assert option_names(made) == ["b", "c"]
    assert option_names(max) == []  # a builtin without a readable signature


def test_unknown_options_one_or_several_are_named_with_those_known():
    assert str(unknown_option("m", "x", ["b", "a"])) == "m: unknown option 'x'; known: a, b"
    assert str(unknown_options("m", ["x"], ["a"])) == "m: unknown option 'x'; known: a"
    assert (str(unknown_options("m", {"y", "x"}, [])) ==
            "m: unknown options 'x', 'y'; it takes no options")


def test_ranges():
    at_least("p", "n", 1, 1)
    within("p", "t", 0.0, 0.0, 1.0)
    with pytest.raises(OptionError, match=r"^p: option n must be >= 1, got 0$"):
        at_least("p", "n", 0, 1)
    with pytest.raises(OptionError, match=r"must be within \[0.0, 1.0\], got nan"):
        within("p", "t", float("nan"), 0.0, 1.0)


def test_whole_number_and_one_of_convert_command_line_text_and_check_the_range():
    assert whole("p", "n", "3", 0) == 3 and whole("p", "n", 4.0, 0, 4) == 4
    assert number("p", "x", "0.25", 0.0, 1.0) == 0.25 and number("p", "x", 2, 0.0) == 2.0
    assert number("p", "x", "1e-9", 0.0, low_open=True) == 1e-9
    assert one_of("p", "c", "b", ("a", "b")) == "b"
    for call, message in [
            (lambda: whole("p", "n", -1, 0), r"^p: option n must be >= 0, got -1$"),
            (lambda: whole("p", "n", 5, 0, 4), r"^p: option n must be within \[0, 4\], got 5$"),
            (lambda: whole("p", "n", True, 0), r"^p: option n takes a whole number, got True$"),
            (lambda: whole("p", "n", 1.5, 0), "takes a whole number, got 1.5"),
            (lambda: number("p", "x", "fast", 0.0), "^p: option x takes a number, got 'fast'$"),
            (lambda: number("p", "x", float("nan"), 0.0, 1.0), "must be within"),
            (lambda: number("p", "x", 0, 0.0, 1.0, low_open=True),
             r"^p: option x must be within \(0.0, 1.0\], got 0.0$"),
            (lambda: number("p", "x", "0", 0.0, low_open=True),
             r"^p: option x must be > 0.0, got 0.0$"),
            (lambda: number("p", "x", float("nan"), 0.0, low_open=True),
             "must be > 0.0, got nan$"),
            (lambda: one_of("p", "c", "z", ("a", "b")), "^p: option c must be one of a, b, got 'z'$"),
            (lambda: one_of("p", "c", None, ("a", "b")), "must be one of a, b, got None$")]:
        with pytest.raises(OptionError, match=message):
            call()
