"""The shared YAML field reader behind manifests and board profiles."""

from __future__ import annotations

import pytest

from daemon.engine.fields import Fields, expected


class _Err(ValueError):
    pass


def test_errors_name_where_and_field_with_the_callers_class():
    f = Fields({"a": None, "n": True, "s": "", "x": 1}, "f.yaml", _Err)
    with pytest.raises(_Err, match=r"^f.yaml: missing field 'b'$"):
        f.value("b")
    with pytest.raises(_Err, match="a must not be null"):
        f.text("a")
    with pytest.raises(_Err, match="n must be an integer"):
        f.integer("n")  # bool is not an integer here
    with pytest.raises(_Err, match="x must be a non-negative integer"):
        Fields({"x": -1}, "f", _Err).integer("x", minimum=0)
    with pytest.raises(_Err, match="s must be a non-empty string"):
        f.text("s")
    with pytest.raises(_Err, match=r"unknown field\(s\) \['x'\]"):
        f.reject_unknown()
    with pytest.raises(_Err, match="expected a mapping, got list"):
        Fields([1], "f", _Err)


def test_optional_fields_may_be_absent_or_null():
    f = Fields({"a": None}, "f")
    assert f.text("a", required=False) is None
    assert f.text("b", required=False) is None
    assert f.mapping("c", required=False) == {}
    assert f.section("d", required=False) is None


def test_sections_keep_the_subclass_and_the_path():
    class Sub(Fields):
        pass

    sec = Sub({"s": {"k": 1}}, "top", _Err).section("s")
    assert type(sec) is Sub and sec.where == "top: s" and sec.integer("k") == 1


def test_expected_types_are_worded_with_their_article():
    assert expected(int) == "an integer"
    assert expected((int, float)) == "an integer or a number"
    assert expected([str, bool, dict]) == "a string or a boolean or a mapping"
