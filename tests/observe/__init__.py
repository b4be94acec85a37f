"""Tests of chatlas_like/_observe: logging and OpenTelemetry."""
