"""The baseline a user would write: regular expressions over the [Trace] lines, the same fields as blaslog.

Reads a cuBLASLt log and prints one tab-separated row per GEMM (m, n, k from the layouts, types, compute
type, algoId, tile, stages, split-K, reduction scheme, swizzling). No accounting of other lines, no
validation: it is the speed to beat, not a parser.
"""

from __future__ import annotations

import re
import sys

PAIR = re.compile(r"(\w+)=(\[[^\]]*\]|\S+)")
TRACE = re.compile(r"\]\[(\d+)\]\[Trace\]\[(\w*Matmul)\] (.*)")


def fields(group: str) -> dict[str, str]:
    return dict(PAIR.findall(group.strip("[]")))


def main() -> None:
    out = sys.stdout
    with open(sys.argv[1], encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if "[Trace]" not in line:
                continue
            match = TRACE.search(line)
            if not match:
                continue
            top = dict(PAIR.findall(match.group(3)))
            a, d = fields(top.get("Adesc", "")), fields(top.get("Ddesc", ""))
            compute, algo = fields(top.get("computeDesc", "")), fields(top.get("algo", ""))
            transposed = compute.get("transa") == "OP_T"
            m, k = (a.get("cols"), a.get("rows")) if transposed else (a.get("rows"), a.get("cols"))
            out.write("\t".join(str(x) for x in (match.group(1), m, d.get("cols"), k, a.get("type"),
                                                  compute.get("computeType"), algo.get("algoId"), algo.get("tile"),
                                                  algo.get("stages"), algo.get("numSplitsK"),
                                                  algo.get("reductionScheme"), algo.get("ctaSwizzling"))) + "\n")


if __name__ == "__main__":
    main()
