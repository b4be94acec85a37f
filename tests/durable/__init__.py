"""Tests of chatlas_like/durable: DBOS conversations, the crash battery, the durable Shiny app."""
