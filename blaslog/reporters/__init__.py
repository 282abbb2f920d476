"""Output formats, as a registry: one module per format, each registering a Reporter subclass.

``REPORTERS`` maps the ``--format`` value to the class; :func:`get_reporter`
answers an unknown name with a suggestion. Every reporter renders any
:class:`~blaslog.report.Report` to a string. A format's module is imported when
its class is first asked for (``blaslog parse -f jsonl`` loads neither tabulate
nor the XML library).
"""

from __future__ import annotations

from blaslog.reporters._base import REPORTERS, Reporter, get_reporter

__all__ = ["REPORTERS", "Reporter", "get_reporter"]
