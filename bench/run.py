"""The benchmark: blaslog against baselines run alongside, on logs generated here.

    python bench/run.py                 # 10 MB, 100 MB and 1 GB level-5 logs (about 10 minutes on 2 cores)
    python bench/run.py --sizes 10 100  # smaller
    python bench/run.py --markdown      # the table as Markdown (for bench/RESULTS.md)

Each row runs one command in a fresh process and records its wall time and peak memory (the child's
maximum resident set size); a row that takes under 15 s is run three times and its median kept. Baselines: reading the file (`wc -l`, `grep -c`), a plain regular-expression
extractor of the same fields (`bench/regex_baseline.py`, what a user would write), and blaslog with its
shape cache switched off (BLASLOG_SHAPE_CACHE=0, on the 10 MB log only: it is slow by design).
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
PY = sys.executable


RANKS = 8
"""Per-rank logs of 250 MB each in the scaling rows (a TP=8 job)."""


def generate(kind: str, size: float, run: str = "tp4", pointers: str = "cycle", prefix: str = "") -> Path:
    variant = ("" if pointers == "cycle" else "_" + pointers) + ("_prefixed" if prefix else "")
    path = DATA / f"{kind}_{run}_{size}mb{variant}.log"
    if not path.exists():
        subprocess.run(
            [
                PY,
                str(HERE / "generate.py"),
                "--kind",
                kind,
                "--size",
                str(size),
                "--run",
                run,
                "--pointers",
                pointers,
                "--prefix",
                prefix,
                "--out",
                str(path),
            ],
            check=True,
        )
    return path


def measure_cpu(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak MB) of a command run once in its own process, under /usr/bin/time when it is
    there (else the children's rusage).

    Output goes through a pipe to `cat > /dev/null`: GNU grep stops at the first match when its output
    is /dev/null itself, which would make the grep baseline look infinitely fast.
    """
    timer = ["/usr/bin/time", "-f", "%M %U %S"] if Path("/usr/bin/time").exists() else []
    # every command in a plain environment: PYTHONUNBUFFERED (set on some machines) would make the baseline write
    # each row with a system call of its own
    env = {k: v for k, v in (env or os.environ).items() if k not in ("PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE")}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    sink = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    start = time.perf_counter()
    result = subprocess.run([*timer, *command], stdout=sink.stdin, stderr=subprocess.PIPE, env=env, check=False)
    seconds = time.perf_counter() - start
    sink.stdin.close()  # type: ignore[union-attr]
    sink.wait()
    if result.returncode not in (0, 1):
        raise SystemExit(f"failed: {' '.join(command)}\n{result.stderr.decode()[-2000:]}")
    if timer:
        peak, user, system = result.stderr.decode().strip().splitlines()[-1].split()
        return seconds, float(user) + float(system), float(peak) / 1024
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return seconds, cpu, after.ru_maxrss / 1024


def paired(
    blaslog: list[str], baseline: list[str], runs: int = 3, env: dict[str, str] | None = None
) -> tuple[tuple[float, float, float], ...]:
    """blaslog (in `env`, when given) and the baseline run in turn (A B A B ...), `runs` times each: the median
    (wall, CPU, peak) of each, so that a drift of the machine touches both alike."""
    a, b = [], []
    for _ in range(runs):
        a.append(measure_cpu(blaslog, env))
        b.append(measure_cpu(baseline))
    middle = runs // 2
    return (
        tuple(sorted(x[i] for x in a)[middle] for i in range(3)),  # type: ignore[return-value]
        tuple(sorted(x[i] for x in b)[middle] for i in range(3)),
    )


