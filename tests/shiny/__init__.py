"""Tests of chatlas_like.shiny: the Shiny app, bookmarks, the browser tests."""
