"""Tests of chatlas_like/_core: contents, turns, tool results, model_format, redaction."""
