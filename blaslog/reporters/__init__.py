"""Output formats, as a registry: one module per format, each registering a Reporter subclass.

Every module of this package whose name does not begin with ``_`` is found (as the log dialects of
:mod:`blaslog.formats` are) and its ``@register`` classes read from its text: each declares its ``--format``
`name`, the `commands` that offer it, a one-line `description`, and the `extra` it needs. ``REPORTERS`` maps the
``--format`` value to the class, importing a format's module when its class is first asked for (``blaslog parse
-f jsonl`` loads neither tabulate nor the XML library); :func:`get_reporter` answers an unknown name with a
suggestion; :func:`offered`, :func:`describe` and :func:`ready` are what the command line asks. Every reporter
renders any :class:`~blaslog.report.Report` to a string. CONTRIBUTING.md lists the files a new format touches.
"""

from __future__ import annotations

from blaslog.reporters._base import REPORTERS, Reporter, describe, get_reporter, offered, ready, register

__all__ = ["REPORTERS", "Reporter", "describe", "get_reporter", "offered", "ready", "register"]
