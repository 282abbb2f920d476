"""The shape cache is guarded by counts: how many texts each bundled log sends through a grammar, how many record
texts it masks (the slow way to a template) and how many lines it assembles one by one.

A build step that computes with a volatile value makes its shape uncacheable without changing one record
(the plain path gives the same answer, only hundreds of times slower on a large log). The counts here are
deterministic, so such a change shows as grammar runs going up for some fixture. The golden file
``tests/data/cache_counts.json`` holds today's counts; `pytest --update-golden` rewrites it (do that only
when a change sends more lines through the grammar on purpose, and say why in the commit).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from blaslog.formats import Sniffer
from blaslog.inputs import Reader, text_reader
from blaslog.parse._lines import _FileParser
from tests.conftest import BAD, FIXTURES, GENERATED, NVIDIA, SEED

GOLDEN = Path(__file__).parent / "data" / "cache_counts.json"

LOGS = (
    sorted(p for p in GENERATED.glob("**/*.log*") if p.is_file())
    + sorted(SEED.glob("*.log"))
    + sorted(p for p in NVIDIA.glob("*") if p.suffix in (".log", ".txt", ".gz"))
    + sorted(p for p in BAD.glob("*") if not p.name.endswith((".expected", ".md")))
    + [GENERATED / "rocblas_fp16_profile.yaml"]
)


def _counts(path: Path) -> dict[str, dict[str, int]]:
    """The cache's counts for the log read twice over (the second copy is all shapes seen before), with all
    records built and with GEMMs only (the path of `summary`, `check` and `diff`)."""
    text = "".join(line + "\n" for batch in Reader(str(path)).batches() for line in batch.lines) * 2
    out = {}
    for mode, events in (("all", True), ("gemms", False)):
        reader = text_reader(text, path.name)
        reader.block = 1 << 12  # batches of a few lines: later batches are classified with what earlier ones taught
        parser = _FileParser(reader, Sniffer(), "warn", events=events)
        for _record in parser.records():
            pass
        stats = parser.cache.stats
        out[mode] = {
            "grammar_runs": stats.grammar_runs,
            "hits": stats.hits,
            "misses": stats.misses,
            "masked": stats.masked,
            "visited": stats.visited,
            "followed": stats.followed,
            "derived": stats.derived,
        }
    return out


def _key(path: Path) -> str:
    return path.relative_to(FIXTURES).as_posix()


@pytest.fixture(scope="module")
def golden(request: pytest.FixtureRequest):
    found = json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}
    yield found
    if request.config.getoption("--update-golden"):
        GOLDEN.write_text(json.dumps(dict(sorted(found.items())), indent=1) + "\n")


def test_every_fixture_tree_is_counted():
    assert len(LOGS) > 30 and all(path.is_file() for path in LOGS)


@pytest.mark.parametrize("path", LOGS, ids=_key)
def test_grammar_runs_do_not_go_up(path, golden, update_golden, capsys):
    counts = _counts(path)
    with capsys.disabled():
        rates = ", ".join(
            f"{mode} {c['hits'] / max(1, c['hits'] + c['misses']):.1%} hit, {c['grammar_runs']} grammar runs"
            for mode, c in counts.items()
        )
        print(f"\n  {_key(path)}: {rates}", end="")
    if update_golden:
        golden[_key(path)] = counts
        return
    assert _key(path) in golden, f"no golden counts for {_key(path)}: run pytest --update-golden"
    for mode, count in counts.items():
        before = golden[_key(path)][mode]
        assert count["grammar_runs"] <= before["grammar_runs"], (
            f"{mode}: {count['grammar_runs']} texts went through the grammar, {before['grammar_runs']} before: a "
            "shape that was served from the cache is parsed again (a build step computing with a volatile "
            "value?); if that is meant, run pytest --update-golden"
        )
        assert count["hits"] >= before["hits"], f"{mode}: hits {count['hits']} < {before['hits']}"
        # off the fast paths: a record of a known SHAPE key masked again, a line of a known shape visited again
        assert count["masked"] <= before["masked"], (
            f"{mode}: {count['masked']} record texts masked with VOLATILE, {before['masked']} before: records of "
            "known SHAPE keys no longer come from their bound templates"
        )
        assert count["visited"] <= before["visited"], (
            f"{mode}: {count['visited']} lines assembled one by one, {before['visited']} before: lines the "
            "classifying pass counted or marked are assembled again"
        )


def test_lines_of_shapes_seen_before_are_all_served_from_the_cache():
    """The second copy of a log of repeated training steps costs no grammar run at all."""
    log = GENERATED / "lt_fp32_tp4" / "blaslt_321674.log"
    text = "".join(line + "\n" for batch in Reader(str(log)).batches() for line in batch.lines)
    runs = []
    for copies in (2, 3):
        parser = _FileParser(text_reader(text * copies, "x"), Sniffer(), "warn", events=True)
        for _record in parser.records():
            pass
        runs.append(parser.cache.stats.grammar_runs)
    assert runs[0] == runs[1] and runs[0] < len(text.splitlines()) / 10
