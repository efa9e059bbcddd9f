"""The differential suite against cuda.bindings (a package, so that its conftest
does not shadow the conftest module of tests/python)."""
