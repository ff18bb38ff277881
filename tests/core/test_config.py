"""``fs.config`` (``_src/core/config.py``): the switches of the compiled parts, at run time.

The strided copy (``native_copy``) and the C overlap search (``native_overlap``) turn off and
on for the process (``update``) and for a block in one thread (``using``); the read and write
plans, ``fs.explain`` and the library's own eager programs follow at once; a function already
jitted keeps the path it was traced with; bad names and values are refused."""

from __future__ import annotations

import re
import threading

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _support import copy_kernel, native_search

import functional_strides as fs
from functional_strides import Layout, LayoutError, oracle
from functional_strides._src.core import config as config_module
from functional_strides._src.core.overlap import dfs
from functional_strides._src.native import copy_kernel as kernel_module

TRANSPOSE = Layout((512, 512), (1, 512))


def _text(explanation) -> str:
    """The explanation's text with its line breaks undone."""
    return " ".join(str(explanation).split())


@pytest.fixture
def restore():
    """The process-wide values as they were, after the test."""
    saved = dict(fs.config._values)
    yield
    fs.config._values.update(saved)


def test_options_and_defaults():
    assert fs.config is config_module.config
    assert sorted(fs.config.values()) == [
        "kernel_threads", "native_copy", "native_overlap", "overlap_max_work"]
    assert fs.config.kernel_threads == 0
    assert all(isinstance(fs.config.values()[k], bool) for k in ("native_copy", "native_overlap"))
    assert fs.config.overlap_max_work == config_module.OVERLAP_MAX_WORK == 10**6
    assert repr(fs.config).startswith("fs.config(native_copy=")


@pytest.mark.usefixtures("restore")
def test_update_turns_the_strided_copy_off_and_on():
    copy_kernel()
    assert fs.read_plan(TRANSPOSE) == "strided_copy" and kernel_module.enabled()
    fs.config.update("native_copy", False)
    assert fs.config.native_copy is False and not kernel_module.enabled()
    assert fs.read_plan(TRANSPOSE) == "structured"
    assert fs.write_plan(TRANSPOSE, 512 * 512) != "strided_copy"
    assert "the strided copy and write off (fs.config.native_copy is False)" in _text(
        fs.explain(fs.as_strided(jnp.zeros(512 * 512), (512, 512), (1, 512))))
    fs.config.update("native_copy", True)
    assert fs.read_plan(TRANSPOSE) == "strided_copy"
    assert "the strided copy and write on (fs.config.native_copy)" in _text(fs.explain(TRANSPOSE))


def test_using_is_scoped_and_thread_local():
    copy_kernel()
    seen = {}

    def other():
        seen["other"] = (fs.config.native_copy, fs.read_plan(TRANSPOSE))

    with fs.config.using(native_copy=False):
        assert fs.read_plan(TRANSPOSE) == "structured"
        worker = threading.Thread(target=other)
        worker.start()
        worker.join()
        with fs.config.using(native_copy=True):
            assert fs.read_plan(TRANSPOSE) == "strided_copy"
        assert fs.config.native_copy is False
    assert seen["other"] == (True, "strided_copy")  # the block changed only its own thread
    assert fs.read_plan(TRANSPOSE) == "strided_copy"
    with pytest.raises(ZeroDivisionError), fs.config.using(native_copy=False):
        1 / 0  # noqa: B018
    assert fs.config.native_copy is True  # restored on an exception too


def test_eager_programs_follow_the_switch_at_once():
    """The library's own programs for eager calls take the switch in their cache key: a forced
    ``method="strided_copy"`` that ran with the kernel on is refused with it off (not served
    from the cache), and eager reads and writes give the same values either way."""
    copy_kernel()
    storage = jnp.arange(512 * 512, dtype=jnp.float32)
    want = oracle.materialize(np.asarray(storage), TRANSPOSE)
    calls = kernel_module.stats()["calls"]
    np.testing.assert_array_equal(np.asarray(fs.materialize(storage, TRANSPOSE, method="strided_copy")), want)
    written = fs.write(storage, TRANSPOSE, 1.0, mode="add", method="strided_copy")
    assert kernel_module.stats()["calls"] == calls + 2
    with fs.config.using(native_copy=False):
        with pytest.raises(LayoutError, match="method='strided_copy' does not apply"):
            fs.materialize(storage, TRANSPOSE, method="strided_copy")
        with pytest.raises(LayoutError, match="strided_copy"):
            fs.write(storage, TRANSPOSE, 1.0, mode="add", method="strided_copy")
        np.testing.assert_array_equal(np.asarray(fs.materialize(storage, TRANSPOSE)), want)
        np.testing.assert_array_equal(np.asarray(fs.write(storage, TRANSPOSE, 1.0, mode="add")),
                                      np.asarray(written))
        assert kernel_module.stats()["calls"] == calls + 2  # none of these ran the kernel
    np.testing.assert_array_equal(np.asarray(fs.materialize(storage, TRANSPOSE)), want)
    assert kernel_module.stats()["calls"] == calls + 3  # eager "auto": the kernel again


