"""Shapes learnt by one process serve the next (blaslog/_fast/saved.py): the same records without the grammar, and a
saved file used only when it is private and names nothing but template and record classes."""

from __future__ import annotations

import copyreg
import os
import pickle
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from blaslog._fast import saved
from blaslog._fast.templates import Template
from blaslog.cli._group import cli
from blaslog.formats import Sniffer
from blaslog.inputs import Reader
from blaslog.parse._lines import _FileParser
from blaslog.records import Event
from tests.conftest import FIXTURES, GENERATED, NVIDIA, ROOT, SEED

LOGS = (
    sorted(p for p in (FIXTURES / "real").glob("*") if p.suffix in (".log", ".txt", ".csv", ".gz"))
    + sorted(p for p in GENERATED.glob("**/*.log*") if p.is_file())
    + sorted(SEED.glob("*.log"))
    + sorted(p for p in NVIDIA.glob("*") if p.suffix in (".log", ".txt", ".gz"))
)


@pytest.fixture
def saving(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Shapes saved in a cache folder of the test's own; the folder."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("BLASLOG_CACHE_DIR", str(folder))
    monkeypatch.setenv("BLASLOG_SAVED_SHAPES", "1")
    saved.forget()
    yield folder
    saved.forget()


def _read(path: Path, events: bool = True) -> tuple[list[Any], dict[str, Any], int]:
    """The records of `path` (as dicts), its accounting, and how many texts went through a grammar."""
    parser = _FileParser(Reader(str(path)), Sniffer(), "warn", events=events)
    records = [record.to_dict() for record in parser.records()]
    return records, parser.summary.to_dict(max_problems=10_000), parser.cache.stats.grammar_runs


def _saved_file(folder: Path) -> Path:
    (found,) = folder.glob("shapes-*.pickle")
    return found


def test_a_later_process_reads_every_log_as_before_without_the_grammar(saving: Path) -> None:
    assert len(LOGS) > 100
    cold = {path: _read(path) for path in LOGS}
    assert saved.save()
    saved.forget()  # as a new process: the shapes come from the file
    store = saved.store()
    assert store is not None and store.templates
    warm = {path: _read(path) for path in LOGS}
    for path in LOGS:
        assert warm[path][:2] == cold[path][:2], path  # records, problems and accounting
    before = sum(runs for _, _, runs in cold.values())
    after = sum(runs for _, _, runs in warm.values())
    assert after < before / 3, (before, after)
    # the GEMM-only read (summary, diff, check) is the same with shapes learnt by a read of every record
    for path in LOGS[:40]:
        assert _read(path, events=False)[:2] == _read_cold(path, events=False)[:2], path


def _read_cold(path: Path, events: bool) -> tuple[list[Any], dict[str, Any], int]:
    os.environ["BLASLOG_SAVED_SHAPES"] = "0"
    saved.forget()
    try:
        return _read(path, events)
    finally:
        os.environ["BLASLOG_SAVED_SHAPES"] = "1"
        saved.forget()


def _count(store: saved.Store) -> int:
    """Templates in a store, a family's counted one by one (as SAVED counts them)."""
    return sum(len(table) for table in store.templates.values()) + sum(
        max(len(family[2]), 1) for table in store.families.values() for family in table.values()
    )


def test_what_is_saved_is_read_back_whole(saving: Path) -> None:
    for path in LOGS:
        _read(path)
    store = saved.store()
    assert store is not None
    count = _count(store)
    assert 100 < count <= saved.SAVED
    assert saved.save()
    saved.forget()
    again = saved.store()
    assert again is not None and _count(again) == count
    some = next(t for table in again.templates.values() for t in table.values())
    assert isinstance(some, Template) and some.plan is None  # made again when first used: no function is saved


def test_a_cli_run_after_another_gives_the_same_bytes(saving: Path, tmp_path: Path) -> None:
    log = FIXTURES / "real" / "cublas_13.4.1_go-peft-cuda-validation.log"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    runs = [
        subprocess.run([sys.executable, "-m", "blaslog", "parse", "-f", "json", str(log)], capture_output=True, env=env)
        for _ in range(2)
    ]
    assert _saved_file(saving).stat().st_mode & 0o777 == 0o600
    assert runs[0].returncode == runs[1].returncode == 0
    assert runs[0].stdout == runs[1].stdout and runs[0].stderr == runs[1].stderr
    assert b'"m":' in runs[0].stdout


def test_switched_off_nothing_is_saved(saving: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BLASLOG_SAVED_SHAPES", "0")
    saved.forget()
    _read(LOGS[0])
    assert saved.store() is None and not saved.save()
    assert not list(saving.glob("shapes-*"))


class _Runs:
    """A pickle that would run a command when read by a plain unpickler."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, ("touch /tmp/blaslog-saved-shapes-ran",))


def test_a_saved_file_that_names_a_function_is_not_run(saving: Path) -> None:
    _read(LOGS[0])
    assert saved.save()
    target = _saved_file(saving)
    target.write_bytes(pickle.dumps((1, {"CublasLt": {"key": _Runs()}}, {})))
    saved.forget()
    store = saved.store()
    assert store is not None and not store.templates  # refused whole: learnt again
    assert not Path("/tmp/blaslog-saved-shapes-ran").exists()


def test_a_saved_file_others_can_write_is_not_read(saving: Path) -> None:
    first, *_ = _read(LOGS[0])
    assert saved.save()
    target = _saved_file(saving)
    target.chmod(0o666)
    saved.forget()
    store = saved.store()
    assert store is not None and not store.templates
    assert _read(LOGS[0])[0] == first


def test_the_file_is_bounded_and_the_folder_keeps_a_few_files(saving: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    saving.mkdir(mode=0o700)
    others = []
    for i in range(saved.FILES + 2):  # files of other fingerprints (other environments), oldest first
        other = saving / (f"shapes-{i:040x}.pickle")
        other.write_bytes(b"other")
        os.utime(other, (1000 + i, 1000 + i))
        others.append(other)
    leftover = saving / ".shapes-1234.pickle-abcd.tmp"  # what a process killed while writing left
    leftover.write_bytes(b"half")
    os.utime(leftover, (1000, 1000))
    monkeypatch.setattr(saved, "SAVED", 5)
    for path in LOGS[:20]:
        _read(path)
    assert saved.save()
    assert [other.exists() for other in others] == [False] * 3 + [True] * (saved.FILES - 1)
    assert not leftover.exists()
    saved.forget()
    store = saved.store()
    assert store is not None
    assert 0 < _count(store) <= 5


def test_a_file_that_is_no_saved_store_costs_only_learning_again(saving: Path) -> None:
    from blaslog._fast.templates import Slot

    first, *_ = _read(LOGS[0])
    assert saved.save()
    target = _saved_file(saving)
    template = next(t for table in saved.store().templates.values() for t in table.values())  # type: ignore[union-attr]
    wrong_class = Template(dict, {}, (), (), (), ())
    for content in (
        (Slot(0), {}, {}, {}),  # compared with the layout's number, a Slot raises
        (2, {"cublaslt": {"key": template}}, {}),  # the layout before line templates were saved
        (3, {"cublaslt": {"key": 7}}, {}, {}),
        (3, {"cublaslt": {"key": wrong_class}}, {}, {}),
        (3, {}, {"cublaslt": {("a",): (1, (0,), {("w",): 7})}}, {}),
        (3, {"cublaslt": {"key": template}}, [], {}),
        (3, {"cublaslt": {"key": template}}, {}, {"cublaslt": {"key": template}}),  # a Template as a line's
    ):
        target.write_bytes(pickle.dumps(content))
        saved.forget()
        store = saved.store()
        assert store is not None and not store.templates and not store.families and not store.bound, content
        assert _read(LOGS[0])[0] == first


def _line_templates(folder: Path) -> tuple[Path, tuple[Any, ...]]:
    """The saved file, and what it holds, after the JSON Lines of a log were written (line templates with the
    forms of their rows)."""
    result = CliRunner().invoke(cli, ["parse", "-f", "jsonl", str(GENERATED / "lt_fp32_tp4" / "blaslt_321674.log")])
    assert result.exit_code == 0, result.output
    assert saved.save()
    target = _saved_file(folder)
    return target, pickle.loads(target.read_bytes())


@pytest.mark.parametrize(
    "spoil",
    [
        lambda line: line.memo["jsonl"].__setitem__(0, line.memo["jsonl"][0] + "%s"),  # a str more than values
        lambda line: line.memo["jsonl"].__setitem__(0, "%d" * len(line.memo["jsonl"][1])),  # not strs
        lambda line: line.memo["jsonl"].__setitem__(1, (line.count + 2,)),  # no such value
        lambda line: line.memo["jsonl"].__setitem__(2, None),  # not checked
        lambda line: setattr(line, "direct", ((len(line.values), 0, None),)),  # no such field
        lambda line: setattr(line, "direct", ((0, line.count, None),)),  # no such value
        lambda line: setattr(line, "texts", ((0, ("a", line.count)),)),
        lambda line: setattr(line, "where", (0, 1)),
        lambda line: setattr(line, "values", line.values[:-1]),
        lambda line: setattr(line, "cls", dict),
        lambda line: setattr(line, "thread", ("value", 0)),
    ],
)
def test_a_saved_line_template_that_does_not_fit_its_record_is_refused(saving: Path, spoil: Any) -> None:
    target, (version, templates, families, bound, known, texts) = _line_templates(saving)
    line = next(line for table in bound.values() for line in table.values() if "jsonl" in line.memo)
    spoil(line)
    target.write_bytes(pickle.dumps((version, templates, families, bound, known, texts)))
    saved.forget()
    store = saved.store()
    assert store is not None and not store.templates and not store.bound  # refused whole: learnt again


def test_line_templates_and_the_forms_of_their_rows_are_saved_and_serve_the_next_process(
    saving: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from blaslog._fast.templates import LineTemplate
    from blaslog.reporters import json as json_reporter

    _, (_, _, _, bound, _, _) = _line_templates(saving)
    lines = [line for table in bound.values() for line in table.values()]
    assert len(lines) > 5 and all(type(line) is LineTemplate for line in lines)
    assert all(line.make is not None for line in lines)  # found again from the record class
    assert any("jsonl" in line.memo for line in lines)
    saved.forget()  # as a new process, which writes rows through line templates bound at their key's first line
    _line_templates(saving)  # (the first bound some at their second line only: no row of theirs was written)
    saved.forget()
    made: list[Any] = []
    monkeypatch.setattr(LineTemplate, "bind", classmethod(lambda cls, *a: made.append(a)))  # would bind anew
    make = json_reporter.ShapeTexts._make

    def forms(self: Any, item: Any) -> Any:
        if type(item.call.template) is LineTemplate:
            made.append(item)
        return make(self, item)

    monkeypatch.setattr(json_reporter.ShapeTexts, "_make", forms)
    result = CliRunner().invoke(cli, ["parse", "-f", "jsonl", str(GENERATED / "lt_fp32_tp4" / "blaslt_321674.log")])
    assert result.exit_code == 0 and '"m":' in result.output, result.output
    assert made == []
    assert not saved.save()  # nothing new to save


def _templates_with_forms(folder: Path) -> tuple[Path, tuple[Any, ...]]:
    """The saved file, and what it holds, after the JSON Lines of every record of a few logs were written (the
    templates of their VOLATILE shapes with the forms of their rows)."""
    logs = [str(p) for p in LOGS[::5]]
    result = CliRunner().invoke(cli, ["parse", "-f", "jsonl", "--kind", "all", *logs])
    assert result.exit_code in (0, 1), result.output
    assert saved.save()
    target = _saved_file(folder)
    return target, pickle.loads(target.read_bytes())


def test_the_forms_of_templates_rows_are_saved_and_serve_the_next_process(
    saving: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from blaslog.reporters import json as json_reporter

    _, (_, templates, _, _, _, _) = _templates_with_forms(saving)
    formed = [t for table in templates.values() for t in table.values() if "jsonl" in t.memo]
    assert len(formed) > 5 and all(type(t) is Template for t in formed)
    saved.forget()  # as a new process: the templates read back with their forms
    made: list[Any] = []
    make = json_reporter.ShapeTexts._make

    def forms(self: Any, item: Any) -> Any:
        if type(item.call.template) is Template and item.call.template in kept:
            made.append(item)
        return make(self, item)

    store = saved.store()
    assert store is not None
    kept = {t for table in store.templates.values() for t in table.values() if "jsonl" in t.memo}
    assert len(kept) == len(formed)
    monkeypatch.setattr(json_reporter.ShapeTexts, "_make", forms)
    logs = [str(p) for p in LOGS[::5]]
    result = CliRunner().invoke(cli, ["parse", "-f", "jsonl", "--kind", "all", *logs])
    assert result.exit_code in (0, 1) and '"m":' in result.output, result.output
    assert made == []  # no form made again for a template read back with its form


@pytest.mark.parametrize(
    "spoil",
    [
        lambda t, n: t.memo["jsonl"].__setitem__(1, (n + 2,)),  # no such value (the key's values, line, end line)
        lambda t, n: t.memo["jsonl"].__setitem__(0, t.memo["jsonl"][0] + "%s"),  # a str more than values
        lambda t, n: t.memo["jsonl"].__setitem__(2, None),  # not checked
        lambda t, n: setattr(t, "memo", [t.memo]),  # no dict
    ],
)
def test_a_saved_template_whose_form_does_not_fit_its_shape_is_refused(saving: Path, spoil: Any) -> None:
    target, (version, templates, families, bound, known, texts) = _templates_with_forms(saving)
    key, template = next((k, t) for table in templates.values() for k, t in table.items() if "jsonl" in t.memo)
    spoil(template, key.count("\x00"))
    target.write_bytes(pickle.dumps((version, templates, families, bound, known, texts)))
    saved.forget()
    store = saved.store()
    assert store is not None and not store.templates and not store.bound  # refused whole: learnt again


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
@pytest.mark.parametrize("kind", ["gemm", "all"])
def test_what_a_first_run_writes_a_later_run_writes_byte_for_byte(saving: Path, fmt: str, kind: str) -> None:
    logs = [str(p) for p in LOGS[::9]]
    args = ["parse", "-f", fmt, "--kind", kind, *logs]
    os.environ["BLASLOG_SAVED_SHAPES"] = "0"
    saved.forget()
    try:
        first = CliRunner().invoke(cli, args)
    finally:
        os.environ["BLASLOG_SAVED_SHAPES"] = "1"
    for _ in range(3):  # learns and saves; reads what was saved and adds the forms of rows; reads them all
        saved.forget()
        later = CliRunner().invoke(cli, args)
        saved.save()
        assert (later.exit_code, later.stdout, later.stderr) == (first.exit_code, first.stdout, first.stderr)
    store = saved.store()
    assert store is not None and store.bound and store.templates


def test_a_dialect_registered_by_a_user_is_not_saved(saving: Path) -> None:
    class Plugin:
        name = "cublaslt"  # a name of a shipped dialect, even

    store = saved.store()
    assert store is not None
    store.template(Plugin(), "key", object())
    store.family(Plugin(), ("a",), (1, (), {}))
    store.line_template(Plugin(), "key", object())  # type: ignore[arg-type]
    store.known_key((Plugin(),), "key", Plugin(), True)
    assert not store.templates and not store.families and not store.bound and not store.known and not store.unsaved
    assert store.templates_of(Plugin()) == {} and store.families_of(Plugin()) == {} and store.bound_of(Plugin()) == {}
    assert store.known_of((Plugin(),)) == {}


def _visits(path: Path, formats: list[str] | None = None) -> tuple[list[Any], dict[str, Any], int]:
    """The GEMMs of `path` read with only GEMMs wanted (as summary, diff and check read), its accounting, and how
    many lines the parser visited."""
    parser = _FileParser(Reader(str(path)), Sniffer(formats), "warn", events=False)
    records = [record.to_dict() for record in parser.records()]
    return records, parser.summary.to_dict(max_problems=10_000), parser.cache.stats.visited


def test_the_keys_that_begin_records_serve_the_next_process_for_the_same_dialects(saving: Path) -> None:
    """Which dialect begins a record on a line shape, and which free-text shapes need no visit, are saved per set
    of dialects read: a later process counts the first line of such a shape without a visit too, with the same
    records and accounting; a read of other dialects does not use them."""
    logs = [p for p in LOGS if p.suffix != ".gz"][::3]
    cold = {path: _visits(path) for path in logs}
    store = saved.store()
    assert store is not None and store.known
    names = tuple(fmt.name for fmt in Sniffer().formats)
    known = store.known[names]
    assert any(free for _, free in known.values()) and any(not free for _, free in known.values())
    assert saved.save()
    saved.forget()
    warm = {path: _visits(path) for path in logs}
    for path in logs:
        assert warm[path][:2] == cold[path][:2], path
    saved.forget()
    store = saved.store()
    assert store is not None and store.known
    store.known.clear()  # the templates saved, not the keys: the first line of each key is visited again
    unknown = {path: _visits(path) for path in logs}
    assert sum(v for _, _, v in warm.values()) < sum(v for _, _, v in unknown.values())
    saved.forget()
    # one dialect read: its own table (which dialect begins a record can depend on the others read)
    store = saved.store()
    assert store is not None
    assert store.known_of(tuple(Sniffer(["mkl"]).formats)) == {}
    mkl = [p for p in LOGS if p.name.startswith("mkl")]
    assert mkl and all(_visits(p, ["mkl"])[:2] == _visits(p)[:2] for p in mkl)


@pytest.mark.parametrize(
    "spoil",
    [
        lambda known: known.__setitem__(next(iter(known)), {"key": ("cublaslt", 1)}),  # not a bool
        lambda known: known.__setitem__(next(iter(known)), {"key": "cublaslt"}),
        lambda known: known.__setitem__(("cublaslt", 7), {}),  # not names
        lambda known: known.__setitem__(next(iter(known)), {7: ("cublaslt", True)}),
    ],
)
def test_a_saved_table_of_known_keys_that_is_not_one_is_refused(saving: Path, spoil: Any) -> None:
    target, (version, templates, families, bound, known, texts) = _line_templates(saving)
    assert known
    spoil(known)
    target.write_bytes(pickle.dumps((version, templates, families, bound, known, texts)))
    saved.forget()
    store = saved.store()
    assert store is not None and not store.templates and not store.bound and not store.known  # learnt again


def test_the_workers_of_a_pool_save_what_they_learnt(saving: Path) -> None:
    from blaslog._parallel import read_runs_parallel

    runs = read_runs_parallel([str(p) for p in LOGS[:4]], log_format=None, on_error="warn", jobs=2)
    assert len(runs) == 4
    assert not (saved.store() or saved.Store({}, {})).unsaved  # this process read nothing: a worker saved the file
    assert _saved_file(saving).stat().st_size > 0


def _mutated(path: Path, folder: Path) -> list[Path]:
    """`path` as a terminal wrapped it, with a program's prints between its lines, and with a CI runner's time
    stamp before every line (see tests/test_real_corpus.py)."""
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    variants = {
        "wrapped": [line[i : i + 80] for line in lines for i in range(0, max(len(line), 1), 80)],
        "prints": [x for line in lines for x in (line, "step 12 loss=2.345")],
        "stamped": [f"2024-01-15T10:23:45.{i:07d}Z {line}" for i, line in enumerate(lines)],
    }
    out = []
    for name, body in variants.items():
        target = folder / f"{name}-{path.name}"
        target.write_text("".join(line + "\n" for line in body), encoding="utf-8")
        out.append(target)
    return out


def test_keys_learnt_on_plain_logs_read_mutated_logs_as_a_first_process_does(saving: Path, tmp_path: Path) -> None:
    """A key learnt as a record's beginning in one log may be a piece of a wrapped line, or come after a
    print, in another: a later process reads wrapped, interleaved and stamped logs as a process that learnt
    nothing before does (GEMMs only, as summary, diff and check read; and every record)."""
    plain = [p for p in LOGS if p.suffix != ".gz"]
    for path in plain:
        _visits(path)
        _read(path)
    assert saved.save()
    mutated = [m for path in plain for m in _mutated(path, tmp_path)]
    warm = {m: (_visits(m)[:2], _read(m)[:2]) for m in mutated}
    os.environ["BLASLOG_SAVED_SHAPES"] = "0"
    saved.forget()
    try:
        for m in mutated:
            assert warm[m] == (_visits(m)[:2], _read(m)[:2]), m.name
    finally:
        os.environ["BLASLOG_SAVED_SHAPES"] = "1"


TEMPLATELESS = (
    "hipblaslt_unknown_hipblaslt-pr-395-simple-info.log",  # a tuning file's header: no template can be made
    "rocblas_dtk_work-skills-readme-count-typed.log",  # a bench line cut short: the build step's RecordError
    "mkl_2020.0_onednn-issue-789-prints.log",  # MKL's version note: free text, read by the looser rule
    "cublaslt_12.4_cudalibrarysamples-issue-187.log",
    "mkl_unknown_mkl-parser-docstrings-notime-indented.log",  # MKL lines without their time: the grammar rejects
)


@pytest.mark.parametrize("kind", ["gemm", "all"])
def test_a_log_read_again_runs_no_grammar_and_never_imports_lark(saving: Path, kind: str) -> None:
    """Records without a template (a shape whose build step computes with a volatile value, a record the build
    step rejects, free text, a record the grammar itself rejects) are saved by their text: a later process reads
    them as the first did, with the same problems, without a grammar; so a log read again never imports lark
    (blaslog/_lark.py)."""
    logs = [str(FIXTURES / "real" / name) for name in TEMPLATELESS]
    assert all(map(os.path.exists, logs))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-X", "importtime", "-m", "blaslog", "parse", "-f", "jsonl", "--kind", kind, *logs]
    first, again = (subprocess.run(command, capture_output=True, env=env) for _ in range(2))
    assert first.returncode == again.returncode == 0, first.stderr[-2000:]
    assert first.stdout == again.stdout
    assert b"cut short" in again.stdout and b'"mkl"' in again.stdout

    def said(run: subprocess.CompletedProcess[bytes]) -> list[bytes]:
        return [line for line in run.stderr.splitlines() if not line.startswith(b"import time:")]

    def imported(run: subprocess.CompletedProcess[bytes]) -> set[str]:
        """The top packages of the modules a run imported (`-X importtime`)."""
        lines = [line.decode() for line in run.stderr.splitlines() if line.startswith(b"import time:")]
        return {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in lines}

    assert said(first) == said(again)  # the same problems, said the same way
    assert "lark" in imported(first)  # the test reads texts that need a grammar the first time
    assert "lark" not in imported(again) and "regex" not in imported(again)
    store = pickle.loads(_saved_file(saving).read_bytes())
    texts = store[5]
    failures = [read for table in texts.values() for read in table.values() if type(read[0]) is tuple]
    loose = [read for table in texts.values() for read in table.values() if read[2]]
    assert failures and (loose or kind == "gemm")
    assert any(len(read[0]) == 2 for read in failures)  # the grammar's rejection: its reason and column


class _Stateless:
    """Pickles as an Event none of whose fields is set."""

    __class__ = property(lambda self: Event)  # type: ignore[assignment]

    def __reduce__(self) -> Any:
        return (copyreg.__newobj__, (Event,), [])  # type: ignore[attr-defined]


def _spoiled_state(read: Any) -> Any:
    return (_Stateless(), read[1], read[2])


def _spoiled_field(read: Any) -> Any:
    import dataclasses

    from blaslog.records import Event

    event = Event("mkl", "note", "note", text="x")
    return (dataclasses.replace(event, text=None), read[1], read[2])  # type: ignore[arg-type]


def _spoiled_class(read: Any) -> Any:
    from blaslog.records import FileSummary

    return (FileSummary("x"), read[1], read[2])  # a record class that no dialect reads


@pytest.mark.parametrize(
    "spoil",
    [
        lambda read: (read[0], ("a", 7), read[2]),  # a warning that is no str
        lambda read: (read[0], read[1], 1),  # not a bool
        lambda read: ({"m": 7}, read[1], read[2]),  # no record
        lambda read: ((True, "cut", "column", None), read[1], read[2]),  # a failure whose column is no int
        lambda read: ((True, "cut", 0, ("m",)), read[1], read[2]),
        lambda read: ((False, "boom", 10**9, None), read[1], read[2]),  # a column far past the text's end
        lambda read: ((False, "boom", -1, None), read[1], read[2]),
        lambda read: (("unexpected", 10**9), read[1], read[2]),  # a rejection's column far past the text's end
        lambda read: ((7, 1), read[1], read[2]),  # a rejection whose reason is no str
        _spoiled_state,
        _spoiled_field,
        _spoiled_class,
    ],
)
def test_a_saved_text_that_is_not_a_read_record_is_refused(saving: Path, spoil: Any) -> None:
    for name in TEMPLATELESS[:3]:
        _read(FIXTURES / "real" / name)
    assert saved.save()
    target = _saved_file(saving)
    version, templates, families, bound, known, texts = pickle.loads(target.read_bytes())
    table = next(iter(texts.values()))
    text = next(iter(table))
    table[text] = spoil(table[text])
    target.write_bytes(pickle.dumps((version, templates, families, bound, known, texts)))
    saved.forget()
    store = saved.store()
    assert store is not None and not store.templates and not store.texts  # refused whole: learnt again


def test_a_saved_text_is_served_with_its_own_place_and_its_error(saving: Path, tmp_path: Path) -> None:
    """A record read by its text is served at its own place (file and lines), not at the place of the read that
    saved it; a RecordError comes back as it was, a cut record's as a cut one."""
    tuning, cut = (FIXTURES / "real" / name for name in TEMPLATELESS[:2])
    log = tmp_path / "moved.log"
    log.write_text("a line of the program\n" + tuning.read_text() + cut.read_text())
    for source in (tuning, cut):
        _read(source)
    assert saved.save()
    saved.forget()
    warm = _read(log)
    assert warm[2] == 0  # no grammar: every record and problem came from saved shapes and texts
    saved.forget()
    os.environ["BLASLOG_SAVED_SHAPES"] = "0"
    try:
        cold = _read(log)
    finally:
        os.environ["BLASLOG_SAVED_SHAPES"] = "1"
    assert cold[2] > 0 and warm[:2] == cold[:2]  # records with their file and lines, problems, accounting
    assert {record["file"] for record in warm[0]} == {str(log)}
    assert min(record["line"] for record in warm[0]) == 2
    problems = warm[1]["problems"]
    assert any("cut short" in problem["message"] for problem in problems)


def test_a_log_of_more_texts_than_are_kept_is_saved_once(saving: Path, tmp_path: Path) -> None:
    """The first TEXTS texts are kept: a log of more of them (or of free text that changes from run to run) does
    not have the file saved again by every later process, each keeping other texts than the next one reads."""
    log = tmp_path / "banners.log"
    banner = "MKL_VERBOSE Intel(R) MKL 2019.0 Update 3 Product build 20190125 for Intel(R) 64 architecture node{}\n"
    log.write_text("".join(banner.format(i) for i in range(saved.TEXTS * 2)))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "blaslog", "parse", "-f", "jsonl", "--kind", "all", str(log)]
    outputs, stamps = [], []
    for _ in range(3):
        run = subprocess.run(command, capture_output=True, env=env)
        assert run.returncode == 0, run.stderr[-2000:]
        outputs.append(run.stdout)
        stamps.append(_saved_file(saving).stat().st_mtime_ns)
    assert outputs[0] == outputs[1] == outputs[2] and outputs[0].count(b'"kind": "event"') == saved.TEXTS * 2
    assert stamps[0] == stamps[1] == stamps[2]  # written by the first run only
    texts = pickle.loads(_saved_file(saving).read_bytes())[5]
    assert sum(map(len, texts.values())) == saved.TEXTS
