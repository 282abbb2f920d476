"""The saved parsers (blaslog/formats/_grammars.py): used when safe, rebuilt when not, never trusted blindly."""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from blaslog.formats import _grammars

ROOT = Path(__file__).resolve().parents[1]
LOG = ROOT / "fixtures" / "generated" / "lt_fp32_tp4" / "blaslt_321674.log"
LINE = (
    "[2026-06-06 15:31:41][cublasLt][321674][Api][cublasLtMatmulDescCreate] matmulDesc=0X7FFC7F88AB00 "
    "computeType=COMPUTE_32F scaleType=R_32F"
)


def _fresh(monkeypatch: pytest.MonkeyPatch, folder: Path | str) -> None:
    monkeypatch.setenv("BLASLOG_CACHE_DIR", str(folder))
    _grammars.load_grammar.cache_clear()


def _saved(folder: Path) -> list[Path]:
    return sorted(folder.glob("grammar-*.pickle"))


def test_a_built_parser_is_saved_privately_and_loaded_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "cache"
    _fresh(monkeypatch, folder)
    built = _grammars.load_grammar("cublaslt.lark")
    (saved,) = _saved(folder)
    assert folder.stat().st_mode & 0o777 == 0o700 and saved.stat().st_mode & 0o077 == 0
    assert not list(folder.glob(".grammar-*"))  # no temporary file left behind
    stamp = saved.stat().st_mtime_ns
    _fresh(monkeypatch, folder)
    loaded = _grammars.load_grammar("cublaslt.lark")
    assert loaded is not built and saved.stat().st_mtime_ns == stamp  # read, not written again
    assert loaded.parse(LINE) == built.parse(LINE)


def test_each_rule_and_grammar_has_its_own_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fresh(monkeypatch, tmp_path)
    _grammars.load_grammar("cublaslt.lark")
    _grammars.load_grammar("rocblas.lark", "trace")
    assert len(_saved(tmp_path)) == 2


