"""Tests of chatlas_like/_cli: the console chat."""
