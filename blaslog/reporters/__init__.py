"""Output formats, as a registry: one module per format, each registering a Reporter subclass.

``REPORTERS`` maps the ``--format`` value to the class; :func:`get_reporter`
answers an unknown name with a suggestion. Every reporter renders any
:class:`~blaslog.report.Report` to a string.
"""

from __future__ import annotations

# imported for their @register side effect: each module adds its reporter to REPORTERS
from blaslog.reporters import csv, github, gitlab, html, json, junit, markdown, sarif, table  # noqa: F401
from blaslog.reporters._base import REPORTERS, Reporter, get_reporter

__all__ = ["REPORTERS", "Reporter", "get_reporter"]
