"""The record models of every file chatjudge writes for other programs to read, one module
per file (or family of files), at the bottom of the layers so that every layer reads them.

Each file's model carries its own `format` version and the plain numbered upgrades from
its earlier versions (`Versioned.UPGRADES`); `io.read_model` upgrades an older file on
read and refuses one of a version it does not know. docs/formats.md documents them.
"""
