"""Shapes learnt on one input serve the next (``blaslog._fast.cache.SharedShapes``): the records, the summaries
and every byte of the output are those of a cache per input; only the grammar runs fewer times."""

from __future__ import annotations

import shutil

import pytest

from blaslog._fast.cache import ShapeCache, SharedShapes
from blaslog.cli import cli
from blaslog.formats import Sniffer
from blaslog.inputs import Reader
from blaslog.parse import built, iter_file
from blaslog.parse._lines import _FileParser
from blaslog.reporters.json import ShapeTexts
from tests.conftest import BAD, FIXTURES, GENERATED, SEED

# per-rank logs of one job (ranks saying the same things), then other dialects, then logs a person mangled
INPUTS = [
    GENERATED / "lt_fp32_tp4" / "blaslt_321674.log",
    GENERATED / "lt_fp32_tp4" / "blaslt_321675.log",
    GENERATED / "lt_fp32_tp4" / "blaslt_321676.log",
    GENERATED / "lt_fp32_tp4" / "blaslt_321677.log",
    GENERATED / "lt_fp32_unsharded.stdout.log",
    GENERATED / "cublas_classic_fp16.log",
    GENERATED / "hipblaslt_bf16_tp2_rank0.api.log",
    GENERATED / "rocblas_fp16_trace.log",
    *sorted(SEED.glob("*.log")),
    *sorted(p for p in BAD.glob("*.log") if p.stat().st_size < 200_000),
]


