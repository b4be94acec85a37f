"""The command line: ``python -m chatlas_like demo | chat | serve-results``."""
