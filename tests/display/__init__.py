"""Tests of chatlas_like/_display: renderings, snapshots, the echo sinks, live cards."""
