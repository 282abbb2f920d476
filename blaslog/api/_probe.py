"""`blaslog probe`: the configurations to ask libcublasLt about, and the caps file made of its answers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from blaslog.api._inputs import Options, Paths, _names, _read_for_report
from blaslog.caps import Caps, probed_caps
from blaslog.errors import BlaslogError, InputError
from blaslog.report import FailOn, Report

# ---- probe -----------------------------------------------------------------------------------------------------


def probe_configs(
    from_logs: Paths = (),
    *,
    algo_id: int | None = None,
    compute_type: str = "COMPUTE_32F",
    scale_type: str = "R_32F",
    types: Sequence[str] = ("R_32F",) * 4,
) -> list[dict[str, Any]]:
    """The algorithm configurations to probe: every distinct one in `from_logs`, or the one given."""
    from_logs = _names(from_logs)
    from blaslog import native

    if from_logs:
        inputs = _read_for_report(from_logs, Options())
        configs = native.configs_from_records(inputs.occurrences())
        if not configs:
            raise InputError("no cuBLASLt GEMM with an algoId in the logs (a level-2 or higher cuBLASLt log is needed)")
        return configs
    if algo_id is None:
        raise InputError("give --algo-id (with --compute-type, --scale-type, --types) or --from LOG")
    if len(types) != 4:
        raise InputError("--types takes four data types: A,B,C,D (e.g. R_32F,R_32F,R_32F,R_32F)")
    return [
        {
            "algoId": algo_id,
            "computeType": compute_type,
            "scaleType": scale_type,
            "Atype": types[0],
            "Btype": types[1],
            "Ctype": types[2],
            "Dtype": types[3],
        }
    ]


def probe_document(probed: Any) -> dict[str, Any]:
    """What `blaslog probe -f json` prints of a probe: the library, its version, the GPU, each configuration's
    answer and each configuration's error."""
    return {
        "library": probed.library,
        "version": probed.version_text,
        "gpu": probed.gpu,
        "entries": probed.entries,
        "errors": [{"config": config, "error": error} for config, error in probed.errors],
    }


def caps_from_probe(probed: Any, existing: Caps | None = None) -> Caps:
    """A caps file's contents from a probe (merged into `existing`: the probe's entries win)."""
    return probed_caps(probe_document(probed), existing)


def probe(
    from_logs: Paths = (),
    *,
    algo_id: int | None = None,
    compute_type: str = "COMPUTE_32F",
    scale_type: str = "R_32F",
    types: Sequence[str] = ("R_32F",) * 4,
) -> Report:
    """What `blaslog probe` does: libcublasLt asked about each configuration of :func:`probe_configs`. The
    report's `document` is what `probe -f json` prints (:func:`probe_document`; ``blaslog.caps.probed_caps`` makes
    a caps file of it); its `failed`, each configuration that could not be probed, and the crash of the library
    that ended the probe early (the configurations probed before it are kept), or that nothing was probed.
    Raises NativeError (LibraryNotFound ...) when nothing can be probed at all."""
    from blaslog import native

    configs = probe_configs(from_logs, algo_id=algo_id, compute_type=compute_type, scale_type=scale_type, types=types)
    failed: list[str] = []
    try:
        probed = native.probe(configs)
    except BlaslogError as exc:
        partial = getattr(exc, "partial", None)
        if partial is None:
            raise
        failed.append(str(exc))
        probed = partial
    failed += [f"algoId {config.get('algoId')} {config.get('computeType')}: {error}" for config, error in probed.errors]
    if not probed.entries and not failed:
        failed.append("no configuration was probed")
    return Report("probe", document=probe_document(probed), failed=failed, fail_on=FailOn.NEVER)
