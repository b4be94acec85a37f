"""Tests of the public API at the package's root: Chat, chatlas compatibility, parallel, batch."""
