"""Tests of chatlas_like/_tools: tools from functions, their definitions, structured output."""
