"""--emulate and the settings of an emulation (diff, check and emulate)."""

from __future__ import annotations

import functools
import sys
from typing import Any

import click

from blaslog.cli._common import CliError
from blaslog.errors import BlaslogError


def _gpu(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
    if value is None:
        return None
    from blaslog.emulate.gpus import UnknownGpuError, gpu_by_name

    try:
        return gpu_by_name(value)
    except UnknownGpuError as exc:
        raise click.BadParameter(str(exc)) from None


def _tolerance(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
    if value is None:
        return None
    from blaslog.emulate.predict import Tolerance

    try:
        return Tolerance.parse(value)
    except BlaslogError as exc:
        raise click.BadParameter(str(exc)) from None


def _finite(ctx: click.Context, param: click.Parameter, value: float) -> float:
    if value != value:  # NaN passes FloatRange's bounds
        raise click.BadParameter("give a finite number")
    return value


def emulate_settings_options(func: Any) -> Any:
    """--gpu, --tolerance, --scale, --samples, --seed, --inputs: how a GEMM is emulated."""
    func = click.option(
        "--inputs",
        "inputs_npy",
        metavar="A.npy,B.npy",
        help="Sample the outputs from your own op(A) [m, k] and op(B) [k, n] (NumPy .npy, no pickles) instead of "
        "random inputs.",
    )(func)
    func = click.option("--seed", type=click.IntRange(0), default=0, show_default=True, help="Seed of the inputs.")(
        func
    )
    func = click.option(
        "--samples",
        type=click.IntRange(1, 1 << 16),
        default=1024,
        show_default=True,
        help="Output elements emulated, each with its full k.",
    )(func)
    func = click.option(
        "--scale",
        type=click.FloatRange(min=0, min_open=True, max=1e30),
        callback=_finite,
        default=1.0,
        show_default=True,
        help="Inputs are drawn from N(0, 1) times SCALE (the size of your activations and weights).",
    )(func)
    func = click.option(
        "--tolerance",
        metavar="atol=A,rtol=R",
        callback=_tolerance,
        help="Your test's tolerance: say what share of the sampled outputs would fail |x-y| <= atol + rtol|y| "
        "from the arithmetic alone.",
    )(func)
    func = click.option(
        "--gpu",
        metavar="NAME",
        callback=_gpu,
        help="The GPU that ran the GEMMs (V100, A100, H100, B200, MI100, MI250X, MI300X ...); by default what the "
        "logs, caps or run folder say.",
    )(func)
    return func


_EMULATION_PARAMETERS = ("emulate", "gpu", "tolerance", "scale", "samples", "seed", "inputs_npy")


def _collected(func: Any) -> Any:
    """The command gets its emulation options as one `emulation` mapping (they go to _emulate_settings)."""

    @functools.wraps(func)
    def command(**params: Any) -> Any:
        emulation = {name: params.pop(name) for name in _EMULATION_PARAMETERS if name in params}
        return func(emulation=emulation, **params)

    return command


def emulate_options(func: Any) -> Any:
    """--emulate and its settings, on diff and check."""
    func = emulate_settings_options(_collected(func))
    return click.option(
        "--emulate",
        is_flag=True,
        help="Emulate both sides' arithmetic bit for bit (needs blaslog[emulate]) and say how far each finding "
        "that changes it moves the outputs.",
    )(func)


def _emulate_settings(
    *,
    quiet: bool,
    gpu: Any,
    tolerance: Any,
    scale: float,
    samples: int,
    seed: int,
    inputs_npy: str | None,
    emulate: bool = True,
) -> Any:
    """api's emulation settings from the options (None without --emulate); a missing extra is reported here,
    before any input is read."""
    if not emulate:
        ctx = click.get_current_context()
        given = [
            param.opts[0]
            for param in ctx.command.params
            if param.name in _EMULATION_PARAMETERS
            and param.name != "emulate"
            and ctx.get_parameter_source(param.name) is not click.core.ParameterSource.DEFAULT
        ]
        if given:
            raise CliError(f"{', '.join(given)} set how findings are emulated: add --emulate")
        return None
    from blaslog.emulate.engine import require
    from blaslog.emulate.predict import Settings

    require()
    a = b = None
    if inputs_npy:
        a, b = _load_npy(inputs_npy)
    return Settings(
        samples=samples,
        seed=seed,
        scale=scale,
        tolerance=tolerance,
        a=a,
        b=b,
        inputs_source=inputs_npy or "",
        gpu=gpu,
        progress=not quiet and sys.stderr.isatty(),
    )


def _load_npy(text: str) -> tuple[Any, Any]:
    import numpy as np

    names = [p for p in text.split(",") if p]
    if len(names) != 2:
        raise BlaslogError(f"--inputs {text!r}: give two .npy files, A.npy,B.npy")
    arrays = []
    for name in names:
        try:
            array = np.load(name, allow_pickle=False, mmap_mode="r")
        except (OSError, ValueError) as exc:
            raise BlaslogError(f"--inputs: {name}: cannot be read as a .npy array ({exc})") from None
        if array.dtype.kind != "f" or array.ndim != 2:
            raise BlaslogError(
                f"--inputs: {name}: a 2-D floating-point array is needed (got {array.dtype}, {array.ndim}-D)"
            )
        arrays.append(array)
    return arrays[0], arrays[1]
