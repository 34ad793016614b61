"""The GX worker process (pipelines/quality/gx_worker.py): `gpuprices run` forks it before any
thread starts; a check's verdict from it is the one the check's own process gives, and a worker
that breaks or dies leaves the check to validate in its own process. A test process has threads
(pytest's workers), so each case runs in a fresh interpreter, as `gpuprices run` would."""

import signal
import subprocess
import sys
import textwrap

from spiders.layout import REPO_ROOT

SETUP = """
import os, threading
import pandas as pd
from pipelines.quality import gx_checks, gx_validate, gx_worker
from pipelines.quality.suites import ROW_ID, expect

FRAME = pd.DataFrame({"source": ["a", "b", "c"], "sku": ["x", "y", "z"],
                      "region_code": ["r"] * 3, "offer_kind": ["on_demand"] * 3,
                      "billing_period": ["hour"] * 3, "gpu_count": [1, 0, 8],
                      "currency": ["USD", "CNY", "XXX"]})
SUITE = [expect("ExpectColumnValuesToBeBetween", column="gpu_count", min_value=1),
         expect("ExpectColumnValuesToBeInSet", column="currency", value_set=["USD", "CNY"]),
         expect("ExpectColumnValuesToNotBeNull", column="sku")]
FORMAT = {"result_format": "COMPLETE", "unexpected_index_column_names": ROW_ID}


def here():   # after the fork: importing GX here starts threads of its own
    return gx_validate.validate_here(FRAME, "t", SUITE, FORMAT)
"""


def _run(body: str) -> str:
    """`body` after SETUP in a fresh interpreter that ignores SIGTERM, as a child of a process
    that ignores it does (pytest-xdist's workers): the worker must end with it all the same."""
    script = textwrap.dedent(SETUP) + textwrap.dedent(body)
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=600,
                          preexec_fn=lambda: signal.signal(signal.SIGTERM, signal.SIG_IGN))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_the_workers_verdict_is_the_checks_own():
    out = _run("""
        assert threading.active_count() == 1 and gx_worker.start() and gx_worker.running()
        pid = gx_worker._worker.process.pid
        for _ in range(2):     # one worker answers every request
            there = gx_worker.validate(FRAME, "t", SUITE, FORMAT)
            assert there == here(), (there, here())
        assert there.success is False
        assert [o.success for o in there.outcomes] == [False, False, True]
        assert gx_worker._worker.process.pid == pid and pid != os.getpid()
        judged = gx_checks.judged(FRAME, "t", SUITE, ROW_ID)     # through the worker
        print(sorted(f.expectation for f in judged.failed))
        gx_worker.stop()
        assert not gx_worker.running()
    """)
    assert out.split("\n")[-2] == ("['expect_column_values_to_be_between', "
                                   "'expect_column_values_to_be_in_set']")


def test_no_worker_is_forked_beside_another_thread():
    _run("""
        stop = threading.Event()
        threading.Thread(target=stop.wait).start()
        assert gx_worker.start() is False and not gx_worker.running()
        assert gx_worker.validate(FRAME, "t", SUITE, {"result_format": "SUMMARY"}) is None
        stop.set()
    """)


def test_a_dead_worker_leaves_the_check_to_validate_in_its_own_process():
    _run("""
        assert gx_worker.start()
        gx_worker._worker.process.kill()
        gx_worker._worker.process.join()
        assert gx_worker.validate(FRAME, "t", SUITE, FORMAT) is None
        assert not gx_worker.running()                       # stopped: not asked again
        assert gx_checks.validation(FRAME, "t", SUITE, FORMAT) == here()
    """)


def test_a_suite_the_worker_cannot_build_is_the_checks_error_to_raise():
    _run("""
        assert gx_worker.start()
        bad = [expect("ExpectNoSuchThing", column="sku")]
        assert gx_worker.validate(FRAME, "t", bad, {"result_format": "SUMMARY"}) is None
        assert gx_worker.running()                           # the worker goes on
        try:
            gx_checks.validation(FRAME, "t", bad, {"result_format": "SUMMARY"})
        except AttributeError as exc:
            assert "ExpectNoSuchThing" in str(exc)
        else:
            raise AssertionError("no error")
    """)


def test_a_worker_left_running_ends_with_the_run_that_ignores_sigterm():
    """A command that ends without stopping its worker (an error before the command's own
    clean-up) exits at once: the worker is stopped at exit, not waited for."""
    _run("""
        assert gx_worker.start()
        gx_worker.validate(FRAME, "t", SUITE, FORMAT)      # the worker has imported GX
    """)
