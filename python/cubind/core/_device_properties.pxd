# cython: language_level=3

