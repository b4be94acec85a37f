"""How a conversation looks: one rendering of contents and results, and the echo sinks.

Importing this package installs the renderers content types reach through
:mod:`chatlas_like._core.renderers` (the package's ``__init__`` imports it first).
"""

from . import render as render
