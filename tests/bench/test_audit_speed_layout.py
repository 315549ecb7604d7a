"""``bench audit-speed`` writes the keys issue 16 asks for (cold/warm, compile vs sampling, ESS)."""

import json

import pytest

from bayescal.cli import main


@pytest.mark.slow
def test_audit_speed_layout(tmp_path):
    out = tmp_path / "audit_speed.json"
    argv = ["bench", "audit-speed", "--repeats", "1", "--samplers", "nutpie"]
    argv += ["--skip", "first_run", "audit", "--json", str(out)]
    assert main(argv) == 0
    r = json.loads(out.read_text())
    assert r["uptime_start"] and r["uptime_end"]
    best = r["bayes"]["current/nutpie"]["best"]
    for key in (
        "audit_step_cold",
        "audit_step_warm",
        "cold_fit.load_seconds",
        "cold_fit.sampling_seconds",
        "cold_fit.post_seconds",
        "warm_fit.sampling_seconds",
        "cold_fit.rhat_max",
        "cold_fit.ess_bulk_min",
        "interval.lo_mcse",
        "interval.hi_mcse",
        "stages.import_sampler",
        "import_bayescal",
    ):
        assert key in best, key
    run = r["bayes"]["current/nutpie"]["runs"][0]
    assert run["cold_fit"]["diagnostics_pass"] is True  # R-hat <= 1.01, bulk ESS >= 400
    assert run["process_cpu_seconds"] > 0  # the whole child's CPU (getrusage), recorded
    assert 0 < run["interval"]["lo"] < run["interval"]["hi"]
    for job in ("current/with_dask", "current/without_dask"):
        assert r["imports"][job]["runs"][0]["heavy_modules_after_import"] == []
    assert r["imports"]["current/without_dask"]["runs"][0]["dask_importable"] is False
    # the command line's answers without an audit, wall and CPU
    assert set(r["startup"]) == {"help", "argument_error", "missing_data_file"}
    assert r["startup"]["help"]["first_line"].startswith("usage: bayescal audit")
    assert r["startup"]["argument_error"]["first_line"].startswith("bayescal: error: argument")
    assert r["startup"]["missing_data_file"]["best_cpu"] > 0
