"""Tests of chatlas_like/_store: tool-result stores, batches, the read API."""