def _not_shared(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every input with a cache of its own, as before the shapes were shared, and the JSON rows of each input
    made anew (not taken from the rows an earlier input kept)."""
    monkeypatch.setattr(SharedShapes, "take", lambda self, dialects, sniffer: (sniffer, ShapeCache()))
    monkeypatch.setattr(ShapeTexts, "_kept", lambda self, text, template: None)
    monkeypatch.setattr(ShapeTexts, "_adopt", lambda self, marks, texts, start: None)
    fresh = ShapeTexts._input

    def alone(self: ShapeTexts, path: str) -> None:  # the lines an earlier input saw are new to each input
        fresh(self, path)
        self._seen = {}

    monkeypatch.setattr(ShapeTexts, "_input", alone)


def _read(shapes: SharedShapes | None, events: bool, lazy: bool) -> tuple[list, list]:
    records, summaries = [], []
    for path in INPUTS:
        found = iter_file(str(path), events=events, lazy=lazy, summary_out=summaries, shapes=shapes)
        records.append([record.to_dict() for record in (built(found) if lazy else found)])
    return records, [summary.to_dict(max_problems=10**6) for summary in summaries]


@pytest.mark.parametrize(("events", "lazy"), [(False, False), (True, False), (True, True)])
def test_inputs_sharing_shapes_read_as_each_with_its_own_cache(events, lazy):
    shared = _read(SharedShapes(), events, lazy)
    assert shared == _read(None, events, lazy)
    assert sum(map(len, shared[0])) > 500


def test_a_second_rank_s_log_runs_no_grammar():
    """The ranks of one job log the same shapes: the second rank's log is served from what the first taught."""
    shapes = SharedShapes()
    runs = []
    for path in sorted((GENERATED / "lt_fp32_tp4").glob("*.log")):
        parser = _FileParser(Reader(str(path)), Sniffer(), "warn", events=False, shapes=shapes)
        assert list(parser.records()) and parser.summary.gemm_records > 0
        runs.append(parser.cache.stats.grammar_runs)
    assert runs[0] > 20 and sum(runs[1:]) <= 2  # the later ranks: a shape or two the first did not log


def test_shapes_of_other_dialect_sets_are_kept_apart():
    """`--log-format` names the dialects read: an input read with fewer dialects is not served a shape another
    dialect taught."""
    shapes = SharedShapes()
    path = str(GENERATED / "lt_fp32_tp4" / "blaslt_321674.log")
    everything = [r.to_dict() for r in iter_file(path, shapes=shapes)]
    summaries: list = []
    only = [r.to_dict() for r in iter_file(path, log_format="cublas", shapes=shapes, summary_out=summaries)]
    assert everything and not only and summaries[0].gemm_records == 0
    assert len(shapes._kept) == 2


@pytest.fixture
def ranks(tmp_path):
    """Per-rank logs as `blaslog record` and torchrun leave them (one folder, a file per rank), with a rank of
    another dialect and a mangled one among them."""
    folder = tmp_path / "run"
    folder.mkdir()
    for rank, path in enumerate(sorted((GENERATED / "lt_fp32_tp4").glob("*.log"))):
        shutil.copyfile(path, folder / f"rank{rank}.log")
    shutil.copyfile(GENERATED / "lt_fp32_tp4" / "blaslt_321674.log", folder / "rank4.log")
    shutil.copyfile(GENERATED / "hipblaslt_bf16_tp2_rank0.api.log", folder / "rank5.log")
    shutil.copyfile(BAD / "cut_group.log", folder / "rank6.log")
    # the lines of rank 0 again, under a name JSON and %-formats must escape (rows an earlier input kept get it)
    shutil.copyfile(GENERATED / "lt_fp32_tp4" / "blaslt_321674.log", folder / 'rank7_%d "q".log')
    return folder


@pytest.mark.parametrize(
    "command",
    [
        ["parse", "-f", "json", "-j", "1"],
        ["parse", "-f", "jsonl", "-j", "1"],
        ["parse", "-f", "jsonl", "--kind", "all", "-j", "1"],
        ["parse", "-f", "csv", "-j", "1"],
        ["summary", "-f", "json", "-j", "1"],
        ["summary", "-f", "json", "-j", "2"],
    ],
    ids=" ".join,
)
def test_output_is_byte_identical_with_and_without_shared_shapes(command, ranks, runner, monkeypatch):
    args = [*command, str(ranks), "-q"]
    shared = runner.invoke(cli, args)
    with monkeypatch.context() as patch:
        _not_shared(patch)
        alone = runner.invoke(cli, args)
    assert shared.exit_code == alone.exit_code and shared.exit_code in (0, 1), shared.output
    assert shared.stdout_bytes == alone.stdout_bytes and len(shared.stdout_bytes) > 1000
    assert shared.stderr_bytes == alone.stderr_bytes


def test_a_launcher_tag_is_said_in_each_input_that_has_it(tmp_path):
    """Other text before records (a launcher's tag, a test runner's name), the same in two inputs: each input's
    summary says once per kind of prefix that it was kept apart, as with a cache of its own, although the
    second input's tagged lines are of shapes the first taught (public logs that print so, each line three
    times: a shape is bound at its second line)."""
    real = FIXTURES / "real"
    text = "".join(
        (real / name).read_text(encoding="utf-8")
        for name in ("cublaslt_13.3_vllmcpp-issue-1732.log", "hipblaslt_unknown_rocm-pytorch-pr-1241-part1.log")
    )
    paths = []
    for n in range(2):
        path = tmp_path / f"rank{n}.log"
        path.write_text(text * 3, encoding="utf-8")
        paths.append(str(path))
    for events in (False, True):
        shapes = SharedShapes()
        shared: list = []
        alone: list = []
        for path in paths:
            list(iter_file(path, events=events, summary_out=shared, shapes=shapes))
            list(iter_file(path, events=events, summary_out=alone))
        said = [[p.message for p in s.problems if "other text before" in p.message] for s in shared]
        assert len(said[0]) == 2 and said[-1] == said[0]
        assert [s.to_dict(max_problems=10**6) for s in shared] == [s.to_dict(max_problems=10**6) for s in alone]


def test_a_diff_s_two_sides_share_shapes_and_say_what_each_alone_says(ranks, runner, monkeypatch):
    """`diff` reads its two sides with one shape cache (the same program logged both): the report is byte for
    byte that of sides read each with caches of their own, and the second side runs the grammar less."""
    from blaslog._fast import cache as cache_module

    unsharded = GENERATED / "lt_fp32_unsharded.stdout.log"
    args = ["diff", str(ranks), str(unsharded), "-f", "json", "-j", "1"]
    runs: list[int] = []
    take = cache_module.SharedShapes.take

    def counted(self, dialects, sniffer):  # type: ignore[no-untyped-def]
        found = take(self, dialects, sniffer)
        runs.append(id(found[1]))
        return found

    with monkeypatch.context() as patch:
        patch.setattr(cache_module.SharedShapes, "take", counted)
        shared = runner.invoke(cli, args)
    assert runs[0] in runs[1:]  # the cache the unsharded side (read first) filled served the sharded side
    with monkeypatch.context() as patch:
        _not_shared(patch)
        alone = runner.invoke(cli, args)
    assert shared.exit_code == alone.exit_code and shared.exit_code in (0, 1), shared.output
    assert shared.stdout_bytes == alone.stdout_bytes and b'"findings"' in shared.stdout_bytes
    assert shared.stderr_bytes == alone.stderr_bytes
