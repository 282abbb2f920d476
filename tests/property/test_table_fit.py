"""Property tests of the table fitting (blaslog.reporters.table): over random cell texts, priorities and widths,
no line is wider than the width, no word is split (each is whole or abbreviated with …), the columns left out
are named, and rows on several lines are set apart."""

from __future__ import annotations

import os
import unicodedata

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from blaslog.reporters.table import fit_table, layout, wrap_cell
from tests.test_table_fit import assert_cell, check_fitted, pieces

pytestmark = pytest.mark.property
SCALE = int(os.environ.get("BLASLOG_FUZZ_SCALE", "1"))

#: Narrow characters, white space and the characters a line may break after: cells read back by column.
NARROW = st.text(st.sampled_from("abcXYZ019_,/;|=-.:() "), max_size=60)
LONG_WORD = st.text(st.sampled_from("abcdefghij0123456789"), min_size=15, max_size=90)
CELL = st.one_of(NARROW, LONG_WORD, st.builds(lambda a, b: f"{a} {b}", NARROW, LONG_WORD))
HEADER = st.text(st.sampled_from("abcdefxyz_ "), min_size=1, max_size=24).map(str.strip).filter(bool)
WIDTH = st.integers(min_value=20, max_value=160)


@st.composite
def tables(draw) -> tuple[list[str], list[list[str]], int, list[str]]:
    headers = draw(st.lists(HEADER, min_size=1, max_size=9, unique_by=lambda h: "".join(h.split())))
    rows = draw(st.lists(st.lists(CELL, min_size=len(headers), max_size=len(headers)), min_size=1, max_size=6))
    rows = [row for row in rows if any(cell.strip() for cell in row)] or [["x"] * len(headers)]
    priority = draw(st.permutations(headers)).copy()
    return headers, rows, draw(WIDTH), priority[: draw(st.integers(0, len(priority)))]


@settings(max_examples=300 * SCALE, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables())
@example((["a_b", "c"], [["x" * 100, "y"]], 20, []))
@example((["a"], [[""]], 20, []))
@example((["_", "_" * 20, "__"], [["x", "x", "x"]], 20, []))  # a dropped name as wide as the terminal
@example((["_" * 21], [["x"]], 20, []))  # a header wider than the terminal
@example((["_", "_" * 21 + " _"], [["x", "x"]], 20, []))  # an abbreviated word in a header of two
def test_a_fitted_table_keeps_its_promises(table):
    headers, rows, width, priority = table
    text = fit_table(headers, rows, width, priority)
    check_fitted(headers, rows, width, text)


@settings(max_examples=300 * SCALE, deadline=None)
@given(CELL, st.integers(min_value=1, max_value=120))
def test_a_wrapped_cell_holds_every_word_whole_or_abbreviated(text, width):
    lines = wrap_cell(text, width)
    assert lines
    assert_cell(text, [line for line in lines if line], width)
    if all(len(p) <= width for p in pieces(text)):  # nothing abbreviated: the same text, only the spaces moved
        assert "".join("".join(lines).split()) == "".join(text.split())


def _width(text: str) -> int:
    return sum(
        0 if unicodedata.category(c) in ("Mn", "Me", "Cf") else 2 if unicodedata.east_asian_width(c) in "WF" else 1
        for c in text
    )


WIDE = st.text(st.sampled_from("ab_/ 漢字表テスト한국é\u0301"), max_size=40)


@settings(max_examples=200 * SCALE, deadline=None)
@given(st.lists(st.lists(WIDE, min_size=3, max_size=3), min_size=1, max_size=5), WIDTH)
def test_wide_characters_are_measured(rows, width):
    text = fit_table(["漢字", "b", "c"], rows, width)
    assert max(_width(line) for line in text.split("\n")) <= width


@settings(max_examples=200 * SCALE, deadline=None)
@given(tables())
def test_the_columns_kept_are_the_most_wanted(table):
    headers, rows, width, priority = table
    plan = layout(headers, rows, width, priority)
    assert plan.shown and sorted(plan.shown + plan.dropped) == list(range(len(headers)))
    assert sum(plan.widths) + 2 * (len(plan.shown) - 1) <= max(width, 1)
    rank = {h: i for i, h in enumerate(priority)}
    place = {i: (rank.get(headers[i], len(rank)), i) for i in range(len(headers))}
    if plan.dropped:  # every column left out is less wanted than every column kept
        assert max(place[i] for i in plan.shown) < min(place[i] for i in plan.dropped)
