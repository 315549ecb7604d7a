"""Ctrl-C and SIGTERM during sampling stop the process; no partial posterior is returned.

Each test runs a small script in a subprocess that prints ``SAMPLING`` once a fit far
too long to finish is sampling (nutpie: after a first short fit has loaded the kernel;
PyMC: when its NUTS step leaves tuning), then sends the signal from outside. Both
samplers catch ``KeyboardInterrupt`` internally and would return the draws made so far
(PyMC with one core even starts the next chain), so a result line, exit status 0 or a
long delay after the signal is a failure. The binary and the multiclass fits share the
samplers (``bayescal.bayes.sampling``); both tracks are run with nutpie, the binary one with
PyMC too.
"""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import bayescal

SCRIPT = textwrap.dedent(
    """
    import signal, sys, warnings
    warnings.simplefilter("ignore")
    from bayescal.bayes import fit_channels_bayes
    from bayescal.bayes.fit import fit_channels_bayes
    from bayescal.simulate import simulate_multiclass, simulate_toy

    sampler, mode, track = sys.argv[1], sys.argv[2], sys.argv[3]
    if mode == "sigterm":
        def on_term(signum, frame):  # what a CLI does: turn SIGTERM into an exit status
            raise SystemExit(143)
        signal.signal(signal.SIGTERM, on_term)
    if track == "binary":
        data, fit, options = simulate_toy(1000, random_state=0), fit_channels_bayes, {"groups": 3}
    else:
        data, fit, options = simulate_multiclass(1500, 3, random_state=0), (
            fit_channels_bayes), {}
    tune = 1000
    if sampler == "pymc":  # PyMC compiles inside the fit: announce its first kept draw
        from pymc.step_methods.hmc.nuts import NUTS

        leave_tuning = NUTS.stop_tuning

        def announce(self, *args, **kwargs):
            leave_tuning(self, *args, **kwargs)
            print("SAMPLING", flush=True)

        NUTS.stop_tuning = announce
        tune = 100  # the signal is meant for the draws: a short warm-up reaches them sooner
    else:  # nutpie: one short fit first loads the kernel, so the long one starts sampling
        fit(data, draws=20, tune=20, chains=1, sampler=sampler, check=False, **options)
        print("SAMPLING", flush=True)
    result = fit(data, draws=10**6, tune=tune, chains=2, cores=1, sampler=sampler, **options)
    print("RESULT", result.n_draws, flush=True)
    """
)


def _run_and_signal(tmp_path, sampler, mode, delay, track="binary"):
    script = tmp_path / "long_fit.py"
    script.write_text(SCRIPT)
    env = dict(os.environ)
    root = str(Path(bayescal.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join([root, env.get("PYTHONPATH", "")])
    proc = subprocess.Popen(
        [sys.executable, str(script), sampler, mode, track],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout.readline().strip() == "SAMPLING"
        time.sleep(delay)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT if mode == "sigint" else signal.SIGTERM)
        out, err = proc.communicate(timeout=120)
        waited = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, out, err, waited


def _assert_stopped_without_result(returncode, out, waited, expected_codes):
    assert "RESULT" not in out
    assert returncode in expected_codes, returncode
    # the long fit needs minutes; stopping within seconds means sampling did not go on
    assert waited < 30, waited


@pytest.mark.parametrize("track", ["binary", "multiclass"])
def test_sigint_during_nutpie_sampling_raises_keyboard_interrupt(tmp_path, track):
    code, out, err, waited = _run_and_signal(tmp_path, "nutpie", "sigint", 1.0, track)
    # an uncaught KeyboardInterrupt ends Python by SIGINT (shell status 130)
    _assert_stopped_without_result(code, out, waited, {-signal.SIGINT, 130})
    assert "KeyboardInterrupt" in err


@pytest.mark.parametrize("track", ["binary", "multiclass"])
def test_sigterm_handler_exception_is_not_swallowed(tmp_path, track):
    code, out, err, waited = _run_and_signal(tmp_path, "nutpie", "sigterm", 1.0, track)
    _assert_stopped_without_result(code, out, waited, {143})


@pytest.mark.slow
def test_sigint_during_pymc_sampling_raises_keyboard_interrupt(tmp_path):
    # the child says SAMPLING when PyMC's NUTS leaves tuning (after compiling, which takes a
    # few seconds); the signal lands among the kept draws of the first chain. Binary only:
    # both tracks call the same bayescal.bayes.sampling.sample_pymc, and the multiclass fit's
    # own interrupt path is the nutpie tests' (a second PyMC child cost ~7 s of CPU)
    code, out, err, waited = _run_and_signal(tmp_path, "pymc", "sigint", 0.5)
    _assert_stopped_without_result(code, out, waited, {-signal.SIGINT, 130})
    assert "KeyboardInterrupt: sampling was interrupted" in err
