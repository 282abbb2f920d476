"""A LocalCluster of 2 workers against the local `-j 2` path, on 64 per-rank cuBLASLt level-5 logs.

    python bench/cluster.py                  # 64 logs of 3 MB (written into bench/data/ranks64/ the first time)
    python bench/cluster.py --mb 1 --ranks 16              # quicker
    python bench/cluster.py --tagged --repeat 3             # lines tagged [rankN]: (torchrun), median of 3

Reports, for `blaslog summary` over the logs (the library call, in this process, after a warm-up):

* one process reading one log: the per-core rate (MB/s) that bench/SCALE.md plans with;
* the local path, `-j 2` (a process pool, one task per input);
* the LocalCluster (2 worker processes, 1 thread each), one input a task and batched (blaslog.cluster.plan);
* the scheduler's overhead per task (no-op tasks, one after another and 2,000 at once) and the size of the
  results that come back (pickled CompactRun + FileSummary per input).

Needs `pip install 'blaslog[dask]'`. The figures of a 2-core machine are in bench/SCALE.md.
"""

from __future__ import annotations

import argparse
import os
import pickle
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from generate import level5  # noqa: E402

from blaslog import api, cluster  # noqa: E402
from blaslog.runs import read_run  # noqa: E402


def logs(ranks: int, mb: float, tagged: bool = False) -> list[str]:
    """`ranks` level-5 logs of about `mb` MB each (`rank<N>.log`; lines tagged `[rankN]: ` as torchrun writes
    them with `tagged`)."""
    folder = HERE / "data" / f"ranks{ranks}_{mb:g}mb{'_tagged' if tagged else ''}"
    folder.mkdir(parents=True, exist_ok=True)
    names = []
    for rank in range(ranks):
        path = folder / f"rank{rank}.log"
        if not path.exists():
            with open(path, "w", encoding="utf-8", buffering=1 << 20) as out:
                level5(out, int(mb * 1e6), seed=rank, prefix=f"[rank{rank}]: " if tagged else "")
        names.append(str(path))
    return names


def timed(func, repeat: int) -> float:
    """The median wall time of `repeat` calls (after one warm-up call)."""
    func()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def noop(x: int) -> int:
    return x


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ranks", type=int, default=64)
    parser.add_argument("--mb", type=float, default=3.0, help="size of each log (MB)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=1, help="timed runs per row (the median; after a warm-up)")
    parser.add_argument("--tagged", action="store_true", help="torchrun's `[rankN]: ` before every line")
    args = parser.parse_args()

    import dask
    import distributed

    names = logs(args.ranks, args.mb, args.tagged)
    total = sum(os.path.getsize(n) for n in names) / 1e6
    print(f"{args.ranks} logs, {total:,.0f} MB in all; {os.cpu_count()} CPUs; dask {dask.__version__}")
    rows = []

    one = timed(lambda: read_run(names[0]), args.repeat)
    per_core = os.path.getsize(names[0]) / 1e6 / one
    rows.append(("one process, one log", one, os.path.getsize(names[0]) / 1e6, 1))

    local = timed(lambda: api.summary(names, options=api.Options(jobs=args.workers, progress=None)), args.repeat)
    rows.append((f"local -j {args.workers} (process pool)", local, total, args.ranks))

    start = time.perf_counter()
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        local_cluster = distributed.LocalCluster(
            n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=40
        )
    client = distributed.Client(local_cluster, set_as_default=False)
    startup = time.perf_counter() - start
    address = local_cluster.scheduler_address
    try:
        for label, per_task in (("1 input a task", 1), ("batched", None)):
            tasks = len(cluster.plan(names, args.workers, per_task))
            seconds = timed(
                lambda per_task=per_task: cluster.read_runs(names, scheduler=address, files_per_task=per_task),
                args.repeat,
            )
            rows.append((f"LocalCluster {args.workers} workers, {label}", seconds, total, tasks))
        seconds = timed(lambda: api.summary(names, options=api.Options(progress=None, scheduler=address)), args.repeat)
        rows.append(
            (
                f"LocalCluster {args.workers} workers, summary end to end",
                seconds,
                total,
                len(cluster.plan(names, args.workers)),
            )
        )

        def serial(n: int = 50) -> None:
            for i in range(n):
                client.submit(noop, i, pure=False).result()

        round_trip = timed(serial, args.repeat) / 50
        many = 2000
        burst = timed(lambda: client.gather([client.submit(noop, i, pure=False) for i in range(many)]), args.repeat)
        read = cluster.read_runs(names, scheduler=address)
        result_bytes = statistics.mean(len(pickle.dumps(pair)) for pair in read.pairs)
    finally:
        cluster.close(address)
        client.close()
        local_cluster.close()

    print(f"\nper-core rate (one process, one {os.path.getsize(names[0]) / 1e6:.1f} MB log): {per_core:,.0f} MB/s")
    print(f"LocalCluster start: {startup:.1f} s")
    print(
        f"task overhead: {round_trip * 1e3:.1f} ms a task one after another (submit to result); "
        f"{burst / many * 1e3:.2f} ms a task in a burst of {many} (the scheduler's throughput: "
        f"{many / burst:,.0f} tasks/s)"
    )
    print(
        f"result per input: {result_bytes / 1e3:,.1f} kB pickled (CompactRun + FileSummary) for "
        f"{total / args.ranks:.1f} MB of log\n"
    )
    print("| how | tasks | wall s | MB/s | overhead vs local -j |")
    print("|---|---:|---:|---:|---:|")
    for label, seconds, mb, tasks in rows:
        extra = f"{(seconds - local) / max(tasks, 1) * 1e3:+.1f} ms/task" if "LocalCluster" in label else ""
        print(f"| {label} | {tasks} | {seconds:.2f} | {mb / seconds:,.0f} | {extra} |")


if __name__ == "__main__":
    main()