def measure(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """(seconds, peak MB) of a command run once in its own process (see measure_cpu)."""
    seconds, _, peak = measure_cpu(command, env)
    return seconds, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000], help="log sizes in MB")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument(
        "--shapes",
        type=int,
        default=100,
        metavar="MB",
        help="size of the logs of other shapes, each measured against the regex baseline (0: none)",
    )
    parser.add_argument("--only-shapes", action="store_true", help="measure the other shapes and limits only")
    parser.add_argument(
        "--headline",
        type=int,
        default=1000,
        metavar="MB",
        help="size of the level-5 log of the paired headline rows (issue 16's targets; 0: none)",
    )
    parser.add_argument("--only-headline", action="store_true", help="measure the paired headline rows only")
    parser.add_argument(
        "--per-rank",
        type=int,
        default=64,
        metavar="N",
        help="the per-rank-files row: N level-5 logs of about 300 KB each against the same bytes in one file (0: none)",
    )
    parser.add_argument("--only-per-rank", action="store_true", help="measure the per-rank-files row only")
    args = parser.parse_args()
    blaslog = [PY, "-m", "blaslog"]
    # byte-compile the package first, as pip does when it installs it: with PYTHONDONTWRITEBYTECODE set (or a
    # package edited since it was last run) every run would compile the modules again (some 60 ms a run)
    subprocess.run([PY, "-m", "compileall", "-q", str(HERE.parent / "blaslog")], check=True)
    rows: list[tuple[str, str, float, float, float, str]] = []

    def row(
        what: str,
        command: list[str],
        size_mb: float,
        records: str = "",
        env: dict[str, str] | None = None,
        label: str = "",
    ) -> float:
        runs = [measure(command, env)]
        if runs[0][0] < 15:  # quick rows run three times: the median, so that one noisy run does not decide
            runs += [measure(command, env) for _ in range(2)]
        seconds, peak = sorted(runs)[len(runs) // 2]
        rows.append((label, what, seconds, size_mb / seconds, peak, records))
        print(
            f"{label:>8} {what:<58} {seconds:8.2f} s {size_mb / seconds:8.1f} MB/s {peak:8.0f} MB {records}", flush=True
        )
        return seconds

    if args.per_rank:
        per_rank(args.per_rank, blaslog)
    if args.only_per_rank:
        return
    if args.headline:
        headline(args.headline, blaslog)
    if args.only_headline:
        return
    if args.shapes:
        shapes(args.shapes, blaslog)
        limits(blaslog)
    if args.only_shapes:
        return
    for size in args.sizes:
        sharded = generate("level5", size, "tp4")
        unsharded = generate("level5", size, "unsharded")
        mb = sharded.stat().st_size / 1e6
        with open(sharded, "rb") as handle:
            gemms = sum(1 for line in handle if b"][Trace][" in line)
        label = f"{size} MB"
        row("baseline: wc -l", ["wc", "-l", str(sharded)], mb, label=label)
        row("baseline: grep -c Trace", ["grep", "-c", "Trace", str(sharded)], mb, label=label)
        row(
            "baseline: regex extractor (bench/regex_baseline.py)",
            [PY, str(HERE / "regex_baseline.py"), str(sharded)],
            mb,
            f"{gemms} GEMMs",
            label=label,
        )
        row(
            "blaslog Python API, the baseline's fields (bench/api_fields.py)",
            [PY, str(HERE / "api_fields.py"), str(sharded)],
            mb,
            f"{gemms} GEMMs",
            label=label,
        )
        if size <= 10:
            row(
                "blaslog parse, shape cache off (BLASLOG_SHAPE_CACHE=0)",
                [*blaslog, "parse", str(sharded), "-f", "jsonl", "-q", "-j", "1"],
                mb,
                f"{gemms} GEMMs",
                env={**os.environ, "BLASLOG_SHAPE_CACHE": "0"},
                label=label,
            )
        parse1 = row(
            "blaslog parse -f jsonl, 1 process",
            [*blaslog, "parse", str(sharded), "-f", "jsonl", "-q", "-j", "1"],
            mb,
            f"{gemms} GEMMs",
            label=label,
        )
        fresh = generate("level5", size, "tp4", "new")
        row(
            "blaslog parse -f jsonl, 1 process, device pointers never repeat",
            [*blaslog, "parse", str(fresh), "-f", "jsonl", "-q", "-j", "1"],
            fresh.stat().st_size / 1e6,
            f"{gemms} GEMMs",
            label=label,
        )
        tagged = generate("level5", size, "tp4", prefix="[rank0]: ")
        with open(tagged, "rb") as handle:
            tagged_gemms = sum(1 for line in handle if b"][Trace][" in line)
        row(
            "blaslog parse -f jsonl, 1 process, `[rank0]: ` before every line",
            [*blaslog, "parse", str(tagged), "-f", "jsonl", "-q", "-j", "1"],
            tagged.stat().st_size / 1e6,
            f"{tagged_gemms} GEMMs",
            label=label,
        )
        row(
            f"blaslog parse -f jsonl, {os.cpu_count()} processes (file cut in pieces)",
            [*blaslog, "parse", str(sharded), "-f", "jsonl", "-q", "-j", str(os.cpu_count())],
            mb,
            f"{gemms} GEMMs",
            label=label,
        )
        row(
            "blaslog parse -f jsonl --kind all (every record built)",
            [*blaslog, "parse", str(sharded), "-f", "jsonl", "--kind", "all", "-q", "-j", "1"],
            mb,
            "all records",
            label=label,
        )
        row("blaslog summary, 1 process", [*blaslog, "summary", str(sharded), "-q", "-j", "1"], mb, label=label)
        row(
            f"blaslog summary, {os.cpu_count()} processes (file cut in pieces)",
            [*blaslog, "summary", str(sharded), "-q", "-j", str(os.cpu_count())],
            mb,
            label=label,
        )
        row("blaslog check, 1 process", [*blaslog, "check", str(sharded), "-q", "-j", "1"], mb, label=label)
        row(
            f"blaslog check, {os.cpu_count()} processes (file cut in pieces)",
            [*blaslog, "check", str(sharded), "-q", "-j", str(os.cpu_count())],
            mb,
            label=label,
        )
        diff = row(
            "blaslog diff sharded unsharded (both logs, read side by side)",
            [*blaslog, "diff", str(sharded), str(unsharded), "-q", "--exit-zero"],
            2 * mb,
            label=label,
        )
        print(f"{'':>8} diff / (2 x one-process parse) = {diff / (2 * parse1):.2f}")
    distinct = generate("distinct", 20)
    row(
        "blaslog parse, every line a different call",
        [*blaslog, "parse", str(distinct), "-f", "jsonl", "-q", "-j", "1"],
        distinct.stat().st_size / 1e6,
        label="20 MB",
    )
    ranks = [generate("level5", 250, "tp4")]
    for i in range(1, RANKS):
        path = DATA / f"rank{i}.log"
        if not path.exists():
            shutil.copy(ranks[0], path)
        ranks.append(path)
    total = sum(p.stat().st_size for p in ranks) / 1e6
    one = row(
        f"{RANKS} per-rank logs, summary, 1 process",
        [*blaslog, "summary", *map(str, ranks), "-q", "-j", "1"],
        total,
        label=f"{RANKS}x250 MB",
    )
    both = row(
        f"{RANKS} per-rank logs, summary, {os.cpu_count()} processes",
        [*blaslog, "summary", *map(str, ranks), "-q", "-j", str(os.cpu_count())],
        total,
        label=f"{RANKS}x250 MB",
    )
    print(f"{'':>8} speed-up {one / both:.2f} on {os.cpu_count()} cores")
    if args.markdown:
        print(
            f"\nMachine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
            f"{platform.python_version()}\n"
        )
        print("| input | command | seconds | MB/s | peak MB | records |\n|---|---|---|---|---|---|")
        for label, what, seconds, rate, peak, records in rows:
            print(f"| {label} | {what} | {seconds:.2f} | {rate:.1f} | {peak:.0f} | {records} |")


def shapes(size: int, blaslog: list[str]) -> None:
    """Logs of other statistics than the level-5 training log, each against the regex baseline in the same run:
    blaslog's speed over the baseline's (above 1: blaslog is faster), by wall and by CPU time."""
    logs = {
        "level 5, device pointers never repeat": generate("level5", size, "tp4", "new"),
        "level 5, `[rank0]: ` before every line": generate("level5", size, "tp4", prefix="[rank0]: "),
        "cuBLASLt + cuBLAS classic + program output": generate("mixed", size),
        "rocBLAS trace + bench (ROCBLAS_LAYER=3)": generate("rocblas3", size),
        "hipblaslt-bench lines": generate("hipblaslt-bench", size),
        "every line a different call": generate("distinct", size / 5),
        "the real logs of fixtures/ (every dialect) one after another": generate("real", size),
    }
    print(
        f"\n| log ({size} MB unless said) | command | blaslog wall s | CPU s | peak MB | baseline wall s | CPU s | "
        "speed vs baseline (wall) | (CPU) |\n|---|---|---|---|---|---|---|---|---|"
    )
    for what, path in logs.items():
        baseline = [PY, str(HERE / "regex_baseline.py"), str(path)]
        mb = path.stat().st_size / 1e6
        runs = [(command, ["-j", "1"], "") for command in (["parse", "-f", "jsonl"], ["summary"])]
        if path.stat().st_size >= 64 << 20:  # blaslog.api.PARALLEL_MIN: an input it reads in pieces by default
            runs += [(command, [], "") for command in (["parse", "-f", "jsonl"], ["summary"])]
        if what.startswith("the real logs"):  # its many shapes, learnt anew: the first run on a machine
            runs += [(["parse", "-f", "jsonl"], jobs, " without saved shapes") for jobs in (["-j", "1"], [])]
        for command, jobs, cold in runs:
            env = {**os.environ, "BLASLOG_SAVED_SHAPES": "0"} if cold else None
            mine, theirs = paired([*blaslog, *command, str(path), "-q", *jobs], baseline, env=env)
            how = (" ".join(jobs) if jobs else f"(default -j: {os.cpu_count()} here)") + cold
            print(
                f"| {what} ({mb:.0f} MB) | {' '.join(command)} {how} | {mine[0]:.2f} | {mine[1]:.2f} | "
                f"{mine[2]:.0f} | {theirs[0]:.2f} | {theirs[1]:.2f} | {theirs[0] / mine[0]:.2f} | "
                f"{theirs[1] / mine[1]:.2f} |",
                flush=True,
            )


PER_RANK_KB = 300
"""Size of each per-rank log of the per-rank-files row (the layout `blaslog record`, torchrun and CI write)."""


def per_rank(count: int, blaslog: list[str]) -> None:
    """`count` per-rank level-5 logs of PER_RANK_KB each (bench/generate.py --per-rank) against the same bytes in
    one file, alternating (A B A B ...), medians of three: the line shapes the first file teaches serve the next
    (issue 34's target: the files cost at most 1.5x the one file)."""
    folder = DATA / f"per_rank_{count}x{PER_RANK_KB}kb"
    if not folder.exists():
        subprocess.run(
            [
                PY,
                str(HERE / "generate.py"),
                "--per-rank",
                str(count),
                "--size",
                str(count * PER_RANK_KB / 1000),
                "--out",
                str(folder),
            ],
            check=True,
        )
    files = [str(folder / f"rank{rank}.log") for rank in range(count)]
    whole = DATA / f"per_rank_{count}x{PER_RANK_KB}kb_joined.log"
    if not whole.exists():
        with open(whole, "wb") as out:
            for name in files:
                out.write(Path(name).read_bytes())
    mb = whole.stat().st_size / 1e6
    print(
        f"\n| {count} per-rank logs ({mb:.1f} MB in all) | {count} files wall / CPU s | peak MB | the same bytes in one "
        "file wall / CPU s | files / one file (wall) | (CPU) |\n|---|---|---|---|---|---|"
    )
    for command in (
        ["parse", "-f", "jsonl", "-j", "1"],
        ["parse", "-f", "jsonl", "--kind", "all", "-j", "1"],
        ["summary", "-j", "1"],
    ):
        mine, theirs = paired([*blaslog, *command, *files, "-q"], [*blaslog, *command, str(whole), "-q"])
        print(
            f"| `{' '.join(command)}` | {mine[0]:.2f} / {mine[1]:.2f} | {mine[2]:.0f} | {theirs[0]:.2f} / "
            f"{theirs[1]:.2f} | {mine[0] / theirs[0]:.2f} | {mine[1] / theirs[1]:.2f} |",
            flush=True,
        )


def headline(size: int, blaslog: list[str]) -> None:
    """The level-5 log against the regex baseline in the same run, alternating (A B A B ...), medians of three:
    one process and two, wall and CPU time, and `--kind all` (every record written) in MB/s."""
    path = generate("level5", size, "tp4")
    mb = path.stat().st_size / 1e6
    baseline = [PY, str(HERE / "regex_baseline.py"), str(path)]
    print(
        f"\n| {mb:.0f} MB level-5 log | blaslog wall / CPU s | peak MB | baseline wall / CPU s | speed vs baseline "
        "(wall) | (CPU) | MB/s |\n|---|---|---|---|---|---|---|"
    )
    for command in (
        ["parse", "-f", "jsonl", "-j", "1"],
        ["summary", "-j", "1"],
        ["parse", "-f", "jsonl", "-j", "2"],
        ["summary", "-j", "2"],
        ["parse", "-f", "jsonl", "--kind", "all", "-j", "1"],
    ):
        mine, theirs = paired([*blaslog, *command, str(path), "-q"], baseline)
        print(
            f"| `{' '.join(command)}` | {mine[0]:.2f} / {mine[1]:.2f} | {mine[2]:.0f} | {theirs[0]:.2f} / "
            f"{theirs[1]:.2f} | {theirs[0] / mine[0]:.2f} | {theirs[1] / mine[1]:.2f} | {mb / mine[0]:.0f} |",
            flush=True,
        )


def limits(blaslog: list[str]) -> None:
    """Bounded cost: one line of 100k values, a deeply nested line, and 300k distinct GEMMs (summary, check)."""
    DATA.mkdir(exist_ok=True)
    wide = DATA / "wide_line.log"
    head = "[2024-01-01 00:00:00][cublasLt][1][Api][cublasLtMatmul] "
    ok = (HERE.parent / "fixtures" / "seed" / "sharded.log").read_text()  # a log around the line: exit 1, not 2
    wide.write_text(ok + head + " ".join(f"k={i}" for i in range(100_000)) + "\n")
    deep = DATA / "deep_line.log"
    deep.write_text(ok + head + "a=" + "[" * 400_000 + "]" * 400_000 + "\n")
    distinct = generate("distinct", 160)
    print("\n| input | command | wall s | CPU s | peak MB |\n|---|---|---|---|---|")
    for what, path, command in (
        ("one line, 100,000 key=value pairs", wide, "parse"),
        ("one line, brackets 400,000 deep", deep, "parse"),
        ("160 MB, ~270k distinct GEMMs", distinct, "summary"),
        ("160 MB, ~270k distinct GEMMs", distinct, "check"),
    ):
        wall, cpu, peak = measure_cpu([*blaslog, command, str(path), "-q", "-j", "1"])
        print(f"| {what} | {command} -j 1 | {wall:.2f} | {cpu:.2f} | {peak:.0f} |", flush=True)


if __name__ == "__main__":
    main()
