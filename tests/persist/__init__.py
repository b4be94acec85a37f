"""Tests of chatlas_like/_persist: chat files, and chatlas's JSON read back."""