def test_a_changed_grammar_gets_a_new_key(tmp_path: Path) -> None:
    source = ROOT / "grammars"
    copy = tmp_path / "grammars"
    shutil.copytree(source, copy)
    before = _grammars._key(copy, "cublaslt.lark", "start")
    assert before == _grammars._key(source, "cublaslt.lark", "start")
    assert before != _grammars._key(copy, "cublaslt.lark", "other")
    with open(copy / "kv.lark", "a") as handle:
        handle.write("\n// changed\n")  # an imported grammar changes the key of every grammar
    assert _grammars._key(copy, "cublaslt.lark", "start") != before


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX permissions")
@pytest.mark.parametrize("mode", [0o666, 0o644, 0o640])
def test_a_file_others_could_read_or_write_is_not_used(
    mode: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fresh(monkeypatch, tmp_path)
    _grammars.load_grammar("cublaslt.lark")
    (saved,) = _saved(tmp_path)
    saved.write_bytes(pickle.dumps({"data": {}, "memo": {}}))  # tables that would break the parser if they were used
    saved.chmod(mode)
    _fresh(monkeypatch, tmp_path)
    assert _grammars.load_grammar("cublaslt.lark").parse(LINE)  # built again, and saved over it
    assert saved.stat().st_mode & 0o077 == 0 and b"rules" in saved.read_bytes()


def test_what_is_saved_is_data_never_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache file is unpickled with every global refused: a pickle that would call anything is refused, not run."""
    _fresh(monkeypatch, tmp_path)
    _grammars.load_grammar("cublaslt.lark")
    (saved,) = _saved(tmp_path)
    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self) -> tuple[object, tuple[str]]:
            return os.mkdir, (str(marker),)

    saved.write_bytes(pickle.dumps({"data": Payload(), "memo": {}}))
    saved.chmod(0o600)
    _fresh(monkeypatch, tmp_path)
    assert _grammars.load_grammar("cublaslt.lark").parse(LINE)
    assert not marker.exists()


@pytest.mark.skipif(not hasattr(os, "O_NOFOLLOW"), reason="POSIX")
def test_a_cache_folder_that_is_a_symbolic_link_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Someone who can write the folder above the cache swaps the cache for a link to a folder of ours holding
    files of ours with their bytes (an extracted CI artifact): the link is not followed."""
    ours = tmp_path / "artifacts"
    ours.mkdir(mode=0o700)
    link = tmp_path / "cache"
    link.symlink_to(ours)
    _fresh(monkeypatch, link)
    assert _grammars.cache_folder() is None
    assert _grammars.load_grammar("cublaslt.lark").parse(LINE)
    assert not _saved(ours)


@pytest.mark.skipif(not hasattr(os, "O_NOFOLLOW"), reason="POSIX")
def test_a_saved_file_that_is_a_symbolic_link_is_not_followed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fresh(monkeypatch, tmp_path / "cache")
    _grammars.load_grammar("cublaslt.lark")
    (saved,) = _saved(tmp_path / "cache")
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("{'data': {}, 'memo': {}}")
    elsewhere.chmod(0o600)
    saved.unlink()
    saved.symlink_to(elsewhere)
    _fresh(monkeypatch, tmp_path / "cache")
    assert _grammars.load_grammar("cublaslt.lark").parse(LINE)
    assert not saved.is_symlink()  # the link was replaced by a file of the cache's own


def test_no_home_folder_means_no_cache_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    """HOME unset and a user id with no passwd entry (a container run with --user 12345)."""
    pwd = pytest.importorskip("pwd")
    monkeypatch.delenv("BLASLOG_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("HOME", raising=False)

    def nobody(uid: int) -> object:
        raise KeyError(uid)

    monkeypatch.setattr(pwd, "getpwuid", nobody)
    assert _grammars.cache_folder() is None
    _grammars.load_grammar.cache_clear()
    assert _grammars.load_grammar("cublaslt.lark").parse(LINE)
    _grammars.load_grammar.cache_clear()


def test_a_relative_xdg_cache_home_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BLASLOG_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert _grammars.cache_folder() == tmp_path / ".cache" / "blaslog"


def test_every_shipped_grammar_comes_back_from_the_cache_as_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each dialect's parser read back from its saved tables parses the bundled logs exactly as the one built."""
    from blaslog.formats import format_classes

    rules = sorted({(fmt.grammar, fmt.start_rule) for fmt in format_classes() if getattr(fmt, "grammar", None)})
    assert len(rules) >= 5
    _fresh(monkeypatch, "0")
    built = {rule: _grammars.load_grammar(*rule) for rule in rules}
    _fresh(monkeypatch, tmp_path)
    for rule in rules:
        _grammars.load_grammar(*rule)
    assert len(_saved(tmp_path)) == len(rules)
    _fresh(monkeypatch, tmp_path)
    lines = [
        line
        for log in sorted((ROOT / "fixtures" / "generated").rglob("*.log"))
        for line in log.read_text(errors="replace").splitlines()[:300]
    ]
    for rule in rules:
        loaded = _grammars.load_grammar(*rule)
        assert loaded is not built[rule]
        for line in lines:
            assert _outcome(loaded, line) == _outcome(built[rule], line)


def _outcome(parser: object, line: str) -> object:
    try:
        return parser.parse(line)  # type: ignore[attr-defined]
    except Exception as exc:
        return type(exc).__name__


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX permissions")
def test_a_folder_others_can_write_to_is_no_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    _fresh(monkeypatch, shared)
    assert _grammars.cache_folder() is None
    assert _grammars.load_grammar("cublaslt.lark").parse(LINE)
    assert not _saved(shared)


def test_a_broken_file_is_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fresh(monkeypatch, tmp_path)
    _grammars.load_grammar("cublaslt.lark")
    (saved,) = _saved(tmp_path)
    saved.write_bytes(saved.read_bytes()[:100])  # cut short, as a killed writer would leave it without the rename
    _fresh(monkeypatch, tmp_path)
    assert _grammars.load_grammar("cublaslt.lark").parse(LINE)
    assert len(saved.read_bytes()) > 100


@pytest.mark.parametrize("off", ["", "0", "off"])
def test_the_cache_can_be_switched_off(off: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BLASLOG_CACHE_DIR", off)
    assert _grammars.cache_folder() is None


def test_an_unwritable_cache_costs_only_the_build(tmp_path: Path) -> None:
    """A cache folder that cannot be made (a file is in its way) leaves the command's output as it was."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    env = {**os.environ, "BLASLOG_CACHE_DIR": str(blocker / "cache")}
    run = [sys.executable, "-m", "blaslog", "parse", "-f", "jsonl", str(LOG)]
    without = subprocess.run(run, env=env, capture_output=True, text=True, check=False)
    env["BLASLOG_CACHE_DIR"] = str(tmp_path / "ok")
    first = subprocess.run(run, env=env, capture_output=True, text=True, check=False)
    second = subprocess.run(run, env=env, capture_output=True, text=True, check=False)
    assert without.returncode == first.returncode == second.returncode == 0
    assert without.stdout == first.stdout == second.stdout
    assert without.stdout.count("\n") == 79  # 78 GEMMs and the summary line
    assert without.stderr == first.stderr == second.stderr
    assert _saved(tmp_path / "ok")
