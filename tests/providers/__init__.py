"""Tests of chatlas_like/providers: the provider seam, Anthropic's wire, cassettes, prices."""
