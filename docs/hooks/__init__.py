"""The docs build's modules, loaded as one package by docs/hooks/macros.py (the mkdocs-macros entry point)."""
