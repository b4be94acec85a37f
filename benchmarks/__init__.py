"""Benchmarks of chatlas_like against the raw ``anthropic`` SDK and chatlas 0.23.0.

Run ``make bench`` (or ``python -m benchmarks.run --help``). This package must stay
importable without chatlas_like installed: the chatlas side of each row runs in a
scratch venv that has only chatlas and its dependencies.
"""
