"""Records as Parquet, partitioned by run and rank, for DuckDB, Spark or pandas (`pip install 'blaslog[parquet]'`).

    blaslog parse 'logs/tp4/*.log' 'logs/tp1/*.log' --format parquet --output gemms/

writes ``gemms/run=<run>/rank=<rank>/part-00000.parquet``: the run is the input's folder name (or --run),
the rank the input's place among that run's inputs in name order. Records are written in batches, so
memory stays bounded whatever the size of the logs.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from blaslog.errors import BlaslogError
from blaslog.records import FileSummary, GemmCall

BATCH = 100_000


def partitions(names: Sequence[str], run: str | None = None) -> list[tuple[str, str, int]]:
    """(input, run, rank) for each input."""
    by_run: dict[str, list[str]] = {}
    for name in names:
        by_run.setdefault(run or Path(name).resolve().parent.name or "run", []).append(name)
    out = []
    for run_name, files in by_run.items():
        out.extend((name, run_name, rank) for rank, name in enumerate(sorted(files)))
    return out


def write_parquet(names: Sequence[str], out_dir: str, records_of: Any, *, run: str | None = None) -> list[FileSummary]:
    """Write the GEMM records of each input (``records_of(name, summaries)`` yields them) under `out_dir`."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise BlaslogError("--format parquet needs pyarrow: pip install 'blaslog[parquet]'") from None
    from blaslog.frame import to_frame

    summaries: list[FileSummary] = []
    root = Path(out_dir)
    for name, run_name, rank in partitions(names, run):
        folder = root / f"run={_safe(run_name)}" / f"rank={rank}"
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("part-*.parquet"):
            old.unlink()
        part = 0
        for batch in _batches(r for r in records_of(name, summaries) if isinstance(r, GemmCall)):
            frame = to_frame(batch)
            for column in ("extra", "pointers"):
                frame[column] = [json.dumps(dict(v)) for v in frame[column]]
            pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), folder / f"part-{part:05d}.parquet")
            part += 1
    return summaries


def _batches(records: Iterable[GemmCall]) -> Iterable[list[GemmCall]]:
    batch: list[GemmCall] = []
    for record in records:
        batch.append(record)
        if len(batch) >= BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def _safe(name: str) -> str:
    """A partition value that cannot climb out of the output folder."""
    cleaned = "".join(c if c.isalnum() or c in "-_." else "_" for c in name).strip(".")
    return cleaned or "run"
