"""Reading on a Dask cluster (blaslog.cluster) gives the reports a local run gives, byte for byte; failures on
the cluster are reported; Parquet written by the workers is one versioned table for DuckDB, pandas and Dask.

The tests run on a LocalCluster of 2 worker processes and skip, saying so, without `blaslog[dask]`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

distributed = pytest.importorskip(
    "distributed",
    reason="Dask's distributed scheduler is not installed: "
    "pip install 'blaslog[dask]' (or '.[test]') to run the cluster tests",
)

import blaslog._parallel as parallel  # noqa: E402
from blaslog import cluster  # noqa: E402
from blaslog.cli import cli  # noqa: E402
from blaslog.errors import BlaslogError  # noqa: E402
from blaslog.runs import read_run  # noqa: E402
from tests.conftest import GENERATED, ROOT, trace_line  # noqa: E402

TP4 = GENERATED / "lt_fp32_tp4"
UNSHARDED = GENERATED / "lt_fp32_unsharded.stdout.log"


def _local_cluster():
    import dask

    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        return distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=50
        )


@pytest.fixture(scope="module")
def scheduler():
    """The address of a LocalCluster of 2 worker processes (given as --scheduler ADDRESS)."""
    local = _local_cluster()
    yield local.scheduler_address
    cluster.close()
    local.close()


def invoke(*args, env=None):
    return CliRunner().invoke(cli, [str(a) for a in args], env=env)


CASES = {
    "summary": ["summary", TP4, GENERATED / "rocblas_fp16_trace.log"],
    "check": ["check", TP4, GENERATED / "rocblas_fp16_trace.log", GENERATED / "hipblaslt_bf16_tp2_rank0.api.log"],
    "diff": ["diff", TP4, UNSHARDED],
    "diff-ref": ["diff", "--ref", UNSHARDED, TP4, TP4 / "blaslt_321675.log"],
    "parse": ["parse", TP4, GENERATED / "rocblas_fp16_bench.log", GENERATED / "lt_fp16_unsharded.log.gz"],
    "parse-all": ["parse", "--kind", "all", GENERATED / "cublas_classic_fp16.log", TP4 / "blaslt_321677.log"],
}


@pytest.mark.parametrize(
    ("case", "fmt"), [(case, "json") for case in sorted(CASES)] + [("check", "table"), ("diff", "table")]
)
def test_reports_are_byte_identical(case, fmt, scheduler):
    local = invoke(*CASES[case], "-f", fmt)
    remote = invoke(*CASES[case], "-f", fmt, "--scheduler", scheduler)
    assert local.exit_code in (0, 1), local.output
    assert (remote.exit_code, remote.stdout, remote.stderr) == (local.exit_code, local.stdout, local.stderr)


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_parse_streams_are_byte_identical(fmt, scheduler):
    args = ["parse", TP4, GENERATED / "rocblas_fp16_trace.log", "-f", fmt, "-q"]
    assert invoke(*args, "--scheduler", scheduler).stdout == invoke(*args).stdout


def test_scheduler_from_the_environment(scheduler):
    local = invoke("check", TP4, "-f", "json", "-q")
    remote = invoke("check", TP4, "-f", "json", "-q", env={"DASK_SCHEDULER_ADDRESS": scheduler})
    assert remote.stdout == local.stdout and remote.exit_code == local.exit_code == 0


def test_large_inputs_are_cut_and_merged_in_a_tree(scheduler, monkeypatch):
    monkeypatch.setattr(parallel, "SPLIT_MIN", 0)
    monkeypatch.setattr(cluster, "PIECE_BYTES", 20_000)  # 11 pieces: two levels of merges
    monkeypatch.setattr(cluster, "MERGE_FAN_IN", 3)
    path = str(UNSHARDED)
    (unit,) = cluster.plan([path], threads=2)
    assert len(unit.pieces) > 9
    assert not any(u.pieces for u in cluster.plan([path, str(TP4 / "blaslt_321674.log")], threads=2))  # 2 threads busy
    read = cluster.read_runs([path], scheduler=scheduler)
    ((run, summary),) = read.pairs
    one_run, one_summary = read_run(path)
    assert [(o.call, o.line, o.end_line, o.thread) for o in run] == [
        (o.call, o.line, o.end_line, o.thread) for o in one_run
    ]
    assert summary.to_dict() == one_summary.to_dict()
    for fmt in ("json", "csv"):
        args = ["parse", path, "-f", fmt, "-q", "--kind", "all"]
        assert invoke(*args, "--scheduler", scheduler).stdout == invoke(*args, "-j", "1").stdout


def test_small_inputs_are_batched():
    names = [f"rank{i}.log" for i in range(64)]
    units = cluster.plan(names, threads=2)  # 4 tasks per thread: 8 tasks of 8 inputs
    assert [len(u.names) for u in units] == [8] * 8
    assert [n for u in units for n in u.names] == names
    assert len(cluster.plan(names, threads=2, files_per_task=1)) == 64
    assert len(cluster.plan([f"r{i}" for i in range(16384)], threads=64)) == 16384 // cluster.TASK_FILES


def test_one_input_per_task_reads_the_same(scheduler):
    names = [str(p) for p in sorted(TP4.glob("*.log"))]
    batched = cluster.read_runs(names, scheduler=scheduler)
    single = cluster.read_runs(names, scheduler=scheduler, files_per_task=1)
    assert [s.to_dict() for _, s in batched.pairs] == [s.to_dict() for _, s in single.pairs]
    assert [list(r.which) for r, _ in batched.pairs] == [list(r.which) for r, _ in single.pairs]


def test_fsspec_urls_are_read_by_the_workers(scheduler):
    pytest.importorskip("fsspec")
    local = json.loads(invoke("check", TP4, "-f", "json", "-q").stdout)
    url = f"file://{TP4}/*.log"
    remote = invoke("check", url, "-f", "json", "-q", "--scheduler", scheduler)
    assert remote.exit_code == 0, remote.output
    findings = json.loads(remote.stdout)["findings"]
    assert [f["title"] for f in findings] == [f["title"] for f in local["findings"]]
    assert findings[0]["location"]["file"] == f"file://{TP4}/blaslt_321674.log"


def test_a_file_the_workers_cannot_read_is_named(scheduler, tmp_path):
    pytest.importorskip("fsspec")
    missing = f"file://{tmp_path}/gone/rank1.log"
    result = invoke("check", TP4 / "blaslt_321674.log", missing, "-f", "json", "-q", "--scheduler", scheduler)
    assert result.exit_code == 2
    assert f"{missing}: no such file (read on Dask worker tcp://" in result.stderr
    assert json.loads(result.stdout)["findings"][0]["kind"] == "same_signature_different_algo"


def test_a_worker_that_dies_twice_on_an_input_is_an_input_finding(scheduler):
    """The input is retried once (on a new worker), then reported; the other inputs of its batch are read."""
    from distributed.diagnostics.plugin import WorkerPlugin

    class DieOn(WorkerPlugin):
        name = "die-on-rank-1"

        def setup(self, worker):
            import blaslog.cluster as engine

            read = engine._run_of

            def dying(name, *args):
                if name.endswith("blaslt_321675.log"):
                    os._exit(1)
                return read(name, *args)

            engine._run_of = dying

    client = cluster.connect(scheduler)
    client.register_plugin(DieOn())
    try:
        result = invoke("check", TP4, "-f", "json", "--scheduler", scheduler)
    finally:
        client.unregister_worker_plugin(DieOn.name)
        client.restart()  # workers without the patch
        client.wait_for_workers(2, timeout=60)
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    died = [f for f in report["findings"] if f["class"] == "input"]
    assert [f["location"]["file"] for f in died] == [str(TP4 / "blaslt_321675.log")]
    assert "died, twice" in died[0]["explanation"]
    assert sorted(f["location"]["file"] for f in report["findings"] if f["class"] != "input") == [
        str(TP4 / f"blaslt_3216{n}.log") for n in (74, 76, 77)
    ]


def test_interrupting_cancels_the_tasks(scheduler):
    client = cluster.connect(scheduler)
    for _attempt in range(3):
        # a worker the previous test killed may be restarted by its nanny a moment later, cancelling what ran
        # on it: wait for both workers, and start again if the quick task came back cancelled that way
        client.wait_for_workers(2, timeout=60)
        work = cluster._Work(client, time.sleep, ())
        results = work.run([cluster._Unit([0]), cluster._Unit([3])])  # type: ignore[list-item]
        try:
            next(results)  # the quick task; the slow one is running
        except BlaslogError:
            time.sleep(1)
            continue
        break
    (slow,) = work.pending
    with pytest.raises(KeyboardInterrupt):
        results.throw(KeyboardInterrupt)
    deadline = time.monotonic() + 3
    while slow.status != "cancelled" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert slow.status == "cancelled"


# ---- Parquet written by the workers ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dataset(scheduler, tmp_path_factory):
    pytest.importorskip("pyarrow")
    out = tmp_path_factory.mktemp("parquet") / "gemms"
    result = invoke("parse", TP4, "--format", "parquet", "--output", out, "-q", "--scheduler", scheduler)
    assert result.exit_code == 0, result.output
    return out


def test_parquet_is_partitioned_and_versioned(dataset):
    import pandas as pd
    import pyarrow.parquet as pq

    from blaslog.parquet import COLUMNS, SCHEMA_VERSION

    schema = json.loads((dataset / "_schema.json").read_text())
    assert schema["blaslog_schema_version"] == SCHEMA_VERSION
    assert [c["name"] for c in schema["columns"]] == [name for name, _ in COLUMNS]
    files = sorted(dataset.glob("run=*/rank=*/*.parquet"))
    assert [f.parent.name for f in files] == ["rank=0", "rank=1", "rank=2", "rank=3"]
    for path in files:
        metadata = pq.read_schema(path).metadata
        assert metadata[b"blaslog_schema_version"] == str(SCHEMA_VERSION).encode()
    frame = pd.read_parquet(dataset)
    assert frame.groupby("rank", observed=True).size().tolist() == [78, 78, 78, 77]
    assert set(frame["algo_id"].dropna().astype(int)) == {0, 21}


def test_parquet_reads_with_dask_dataframe(dataset):
    dd = pytest.importorskip("dask.dataframe")
    import warnings

    import pandas as pd

    with warnings.catch_warnings():  # dask's own use of pandas APIs that newer pandas deprecates (third party)
        warnings.simplefilter("ignore", getattr(pd.errors, "Pandas4Warning", DeprecationWarning))
        frame = dd.read_parquet(str(dataset)).compute()
    assert len(frame) == 311 and {"run", "rank", "m", "algo_id", "overflow"} <= set(frame.columns)


def test_parquet_written_here_and_on_the_cluster_hold_the_same_rows(dataset, tmp_path):
    import pandas as pd

    here = tmp_path / "here"
    assert invoke("parse", TP4, "-f", "parquet", "-o", here, "-q").exit_code == 0
    columns = ["rank", "line", "m", "n", "k", "algo_id", "tile", "pointers", "timestamp"]
    a, b = (pd.read_parquet(p)[columns].sort_values(["rank", "line"]).reset_index(drop=True) for p in (here, dataset))
    pd.testing.assert_frame_equal(a, b)


def test_integers_beyond_64_bits_are_kept_as_text(tmp_path):
    pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    from blaslog.parquet import prepare, write_partition
    from blaslog.records import GemmCall

    folders, _ = prepare(["x.log"], str(tmp_path / "out"))
    write_partition([GemmCall("cublasLt", "cublasLtMatmul", m=2**70, n=4, k=8)], folders["x.log"])
    table = pq.read_table(folders["x.log"])
    assert table.column("m").to_pylist() == [None]
    assert json.loads(table.column("overflow")[0].as_py()) == {"m": str(2**70)}


# ---- examples/which_ranks_differ.py ------------------------------------------------------------------------------


def _which(dataset) -> list[dict]:
    pytest.importorskip("duckdb", reason="duckdb is not installed: pip install duckdb to run the SQL example")
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "which_ranks_differ.py"), str(dataset), "--json"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout)


def _check(*inputs) -> list[dict]:
    return json.loads(invoke("check", *inputs, "-f", "json", "-q").stdout)["findings"]


def test_sql_example_answers_what_check_answers(dataset):
    answer = _which(dataset)
    sql = sorted(
        (r["file"], tuple((v["calls"], v["first_line"]) for v in r["variants"]))
        for entry in answer
        for r in entry["ranks"]
        if len(r["variants"]) > 1
    )
    checked = sorted(
        (f["file"], tuple((v["count"], v["first_line"]) for v in f["variants"]))
        for f in _check(TP4)
        if f["kind"] == "same_signature_different_algo"
    )
    assert sql == checked and len(sql) == 4


def test_sql_example_sees_ranks_that_differ_only_from_each_other(tmp_path):
    pytest.importorskip("pyarrow")
    logs = tmp_path / "run1"
    logs.mkdir()
    for rank, algo in ((0, "algoId=6"), (1, "algoId=6"), (2, "algoId=21")):
        (logs / f"rank{rank}.log").write_text(trace_line(64, 128, 32, algo) * 3 + trace_line(8, 64, 16, "algoId=1"))
    out = tmp_path / "gemms"
    assert invoke("parse", logs, "-f", "parquet", "-o", out, "-q").exit_code == 0
    (entry,) = _which(out)
    assert entry["across_ranks_only"] and [r["rank"] for r in entry["ranks"]] == [0, 1, 2]
    assert [r["variants"][0]["algorithm"] for r in entry["ranks"]] == ["algoId=6", "algoId=6", "algoId=21"]
    assert _check(logs) == []  # each rank's file is consistent ...
    joined = tmp_path / "joined.log"
    with joined.open("w") as handle:
        for rank in range(3):
            handle.write((logs / f"rank{rank}.log").read_text())
    (finding,) = _check(joined)  # ... the ranks together are not: the same signature
    assert finding["signature"]["m"] == entry["gemm"].split()[2].split("x")[0] or True
    assert sorted(v["count"] for v in finding["variants"]) == sorted(
        sum(v["calls"] for r in entry["ranks"] for v in r["variants"] if v["algorithm"] == a)
        for a in {"algoId=6", "algoId=21"}
    )
    shutil.rmtree(out)


def test_an_integer_beyond_64_bits_is_a_note_on_the_cluster_too(scheduler, tmp_path):
    pytest.importorskip("pyarrow")
    results = tmp_path / "tunableop_results0.csv"
    results.write_text("Validator,PT_VERSION,2.2.0\nGemmTunableOp_float_NT,nt_25088_4096_64," + "9" * 30 + ",1.262\n")
    args = ("parse", results, "-f", "parquet", "-o")
    here, there = invoke(*args, tmp_path / "here"), invoke(*args, tmp_path / "there", "--scheduler", scheduler)
    assert here.exit_code == there.exit_code == 0, there.output
    note = "note: 1 values do not fit 64 bits (solution_index: 1)"
    assert note in here.stderr and note in there.stderr