def test_a_jitted_function_keeps_the_path_it_was_traced_with():
    """As documented: ``jax.jit`` does not retrace when a switch changes; a new jitted
    function (or one traced again) takes the path the switch gives."""
    copy_kernel()
    storage = jnp.arange(512 * 512, dtype=jnp.float32)
    read = jax.jit(lambda s: fs.materialize(s, TRANSPOSE))
    read(storage).block_until_ready()
    calls = kernel_module.stats()["calls"]
    with fs.config.using(native_copy=False):
        read(storage).block_until_ready()  # the cached program: still the kernel
        assert kernel_module.stats()["calls"] == calls + 1
        fresh = jax.jit(lambda s: fs.materialize(s, TRANSPOSE))
        assert kernel_module.TARGET not in fresh.lower(storage).as_text()
        np.testing.assert_array_equal(np.asarray(fresh(storage)), np.asarray(read(storage)))


def test_the_overlap_search_runs_in_python_when_switched_off(monkeypatch):
    """``native_overlap=False``: the compiled search is not called and the Python code gives
    the same answers (the queries' caches are emptied first, so each is computed again)."""
    module = native_search()
    calls = []

    class Counting:
        def __getattr__(self, name):
            calls.append(name)
            return getattr(module, name)

    monkeypatch.setattr(dfs, "native", Counting())
    hard = [Layout((7, 11, 13), (143, 13, 1)), Layout((6, 6), (4, 6)), Layout((5, 9, 4), (36, 4, 9)),
            Layout((30, 40), (37, 41)), Layout((3, 3, 3), (6, 2, 3)), Layout((4, 5), (5, 4))]
    fs.clear_caches()
    want = [fs.has_internal_overlap(lay) for lay in hard]
    assert calls  # on: the compiled search answered
    calls.clear()
    fs.clear_caches()
    with fs.config.using(native_overlap=False):
        assert dfs.compiled() is None
        assert [fs.has_internal_overlap(lay) for lay in hard] == want
        assert "overlap search in Python (fs.config.native_overlap is False)" in _text(fs.explain(hard[0]))
    assert calls == []
    fs.clear_caches()


@pytest.mark.parametrize(("call", "message"), [
    (lambda: fs.config.update("native_kernel", False),
     "config.update: unknown option 'native_kernel' (options: native_copy, native_overlap, "
     "overlap_max_work, kernel_threads)."),
    (lambda: fs.config.update("native_copy", 0),
     "config.update: option 'native_copy' takes True or False (got 0)."),
    (lambda: fs.config.using(native_copy="no").__enter__(),
     "config.using: option 'native_copy' takes True or False (got 'no')."),
    (lambda: fs.config.update("overlap_max_work", -2),
     "config.update: option 'overlap_max_work' takes -1 (exact) or an int >= 0, a budget of work units "
     "(got -2)."),
    (lambda: fs.config.using(overlap_max_work=True).__enter__(),
     "config.using: option 'overlap_max_work' takes -1 (exact) or an int >= 0"),
    (lambda: fs.config.using(speed=True).__enter__(),
     "config.using: unknown option 'speed' (options: native_copy, native_overlap, overlap_max_work, "
     "kernel_threads)."),
], ids=["unknown", "not-bool", "using-not-bool", "work-below-minus-1", "using-work-bool", "using-unknown"])
def test_bad_names_and_values_are_refused(call, message):
    before = fs.config.values()
    with pytest.raises(LayoutError, match=re.escape(message)):
        call()
    assert fs.config.values() == before


def test_options_are_not_set_as_attributes():
    with pytest.raises(AttributeError, match=re.escape("fs.config.update('native_copy', value)")):
        fs.config.native_copy = False
    with pytest.raises(AttributeError, match="no option 'speed'"):
        _ = fs.config.speed
