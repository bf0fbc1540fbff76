"""test_docs.py -- the examples in the package's docstrings run and print
what they say (those needing a GPU or data are marked to skip)."""
import doctest
import importlib

import pytest

import threadmap

MODULES = ["threadmap", "threadmap.errors", "threadmap.kernel", "threadmap.model",
           "threadmap.regroup", "threadmap.report", "threadmap.arrays", "threadmap.gpu"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    r = doctest.testmod(importlib.import_module(name), extraglobs={"threadmap": threadmap},
                        optionflags=doctest.ELLIPSIS)
    assert r.failed == 0
