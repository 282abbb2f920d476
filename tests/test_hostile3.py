"""Hostile input, round 3 (issue 36): record never deletes what it did not write, bounded decompression, damage
after a compressed stream, signals and concurrency, bounded cost, inputs read once, no internal errors, a path
is one path in the API, HTML escaping. Large inputs are generated here, never committed."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from blaslog.api import _parse as api_parse
from blaslog.errors import InputError
from tests.conftest import ROOT, SEED

HERE = ROOT / "tests" / "record"
WORKLOAD = [sys.executable, str(HERE / "workload.py")]
POSIX = pytest.mark.skipif(os.name != "posix", reason="POSIX only")


def _blaslog(*args: str | bytes, **kwargs) -> subprocess.CompletedProcess[bytes]:
    kwargs.setdefault("timeout", 120)
    return subprocess.run([sys.executable, "-m", "blaslog", *args], capture_output=True, check=False, **kwargs)


def _record_env() -> dict[str, str]:
    return {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CUBLAS", "ROCBLAS_", "HIPBLASLT_", "NVIDIA_TF32", "BLASLOG_", "PYTHONPATH", "RANK"))
    }


# ---- 1. record --force removes only what blaslog wrote ------------------------------------------------------------


def _blaslog_run(folder: Path) -> None:
    folder.mkdir(parents=True)
    (folder / "run.json").write_text(
        json.dumps({"kind": "blaslog-run", "end": "x", "files": [{"file": "rank0.cublaslt.log.gz"}]})
    )
    (folder / "rank0.cublaslt.log.gz").write_bytes(b"")


@POSIX
@pytest.mark.parametrize("manifest", ['{"tool": "other", "files": ["src/train.py"]}', "not json", "[]"])
def test_force_keeps_a_folder_whose_run_json_is_not_blaslogs(tmp_path, manifest):
    out = tmp_path / "project"
    (out / "src").mkdir(parents=True)
    (out / "src" / "train.py").write_text("print('mine')\n")
    (out / "run.json").write_text(manifest)
    done = _blaslog("record", "--out", str(out), "--force", "--", "true", env=_record_env())
    assert done.returncode == 2 and b"not a run folder blaslog recorded" in done.stderr, done.stderr
    assert (out / "src" / "train.py").read_text() == "print('mine')\n" and (out / "run.json").read_text() == manifest


@POSIX
def test_force_keeps_a_run_folder_that_holds_other_files(tmp_path):
    out = tmp_path / "run"
    _blaslog_run(out)
    (out / "src").mkdir()
    (out / "src" / "train.py").write_text("x")
    (out / "notes.txt").write_text("y")
    done = _blaslog("record", "--out", str(out), "--force", "--", "true", env=_record_env())
    assert done.returncode == 2, done.stderr
    assert (
        b"holds files blaslog did not write (notes.txt, src)" in done.stderr and b"nothing was removed" in done.stderr
    )
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt", "rank0.cublaslt.log.gz", "run.json", "src"]


@POSIX
def test_force_replaces_a_run_with_its_own_files_only(tmp_path):
    out = tmp_path / "run"
    _blaslog_run(out)
    (out / ".blaslog" / "proc").mkdir(parents=True)
    (out / "caps.json").write_text("{}")
    done = _blaslog("record", "--out", str(out), "--force", "--", *WORKLOAD, env=_record_env())
    assert done.returncode == 0, done.stderr
    assert json.loads((out / "run.json").read_text())["command"][-1].endswith("workload.py")
    assert not (out / "caps.json").exists()


@POSIX
def test_force_through_links_and_on_a_read_only_file_system_is_a_message(tmp_path, monkeypatch):
    from blaslog.record import prepare_folder

    run = tmp_path / "run"
    _blaslog_run(run)
    (tmp_path / "latest").symlink_to(run)
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    for link, message in (("latest", b"does not replace a run through a link"), ("dangling", b"does not exist")):
        done = _blaslog("record", "--out", str(tmp_path / link), "--force", "--", "true", env=_record_env())
        assert done.returncode == 2 and message in done.stderr and b"internal error" not in done.stderr, done.stderr
    assert (run / "run.json").exists()

    def read_only(*args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(Path, "unlink", read_only)
    monkeypatch.setattr(Path, "mkdir", read_only)
    with pytest.raises(InputError, match="Read-only file system"):
        prepare_folder(run, force=True)
    with pytest.raises(InputError, match="Read-only file system"):
        prepare_folder(tmp_path / "new", force=False)


# ---- 4. record: concurrent runs, processes that outlive the command, a full disk -----------------------------------


def test_two_runs_started_in_one_second_get_two_folders(tmp_path, monkeypatch):
    from blaslog import record as recording

    monkeypatch.setattr(recording, "default_out", lambda: str(tmp_path / "runs" / "20260606-153142"))
    first, second = recording.prepare_folder(None, False), recording.prepare_folder(None, False)
    assert first.name == "20260606-153142" and second.name == "20260606-153142-2"


@POSIX
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the run's processes are found in /proc")
def test_a_child_that_outlives_the_command_is_waited_for(tmp_path):
    out = tmp_path / "run"
    script = f"(sleep 1; exec {' '.join(WORKLOAD)} --steps 3) & exit 5"
    done = _blaslog("record", "--out", str(out), "--no-compress", "--", "sh", "-c", script, env=_record_env())
    assert done.returncode == 5, done.stderr
    manifest = json.loads((out / "run.json").read_text())
    assert [f["file"] for f in manifest["files"]] == ["rank0.cublaslt.log"] and "survivors" not in manifest
    assert (out / "rank0.cublaslt.log").read_text().count("[Trace]") == 6


@POSIX
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the run's processes are found in /proc")
def test_a_child_still_running_after_the_grace_is_a_note(tmp_path):
    from blaslog.record import record

    script = f"(sleep 3; exec {' '.join(WORKLOAD)}) & exit 0"
    result = record(["sh", "-c", script], out=tmp_path / "run", environ=_record_env(), grace=0.5)
    assert result.manifest["survivors"] and any("still running" in note for note in result.notes)


@POSIX
def test_a_full_disk_while_compressing_keeps_the_commands_status(tmp_path, monkeypatch):
    from blaslog import record as recording

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(recording.shutil, "copyfileobj", full)
    result = recording.record([*WORKLOAD, "--exit", "3"], out=tmp_path / "run", environ=_record_env())
    assert result.exit_status == 3
    assert any("not compressed, left plain: rank0.cublaslt.log (No space left on device)" in n for n in result.notes)
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == ["rank0.cublaslt.log", "run.json"]
    assert json.loads((tmp_path / "run" / "run.json").read_text())["ranks"]["0"]["files"] == ["rank0.cublaslt.log"]

    def no_manifest(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(recording, "_name_logs", no_manifest)
    result = recording.record([*WORKLOAD, "--exit", "4"], out=tmp_path / "again", environ=_record_env())
    assert result.exit_status == 4 and "could not be completed (No space left on device)" in result.notes[-1]


# ---- 7. ranks: what the writer writes, every reader reads --------------------------------------------------------


@pytest.mark.parametrize("value,rank", [("3", 3), ("²", None), ("1" * 30, None), (" 7 ", 7), ("1048576", None)])
def test_launcher_ranks_are_ranks_every_reader_accepts(value, rank):
    from blaslog._hook import sitecustomize as hook

    # the hook's and the /proc watcher's call (the watcher thread died on `²`: isdigit() but not int())
    assert hook.rank_from_environ({"RANK": value}) == ((rank, "RANK") if rank is not None else (None, None))


@POSIX
@pytest.mark.parametrize("value", ["1" * 30, "²"])
def test_a_recorded_run_with_a_hostile_rank_is_read(tmp_path, value):
    out = tmp_path / "run"
    done = _blaslog("record", "--out", str(out), "--", *WORKLOAD, env={**_record_env(), "RANK": value})
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
    read = _blaslog("summary", str(out))
    assert read.returncode == 0, read.stderr


# ---- 2. and 3. compressed input: bounded output per read, damage after the data -------------------------------------

LOG = ROOT / "fixtures" / "generated" / "lt_fp16_tp4_rank0.log"


def _bomb(kind: str, megabytes: int) -> bytes:
    """`megabytes` of zeros, compressed (a small file that makes a lot)."""
    import bz2
    import lzma

    zeros = b"\0" * (1 << 20)
    if kind == "zstd":
        packer = pytest.importorskip("zstandard").ZstdCompressor().compressobj()
    else:
        packer = bz2.BZ2Compressor() if kind == "bzip2" else lzma.LZMACompressor()
    return b"".join(packer.compress(zeros) for _ in range(megabytes)) + packer.flush()


@pytest.mark.parametrize("kind", ["zstd", "xz", "bzip2"])
def test_every_read_of_a_compressed_stream_is_bounded(tmp_path, kind):
    from blaslog.inputs import BLOCK, Reader

    path = tmp_path / "bomb"
    path.write_bytes(_bomb(kind, 256))
    stream, closers = Reader(str(path))._open()
    try:
        sizes = [len(stream.read(BLOCK)) for _ in range(50)]
    finally:
        for closer in closers:
            closer.close()
    assert max(sizes) <= BLOCK + (8 << 20) and sum(sizes) >= 50 * BLOCK


def test_a_zstd_bomb_is_read_in_bounded_memory(tmp_path):
    path = tmp_path / "bomb.zst"
    path.write_bytes(_bomb("zstd", 1024))
    done, peak = _peak_kb("parse", str(path), "-j", "1")
    assert done.returncode == 2 and b"too long for a BLAS log line" in done.stderr, done.stderr
    assert b"internal error" not in done.stderr
    assert peak < 300_000  # kB: 1 GB made, 60 MB held


def _compressed(kind: str, data: bytes) -> bytes:
    import bz2
    import gzip
    import lzma

    if kind == "zstd":
        return pytest.importorskip("zstandard").ZstdCompressor().compress(data)
    return {"gzip": gzip.compress, "xz": lzma.compress, "bzip2": bz2.compress}[kind](data)


@pytest.mark.parametrize("kind", ["gzip", "zstd", "xz", "bzip2"])
@pytest.mark.parametrize("tail", [b"garbage after the stream", b"\0" * 4096, b"\x28\xb5\x2f\xfd\x00"])
def test_bytes_after_a_compressed_stream_keep_every_record_before_them(tmp_path, kind, tail):
    from click.testing import CliRunner

    from blaslog.cli import cli

    path = tmp_path / "run.log"
    path.write_bytes(_compressed(kind, LOG.read_bytes()) + tail)
    result = CliRunner().invoke(cli, ["summary", str(path), "-f", "json", "-q"])
    if kind == "gzip" and not tail.strip(b"\0"):
        assert result.exit_code == 0  # gzip's format allows zero padding
    else:
        assert result.exit_code == 2 and f"{path}: the input ends early (" in result.stderr, result.stderr
    assert json.loads(result.stdout)["overview"]["gemm_calls"] == 78


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_utf16_cut_after_an_odd_byte_keeps_the_records_before(tmp_path, encoding):
    from click.testing import CliRunner

    from blaslog.cli import cli

    path = tmp_path / "run.log"
    path.write_bytes(LOG.read_text().encode(encoding)[:-1])
    result = CliRunner().invoke(cli, ["summary", str(path), "-f", "json", "-q"])
    assert result.exit_code == 2 and "UTF-16 text cut after an odd byte" in result.stderr, result.stderr
    assert json.loads(result.stdout)["overview"]["gemm_calls"] == 78


# ---- 4. signals: SIGTERM ends workers and removes temporary files -----------------------------------------------


@POSIX
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="children are found in /proc")
def test_sigterm_to_a_parallel_parse_leaves_no_worker_and_no_file(tmp_path):
    import signal
    import time

    log = tmp_path / "big.log"  # every line another GEMM: some seconds of work for two processes
    generate = [sys.executable, str(ROOT / "bench" / "generate.py"), "--size", "70", "--kind", "distinct"]
    subprocess.run([*generate, "--out", str(log)], check=True, capture_output=True)
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    process = subprocess.Popen(
        [sys.executable, "-m", "blaslog", "parse", "-f", "jsonl", "-j", "2", "-o", str(tmp_path / "out"), str(log)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    children: list[int] = []
    while not children and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
        children = [int(p) for p in Path(f"/proc/{process.pid}/task/{process.pid}/children").read_text().split()]
    assert children, "no worker was started"
    time.sleep(1)  # the pieces are being read
    process.send_signal(signal.SIGTERM)
    try:
        status = process.wait(timeout=30)
    finally:
        if process.poll() is None:  # hung: do not leave it to the next test
            process.kill()
            process.wait()
    assert status == 143
    time.sleep(0.5)
    alive = [pid for pid in children if Path(f"/proc/{pid}").exists() and b"Z" not in _state(pid)]
    for pid in alive:
        os.kill(pid, signal.SIGKILL)
    assert not alive
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.log"]


def _state(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/stat").read_bytes().rpartition(b")")[2][:3]
    except OSError:
        return b"Z"


@pytest.mark.parametrize("address", ["tcp://[bad", "tcp://host:port"])
def test_a_malformed_scheduler_address_is_an_error_without_a_hang(address):
    pytest.importorskip("distributed")
    import time

    started = time.monotonic()
    done = _blaslog("summary", str(SEED / "sharded.log"), "--scheduler", address, timeout=50)
    assert done.returncode == 2 and b"cannot reach the Dask scheduler" in done.stderr
    assert b"Traceback" not in done.stderr and time.monotonic() - started < 30  # 60 s and a traceback before


@POSIX
@pytest.mark.parametrize("how", ["--summary", "GITHUB_STEP_SUMMARY"])
def test_a_summary_into_a_pipe_nobody_reads_is_a_warning(tmp_path, how):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    options = ["--summary", str(fifo)] if how == "--summary" else ["-f", "github"]
    env = {**os.environ, "GITHUB_STEP_SUMMARY": str(fifo)}
    done = _blaslog("check", str(SEED / "sharded.log"), *options, env=env, timeout=30)  # blocked for ever before
    assert done.returncode == 1 and b"cannot append the summary to" in done.stderr
    assert b"(a pipe that nobody reads)" in done.stderr


# ---- 5. bounded cost: the parse table streams, a line's words are bounded -----------------------------------------


def _peak_kb(*args: str) -> tuple[subprocess.CompletedProcess[bytes], int]:
    """`blaslog ARGS` run in a process of its own, and that process's peak memory (kB; Linux)."""
    if not os.path.exists("/proc/self/status"):
        pytest.skip("peak memory is read from /proc/self/status")
    # VmHWM, the peak of this process's memory: ru_maxrss keeps the forking test session's across exec
    code = (
        "import atexit, re, sys\n"
        "peak = lambda: re.search(r'VmHWM:\\s*(\\d+)', open('/proc/self/status').read())[1]\n"
        "atexit.register(lambda: sys.stderr.write('PEAK %s\\n' % peak()))\n"
        "from blaslog.cli import main\n"
        f"sys.argv = ['blaslog', *{list(args)!r}]\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=300, check=False)
    return done, int(done.stderr.rsplit(b"PEAK ", 1)[1])


def test_the_parse_table_is_streamed_in_bounded_memory(tmp_path):
    from blaslog.reporters.table import TableReporter

    log = tmp_path / "distinct.log"  # every line another GEMM: 34k rows
    generate = [sys.executable, str(ROOT / "bench" / "generate.py"), "--size", "20", "--kind", "distinct"]
    subprocess.run([*generate, "--out", str(log)], check=True, capture_output=True)
    (table, table_kb), (jsonl, jsonl_kb) = (
        _peak_kb("parse", str(log), "-j", "1", "-q", *fmt) for fmt in ([], ["-f", "jsonl"])
    )
    assert table.returncode == jsonl.returncode == 0, table.stderr[-2000:]
    assert table_kb < jsonl_kb + 60_000  # the rows held made 190 MB here, where jsonl takes 60 MB
    assert table.stdout.decode() == TableReporter().render(api_parse.parse_report([str(log)]))  # the library's text
    assert len(table.stdout.splitlines()) == len(jsonl.stdout.splitlines()) + 1  # header, rule; jsonl's summary


def test_the_streamed_table_is_the_held_one_for_every_kind_and_caps(tmp_path):
    from click.testing import CliRunner

    from blaslog.cli import cli
    from blaslog.reporters.table import TableReporter

    caps = str(ROOT / "fixtures" / "generated" / "caps.json")
    for kind in ("gemm", "all"):
        for options in ([], ["--caps", caps]):
            result = CliRunner().invoke(cli, ["parse", str(LOG), "--kind", kind, *options])
            report = api_parse.parse_report([str(LOG)], kind=kind, caps=caps if options else None)
            assert result.exit_code == 0 and result.stdout == TableReporter().render(report), (kind, options)


@pytest.mark.parametrize(
    "line",
    ["a " * 300_000, "rocblas-bench -f gemm " + "-a " * 300_000, "[cublasLt][1][Api][x] " + "a " * 3000],
    ids=["words", "rocblas-bench", "cublaslt"],  # a test id is in the environment of the processes it starts
)
def test_a_line_of_many_words_is_skipped_in_bounded_time(tmp_path, line):
    import time

    path = tmp_path / "words.log"
    path.write_text(line + "\n" + LOG.read_text())
    started = time.monotonic()
    done = _blaslog("parse", str(path), "-q", timeout=60)
    assert time.monotonic() - started < 20  # minutes for the rocblas-bench line before
    assert done.returncode == 0 and b"words (a BLAS log record has some hundred; at most 1024 are read)" in done.stderr


# ---- 6. inputs read once, and never written over ------------------------------------------------------------------


def test_a_glob_through_a_linked_folder_reads_each_log_once(tmp_path):
    from blaslog import api

    run = tmp_path / "runs" / "run7"
    run.mkdir(parents=True)
    for rank in (0, 1):
        (run / f"rank{rank}.log").write_bytes(LOG.read_bytes())
    (tmp_path / "runs" / "latest").symlink_to(run)
    names = api_parse.parse_inputs([str(tmp_path / "runs" / "**" / "*.log")], api.Options())[0]
    assert [Path(n).relative_to(tmp_path / "runs").as_posix() for n in names] == [
        "latest/rank0.log",
        "latest/rank1.log",
    ]
    report = api.summary([str(tmp_path / "runs" / "**" / "*.log")])
    assert report.document["overview"]["gemm_calls"] == 2 * 78


@POSIX
def test_the_file_standard_input_reads_is_not_written_over(tmp_path):
    log = tmp_path / "s.log"
    log.write_bytes(LOG.read_bytes())
    with open(log, "rb") as stdin:
        done = _blaslog("parse", "-", "-o", str(log), stdin=stdin)
    assert done.returncode == 2 and b"is the input - (standard input)" in done.stderr, done.stderr
    assert log.read_bytes() == LOG.read_bytes()


# ---- 7. no internal errors: file names, big integers, lone surrogates -----------------------------------------------


@POSIX
def test_a_non_utf8_file_name_in_sarif_and_parquet(tmp_path):
    pytest.importorskip("pyarrow")
    name = os.fsencode(tmp_path) + b"/r\xff.log"
    with open(name, "wb") as handle:
        handle.write((SEED / "sharded.log").read_bytes())  # one GEMM: a finding (nothing compared) names the file
    done = _blaslog("check", name, "-f", "sarif", "-q")
    assert done.returncode in (0, 1) and b"internal error" not in done.stderr, done.stderr
    assert b"r%FF.log" in done.stdout and json.loads(done.stdout)["runs"]
    done = _blaslog("parse", name, "-f", "parquet", "-o", str(tmp_path / "pq"), "-q")
    assert done.returncode == 0, done.stderr
    import pyarrow.parquet as pq

    table = pq.read_table(tmp_path / "pq")
    assert {f.endswith("/r\\xff.log") for f in table.column("file").to_pylist()} == {True}


def test_an_integer_beyond_64_bits_in_parquet_is_a_note(tmp_path):
    pytest.importorskip("pyarrow")
    results = tmp_path / "tunableop_results0.csv"
    results.write_text(
        "Validator,PT_VERSION,2.2.0\nGemmTunableOp_float_NT,nt_25088_4096_64,"
        + "9" * 30
        + ",1.262\nGemmTunableOp_float_NT,nt_4096_4096_64,1219,1.262\n"
    )
    done = _blaslog("parse", str(results), "-f", "parquet", "-o", str(tmp_path / "pq"))
    assert done.returncode == 0, done.stderr
    assert b"1 values do not fit 64 bits (solution_index: 1): null in their columns, and kept exactly" in done.stderr
    import pyarrow.parquet as pq

    rows = pq.read_table(tmp_path / "pq").to_pylist()
    assert sorted(json.loads(r["overflow"])["solution_index"] for r in rows if r["overflow"]) == ["9" * 30]


@pytest.mark.parametrize("text", ["abc\ud800def\n", "\udcff\udfff\n", "x\udc80\n"])
def test_parse_text_with_lone_surrogates_is_read_with_a_note(text):
    import blaslog

    result = blaslog.parse_text(text + LOG.read_text())
    assert len([r for r in result.records if type(r).__name__ == "GemmCall"]) == 78
    assert "invalid UTF-8" in result.files[0].problems[0].message


# ---- 8. a str or a PathLike is one path in the API -----------------------------------------------------------------


def test_a_path_given_as_a_string_or_pathlike_is_one_path(tmp_path, monkeypatch):
    from blaslog import api

    log = tmp_path / "run.log"
    log.write_bytes(LOG.read_bytes())
    monkeypatch.chdir(tmp_path / "..")  # a folder with other things in it, which a str taken apart would read
    for given in (str(log), log):
        assert api.summary(given).document["overview"]["gemm_calls"] == 78
        assert api.check(given).files[0].path == str(log)
        assert api_parse.parse_report(given).files[0].path == str(log)
        assert [f.path for f in api.read_run_files(given).files] == [str(log)]
        assert api_parse.parse_inputs(given) == ([str(log)], [])
        assert len(list(api_parse.records(given))) == 78
    assert api.summary([log, str(log)]).files[0].path == str(log)
    with pytest.raises(InputError, match="a path is a str or a PathLike"):
        api.summary(b"run.log")  # type: ignore[arg-type]
