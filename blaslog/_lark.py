"""lark's names, imported when first used.

A process whose records all come from shapes learnt by earlier processes (``_fast/saved.py``) runs no grammar,
and importing lark (with `regex`, which it takes when installed) costs some 40 ms: a tenth of reading a 100 MB
log in two processes. So no module imports lark when it is imported; each names lark's classes through this one
(``_lark.LarkError``), which imports lark the first time a name is asked for (PEP 562). In an ``except
_lark.LarkError`` clause the name is looked up only when an exception is being matched.

A dialect's Transformer is a subclass of lark's too, made when the dialect's first transformer is (see
``_fast.templates.LeafTransformer``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lark import Lark, Token, Transformer, Tree
    from lark.exceptions import (
        LarkError,
        UnexpectedCharacters,
        UnexpectedEOF,
        UnexpectedInput,
        UnexpectedToken,
        VisitError,
    )

_MODULES = {
    "Lark": "lark",
    "Token": "lark",
    "Transformer": "lark",
    "Tree": "lark",
    "LarkError": "lark.exceptions",
    "UnexpectedCharacters": "lark.exceptions",
    "UnexpectedEOF": "lark.exceptions",
    "UnexpectedInput": "lark.exceptions",
    "UnexpectedToken": "lark.exceptions",
    "VisitError": "lark.exceptions",
}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # asked for once
    return value


__all__ = [
    "Lark",
    "LarkError",
    "Token",
    "Transformer",
    "Tree",
    "UnexpectedCharacters",
    "UnexpectedEOF",
    "UnexpectedInput",
    "UnexpectedToken",
    "VisitError",
]
