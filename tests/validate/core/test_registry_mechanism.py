"""The one registry mechanism (validate/core/_names.py) behind the registries of cases, sweep
experiments and benchmarks: duplicate names, lazy import of the registering modules, unknown
names with close matches, and the three registries built on it."""

import importlib.util
import sys
import textwrap
import types
from dataclasses import dataclass

import pytest
from richlazy.validate.benchmarks import _registry as _bench_registry
from richlazy.validate.core import _registry as _case_registry
from richlazy.validate.core._names import Registry
from richlazy.validate.sweeps import _registry as _sweep_registry


@dataclass(frozen=True)
class Spec:
    name: str
    fn: object
    note: str = ""


def _f():
    pass


def _g():
    pass


class _Modules:
    """Registering modules written into a folder on sys.path; they register into ``self.reg``
    through the fake module ``self.hub`` (``import <hub> as hub; hub.reg.add(...)``)."""

    def __init__(self, folder, monkeypatch):
        self.folder, self.written = folder, []
        self.hub = types.ModuleType(f"_rl_hub_{folder.name}")
        self.reg = self.hub.reg = Registry("widget")
        self.hub.imports = 0
        monkeypatch.setitem(sys.modules, self.hub.__name__, self.hub)
        monkeypatch.syspath_prepend(str(folder))

    def write(self, name: str, body: str) -> str:
        (self.folder / f"{name}.py").write_text(f"import {self.hub.__name__} as hub\n"
                                                + textwrap.dedent(body))
        self.written.append(name)
        return name


@pytest.fixture
def modules(tmp_path, monkeypatch):
    m = _Modules(tmp_path, monkeypatch)
    yield m
    for name in m.written:  # forgotten afterwards
        sys.modules.pop(name, None)


def test_a_name_registered_twice_with_another_object_is_refused():
    reg = Registry("widget")
    a = reg.add("a", Spec("a", _f))
    assert reg.all() == {"a": a}
    with pytest.raises(ValueError, match=r"^widget 'a' is registered twice$"):
        reg.add("a", Spec("a", _g))
    assert reg.get("a") is a  # the refused spec left nothing behind
    # the same object again (a decorator applied twice to one function) replaces the spec
    b = reg.add("a", Spec("a", _f, note="again"))
    assert reg.get("a") is b
    # a spec without ``fn`` is itself the registered object
    reg.add("plain", "x")
    reg.add("plain", "x")
    with pytest.raises(ValueError, match="'plain' is registered twice"):
        reg.add("plain", "y")


def test_the_registering_modules_are_imported_on_the_first_lookup_only(modules):
    reg = modules.reg
    mod = modules.write("_rl_widgets_lazy", """
        hub.reg.add("one", "first")
        hub.reg.add("two", "second")
        hub.imports += 1
    """)
    missing = "_rl_widgets_not_written"  # a listed module that does not exist is skipped
    reg.modules = (missing, mod)
    assert mod not in sys.modules and reg.specs == {}  # creating the registry imports nothing
    reg.add("zero", "own")  # nor does registering
    assert mod not in sys.modules
    assert reg.all() == {"zero": "own", "one": "first", "two": "second"}  # registration order
    assert mod in sys.modules and missing not in sys.modules
    sys.modules.pop(mod)
    assert reg.get("two") == "second" and list(reg.all()) == ["zero", "one", "two"]
    assert mod not in sys.modules and modules.hub.imports == 1  # loaded once, not per lookup


def test_an_error_inside_a_registering_module_is_raised_and_retried(modules):
    reg = modules.reg
    # a missing import inside a listed module is not skipped
    reg.modules = (modules.write("_rl_widgets_broken", "import _rl_no_such_dependency\n"),)
    for _ in range(2):  # not marked as loaded after a failure: the next lookup tries again
        with pytest.raises(ModuleNotFoundError, match="_rl_no_such_dependency"):
            reg.all()


def test_an_unknown_name_suggests_close_matches_and_lists_every_name():
    reg = Registry("widget")
    for name in ("selftest", "equality-rich", "equality-lazy", "ldt"):
        reg.add(name, Spec(name, _f))
    with pytest.raises(ValueError) as exc:
        reg.get("selftset")
    assert str(exc.value) == ("unknown widget name 'selftset' (did you mean 'selftest'?); "
                              "registered: equality-lazy, equality-rich, ldt, selftest")
    with pytest.raises(ValueError, match=r"did you mean 'equality-rich' or 'equality-lazy'\?"):
        reg.get("equality-ric")
    with pytest.raises(ValueError, match=r"^unknown widget name 'zzz'; registered: equality-lazy"):
        reg.get("zzz")  # nothing close: no suggestion
    with pytest.raises(ValueError, match=r"registered: \(none\)$"):
        Registry("widget").get("a")
    with pytest.raises(TypeError, match=r"name must be a widget name \(str\), got int"):
        reg.get(3)


def test_scratch_registrations_vanish_afterwards(modules):
    reg = modules.reg
    reg.modules = (modules.write("_rl_widgets_scratch", 'hub.reg.add("real", "r")\n'),)
    with reg.scratch() as specs:
        assert specs == {"real": "r"}  # the modules registered into the real registry first
        reg.add("tmp", "t")
        assert set(reg.all()) == {"real", "tmp"}
    assert reg.all() == {"real": "r"}
    with reg.scratch(empty=True):
        assert reg.all() == {}
    assert reg.all() == {"real": "r"}


# ---------------------------------------------------------------------------------------------
# the three registries on the one mechanism
# ---------------------------------------------------------------------------------------------

_REGISTRIES = {"case": _case_registry._CASES, "sweep experiment": _sweep_registry._SWEEPS,
               "benchmark": _bench_registry._BENCHMARKS}


@pytest.mark.parametrize("kind", sorted(_REGISTRIES))
def test_every_listed_registering_module_exists(kind):
    """A missing module is skipped at run time, so a misspelt or removed one fails here."""
    reg = _REGISTRIES[kind]
    assert isinstance(reg, Registry) and reg.kind == kind and reg.modules
    missing = [m for m in reg.modules if importlib.util.find_spec(m) is None]
    assert not missing, missing
    assert len(set(reg.modules)) == len(reg.modules)


def test_the_public_functions_keep_their_messages_and_suggest_names():
    from richlazy.validate import register_case

    with pytest.raises(ValueError, match=r"^unknown sweep experiment name 'selftst' \(did you mean "
                                         r"'selftest'\?\); registered: .*selftest"):
        _sweep_registry.get_sweep("selftst")
    with pytest.raises(TypeError, match="name must be an experiment name"):
        _sweep_registry.get_sweep(1)
    with pytest.raises(ValueError, match=r"^unknown benchmark name 'sampelr' \(did you mean "
                                         r"'sampler'"):
        _bench_registry.benchmark_device("sampelr")
    with _case_registry._CASES.scratch():
        register_case("coding/zz-mechanism", description="d", suites=("quick",))(_f)
        register_case("coding/zz-mechanism", description="again", suites=("quick",))(_f)
        assert _case_registry.all_cases()["coding/zz-mechanism"].description == "again"
        with pytest.raises(ValueError, match=r"^case 'coding/zz-mechanism' is registered twice$"):
            register_case("coding/zz-mechanism", description="d")(_g)
        assert [c.name for c in _case_registry.get_cases("quick", "coding/zz-*")] == [
            "coding/zz-mechanism"]
    assert "coding/zz-mechanism" not in _case_registry.all_cases()
    names = list(_case_registry.all_cases())
    assert names == sorted(names) and "coding/linear-toy" in names
