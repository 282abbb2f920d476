"""The baseline a user would write: regular expressions over the GEMM lines, the same fields as blaslog.

Reads a log and prints one tab-separated row per GEMM: for cuBLASLt [Trace] lines m, n, k from the layouts,
types, compute type, algoId, tile, stages, split-K, reduction scheme, swizzling; for cuBLAS classic records
(`I!`/`i!` lines) m, n, k, types, compute type, algo; for rocBLAS trace lines and rocblas-bench / hipblaslt-bench
command lines their sizes, types, solution and flags. No accounting of other lines, no validation, no
de-duplication: it is the speed to beat, not a parser.
"""

from __future__ import annotations

import re
import sys

PAIR = re.compile(r"(\w+)=(\[[^\]]*\]|\S+)")
TRACE = re.compile(r"\]\[(\d+)\]\[Trace\]\[(\w*Matmul)\] (.*)")
OPTION = re.compile(r"--?(\w+) (\S+)")
_OTHER_STARTS = frozenset("r.hIi")  # the first characters of the other dialects' GEMM lines
CLASSIC = re.compile(r"^i!\s+(\w+): type=[^;]*; val=(\S+)")


def fields(group: str) -> dict[str, str]:
    return dict(PAIR.findall(group.strip("[]")))


def main() -> None:
    out = sys.stdout
    classic: dict[str, str] | None = None
    with open(sys.argv[1], encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if "[Trace]" in line:
                match = TRACE.search(line)
                if not match:
                    continue
                top = dict(PAIR.findall(match.group(3)))
                a, d = fields(top.get("Adesc", "")), fields(top.get("Ddesc", ""))
                compute, algo = fields(top.get("computeDesc", "")), fields(top.get("algo", ""))
                transposed = compute.get("transa") == "OP_T"
                m, k = (a.get("cols"), a.get("rows")) if transposed else (a.get("rows"), a.get("cols"))
                row = (
                    match.group(1),
                    m,
                    d.get("cols"),
                    k,
                    a.get("type"),
                    compute.get("computeType"),
                    algo.get("algoId"),
                    algo.get("tile"),
                    algo.get("stages"),
                    algo.get("numSplitsK"),
                    algo.get("reductionScheme"),
                    algo.get("ctaSwizzling"),
                )
            elif line[:1] not in _OTHER_STARTS:  # most lines of a cuBLASLt log: one test, as a user would write
                continue
            elif line.startswith("rocblas_gemm"):
                parts = line.rstrip("\n").split(",")
                row = (parts[0], parts[3], parts[4], parts[5], parts[8], parts[-6], parts[-5], parts[-4], parts[-3])
            elif line.startswith(("./rocblas-bench", "rocblas-bench", "hipblaslt-bench")):
                options = dict(OPTION.findall(line))
                row = (
                    options.get("f", "hipblaslt"),
                    options.get("m"),
                    options.get("n"),
                    options.get("k"),
                    options.get("a_type"),
                    options.get("compute_type"),
                    options.get("solution_index"),
                    options.get("flags"),
                )
            elif line.startswith("I! cuBLAS"):
                classic = {"function": line.split("function ", 1)[-1].split("(", 1)[0]}
                continue
            elif classic is not None and line.startswith("i!"):
                match = CLASSIC.match(line)
                if match:
                    classic[match.group(1)] = match.group(2)
                    continue
                if "Process=" not in line or "gemm" not in classic["function"].lower():
                    continue
                row = (
                    classic["function"],
                    classic.get("m"),
                    classic.get("n"),
                    classic.get("k"),
                    classic.get("Atype"),
                    classic.get("computeType"),
                    classic.get("algo"),
                )
                classic = None
            else:
                continue
            out.write("\t".join(str(x) for x in row) + "\n")


if __name__ == "__main__":
    main()
