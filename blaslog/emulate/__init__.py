"""Bit-accurate emulation of both sides' GEMM arithmetic: does the difference a finding names explain a failing
test?

The layers, lowest first:

* :mod:`~blaslog.emulate.gpus`: the GPUs modelled and the evidence in logs, caps and run folders that names one;
* :mod:`~blaslog.emulate.arithmetic`: from decoded numerics (or the types alone: candidates) to one instruction;
* :mod:`~blaslog.emulate.engine`: the arithmetic, bit for bit (IEEE FMA in k order; mmasim's tensor-core and
  matrix-core models), and tensor parallelism's all-reduce;
* :mod:`~blaslog.emulate.predict`: sampled outputs, the metric |Δ| / Σ|a·b|, the verdict against a tolerance;
* :mod:`~blaslog.emulate.findings`: a report's findings emulated.

torch and mmasim are the optional extra ``blaslog[emulate]``; nothing here imports them until a GEMM is
emulated, and :func:`~blaslog.emulate.engine.require` names the install command when they are missing.
"""

from blaslog.emulate.arithmetic import NAMES, Arithmetic, NotModelled, by_name
from blaslog.emulate.engine import INSTALL, EmulationUnavailable, require
from blaslog.emulate.gpus import GPUS, Evidence, Gpu, UnknownGpuError, detect, gpu_by_name
from blaslog.emulate.predict import Prediction, Settings, SideSpec, Tolerance, emulate

__all__ = [
    "GPUS",
    "INSTALL",
    "NAMES",
    "Arithmetic",
    "EmulationUnavailable",
    "Evidence",
    "Gpu",
    "NotModelled",
    "Prediction",
    "Settings",
    "SideSpec",
    "Tolerance",
    "UnknownGpuError",
    "by_name",
    "detect",
    "emulate",
    "gpu_by_name",
    "require",
]
