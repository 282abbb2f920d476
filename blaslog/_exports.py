"""Names a package hands on from its modules, each module imported when one of its names is first used (PEP 562).

So a command imports what it needs and no more: `blaslog parse` none of the modules of diff, check, emulate, probe
or TunableOp. A package lists its names in a literal ``__all__``, imports them under ``typing.TYPE_CHECKING`` (so
that type checkers and readers see where each comes from) and defines, outside that guard::

    __getattr__, __dir__ = exports(__name__, {"blaslog.api._diff": ("diff", "diff_many"), ...})
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence


def exports(
    package: str, homes: Mapping[str, Sequence[str]]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of `package`, whose names are defined in the modules `homes`
    maps to them. A name, once looked up, is kept in the package's namespace: it is looked up once."""
    home = {name: module for module, names in homes.items() for name in names}

    def __getattr__(name: str) -> object:
        module = home.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *home})

    return __getattr__, __dir__
