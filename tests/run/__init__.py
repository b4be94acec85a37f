"""Tests of chatlas_like/_run: the turn loop, concurrency, interrupts, stream control, progress."""
