"""``bench audit-speed`` writes the keys issue 16 asks for (cold/warm, compile vs sampling, ESS)."""

import json

import pytest

from bayescal.bench import audit_speed
from bayescal.cli import main


@pytest.mark.slow
def test_audit_speed_layout(tmp_path):
    # ``cli`` (the per-stage timings of three whole default audits in fresh processes, one of
    # them compiling the numba kernels into an empty cache: 40 of this command's 52 CPU s)
    # is left out here; its layout and its jobs are the two tests below.
    out = tmp_path / "audit_speed.json"
    argv = ["bench", "audit-speed", "--repeats", "1", "--samplers", "nutpie"]
    argv += ["--skip", "first_run", "audit", "cli", "--json", str(out)]
    assert main(argv) == 0
    r = json.loads(out.read_text())
    assert r["uptime_start"] and r["uptime_end"]
    assert "cli_stages" not in r and "audit" not in r and "first_run" not in r  # --skip
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


def test_cli_stages_runs_a_cold_audit_then_warm_ones_with_and_without_crowdkit(monkeypatch):
    """``cli_stages``: one run with an empty numba cache (a temporary ``NUMBA_CACHE_DIR``),
    then ``repeats`` warm runs of the default command and of ``--no-crowdkit`` in that cache.
    The jobs handed to the measuring loop are recorded here; the measuring process of a
    ``cli`` job and its layout are the next test."""
    calls = []

    def measure(jobs, repeats):
        calls.append(({name: (args, dict(env)) for name, (args, env) in jobs.items()}, repeats))
        return {name: {"runs": []} for name in jobs}

    monkeypatch.setattr(audit_speed, "_measure", measure)
    env = audit_speed._env(None)
    out = audit_speed._cli_stages(env, 3)
    assert set(out) == {"cold", "warm"} and set(out["warm"]) == {"default", "no_crowdkit"}
    (cold, one), (warm, repeats) = calls
    assert (one, repeats) == (1, 3)
    assert cold["default"][0] == ["cli"]
    cache = cold["default"][1]["NUMBA_CACHE_DIR"]
    assert cache and cache != env.get("NUMBA_CACHE_DIR")
    assert warm["default"] == cold["default"]  # warm: the cache the cold run filled
    assert warm["no_crowdkit"] == (["cli", "--no-crowdkit"], cold["default"][1])


@pytest.mark.slow
def test_a_cli_measurement_times_every_stage_of_the_audit_command():
    """One ``cli`` measuring process (the README command through ``bayescal.cli.main`` in a
    fresh process): wall and CPU seconds per stage, from before the audit to the save, and
    the diagnostics the report states. A short audit (200 draws, no crowd-kit, no refitting
    sections): the layout is the point here, the figures of the default command are in
    docs/results."""
    extra = ["--no-crowdkit", "--draws", "200", "--tune", "200"]
    extra += ["--skip", "recalibration", "--skip", "next"]
    r = audit_speed._measure({"short": (["cli", *extra], audit_speed._env(None))}, 1)["short"]
    run = r["runs"][0]
    assert run["extra_args"] == extra
    assert set(run["stages_wall"]) == set(run["stages_cpu"])
    stages = list(run["stages_wall"])
    assert stages[0] == "before_audit" and stages[-2:] == ["figures", "save"]
    assert any(
        s.startswith("sampling the channel posterior: 2 chain(s) x 200 draws") for s in stages
    )
    assert "NC-ECE and its interval" in stages
    assert all(v >= 0 for v in run["stages_cpu"].values())
    assert 0 < run["main_cpu"] and 0 < run["main_wall"] and run["process_cpu_seconds"] > 0
    assert set(run["diagnostics"]) >= {"rhat_max", "ess_bulk_min", "divergences"}
    assert isinstance(run["diagnostics_pass"], bool)
    assert 0 <= run["nc_ece"]["lo"] <= run["nc_ece"]["point"] <= run["nc_ece"]["hi"]
    assert "main_cpu" in r["best"] and "stages_cpu.save" in r["best"]
