"""One module per row of the table.

A row module defines ``ROW`` (its number), ``NAME`` and ``run(ctx) -> list[Line]``, and
the sides it measures as factories ``side(url, params) -> sampler``: ``ours``,
``floor`` and ``chatlas``. Top-level imports are stdlib and ``benchmarks`` only, so
the chatlas worker can import the module in a venv without chatlas_like; each side
imports its client inside the factory. ``profile(url, params)`` (optional) gives the
sampler that ``--profile`` runs under cProfile, and ``PROFILE_PARAMS`` its size.
"""
