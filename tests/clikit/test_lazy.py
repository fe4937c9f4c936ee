"""clikit.lazy: a package's names imported on first use, each from the module it names."""

from __future__ import annotations

import importlib
import types

import pytest

from clikit.lazy import lazy_names


@pytest.mark.parametrize("package", ["clikit", "controller", "p4emu.backend"])
def test_every_lazy_name_is_its_modules_object(package: str) -> None:
    """Each listed name is the object of the module it names, and public. A name that is
    also a submodule's (``controller.push``) is that submodule once it is imported: the
    import system binds it on the package, and a package ``__getattr__`` is asked only
    for names the package lacks (the function stays ``controller.push.push``)."""
    module = importlib.import_module(package)
    shadowed = []
    for name, where in module._LAZY.items():
        target = getattr(importlib.import_module(where), name)
        if where == f"{package}.{name}":
            shadowed.append(name)
            assert getattr(module, name) is importlib.import_module(where)
        else:
            assert getattr(module, name) is target, name
        assert name in module.__all__
    assert shadowed == (["push"] if package == "controller" else [])


def test_an_unknown_name_is_an_attribute_error_naming_the_package() -> None:
    getattr_ = lazy_names("somepkg", {"known": "types"})
    with pytest.raises(AttributeError, match="module 'somepkg' has no attribute 'other'"):
        getattr_("other")
    with pytest.raises(AttributeError, match="'types' has no attribute 'known'"):
        getattr_("known")  # the module named does not hold it: Python's own error
    assert lazy_names("t", {"SimpleNamespace": "types"})("SimpleNamespace") is (
        types.SimpleNamespace
    )
