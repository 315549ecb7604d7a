"""The binary calibration audit: data -> channels -> corrected ECE -> report.

:func:`audit` runs every step on one dataset and returns an :class:`AuditResult`
that renders itself in Jupyter and writes ``report.html``, ``summary.json`` and
``posterior.nc``. Sections whose feature is unavailable (or fails) are kept in
the report as "skipped" with the reason, never silently dropped.
"""

from __future__ import annotations

import json
import platform
import sys
import time
import warnings as _warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bayescal._json import json_default
from bayescal.errors import ConfigError

__all__ = ["audit", "AuditResult", "CHANNEL_CHOICES"]

#: ``--channels`` choices: the Bayesian grouped model or a point estimator.
CHANNEL_CHOICES = ("bayes", "score-bin-em", "dawid-skene-em", "gmm", "hui-walter")

ASSUMPTIONS = [
    "Class-conditional noise: an annotator's chance of answering 1 depends only on the true class "
    "(a = P(1 | negative), b = P(1 | positive)), not on the item's difficulty or its score.",
    "Conditional independence: given the true class "
    "(and score group), annotators err independently.",
    "Orientation: the designated annotator is better than chance (a < b), which fixes which latent "
    "class is 'positive'.",
    "Missing answers are missing independently of the true class given the score.",
    "The score groups and evaluation bins are fixed before looking at the labels.",
]


@dataclass(eq=False)
class Section:
    title: str
    status: str = "ok"  # "ok" or "skipped"
    reason: str = ""
    html_tables: list = field(default_factory=list)  # list of (caption, header, rows)
    figures: list = field(default_factory=list)  # list of (caption, base64 png)
    notes: list = field(default_factory=list)


@dataclass(eq=False)
class AuditResult:
    """Everything an audit computed; ``save(out)`` writes the report files.

    Attributes
    ----------
    summary : dict
        The ``summary.json`` content.
    sections : list of Section
    channels : ChannelFit
        The channels used for correction (posterior or point).
    point_channels : ChannelFit or None
    interval : NCECEPosterior or None
    errors : dict of BinnedECE
    """

    summary: dict
    sections: list
    channels: object
    point_channels: object
    interval: object
    errors: dict
    title: str = "bayescal calibration audit"

    @property
    def idata(self):
        return getattr(self.channels, "idata", None)

    def to_html(self) -> str:
        from bayescal.report.html import render

        return render(self)

    def _repr_html_(self) -> str:  # Jupyter
        return self.to_html()

    def save(self, out) -> dict:
        """Write ``report.html``, ``summary.json`` (and ``posterior.nc`` for Bayesian fits).

        Files are written to temporary names and renamed at the end, so an error
        never leaves a partial report behind.
        """
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        written = {}
        staged = []
        html = out / ".report.html.partial"
        html.write_text(self.to_html(), encoding="utf-8")
        staged.append((html, out / "report.html"))
        js = out / ".summary.json.partial"
        js.write_text(json.dumps(self.summary, indent=2, default=json_default) + "\n")
        staged.append((js, out / "summary.json"))
        if self.idata is not None:
            nc = out / ".posterior.nc.partial"
            self.idata.to_netcdf(str(nc))
            staged.append((nc, out / "posterior.nc"))
        for tmp, final in staged:
            tmp.replace(final)
            written[final.name] = str(final)
        return written

    def __repr__(self) -> str:
        nc = self.summary["ece"]["nc"]
        return (
            f"<AuditResult {self.summary['n_items']} items x "
            f"{self.summary['n_annotators']} annotators; NC-ECE {nc['point']:.4f}"
            + (f" [{nc['lo']:.4f}, {nc['hi']:.4f}]" if nc.get("lo") is not None else "")
            + f"; soft-vote ECE {self.summary['ece']['soft_vote']:.4f}; "
            f"{len(self.summary['warnings'])} warning(s)>"
        )


def _interval(x, prob):
    q = np.quantile(x, [(1 - prob) / 2, 1 - (1 - prob) / 2])
    return float(q[0]), float(q[1])


def audit(
    data,
    *,
    channels: str = "bayes",
    groups=5,
    bins=10,
    weights="equal",
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 2,
    prob: float = 0.9,
    seed: int = 0,
    progress: bool = False,
    command: str | None = None,
    title: str | None = None,
) -> AuditResult:
    """Audit the calibration of a binary score from noisy annotations.

    Parameters
    ----------
    data : Annotations or Summary
        Scores, answers (missing allowed) and optional truth (reference labels); or
        a summary (for example built out of core with dask), in which case its own
        groups and bins are used and the per-item recalibration step is skipped.
    channels : {"bayes", "score-bin-em", "dawid-skene-em", "gmm", "hui-walter"}
        ``"bayes"`` (default) samples the grouped PyMC model and carries channel
        uncertainty into the NC-ECE interval; the others are point estimators
        (the interval then has the evaluation-sample source only).
    groups, bins : int or edges
        Score groups for the channels (default 5 equal-width) and evaluation bins
        (default 10 equal-width).
    weights : str
        Annotator weight rule for corrected labels (default equal).
    draws, tune, chains : int
        NUTS settings for ``"bayes"``.
    prob : float, default 0.9
        Interval probability.
    seed : int
        The one seed for every random step.
    progress : bool
        Show sampler progress bars.
    command : str, optional
        The command line, recorded for reproducibility.

    Returns
    -------
    AuditResult
    """
    from bayescal.data.container import Annotations
    from bayescal.report import sections as S
    from bayescal.summaries.summary import Summary

    if not isinstance(data, (Annotations, Summary)):
        raise ConfigError(
            f"audit expects an Annotations container or a Summary; got {type(data).__name__}."
        )
    if channels not in CHANNEL_CHOICES:
        raise ConfigError(f"channels must be one of {CHANNEL_CHOICES}; got {channels!r}.")
    if not 0 < prob < 1:
        raise ConfigError(f"prob must be in (0, 1); got {prob}.")
    t_start = time.perf_counter()
    ctx = S.Context(
        data=data,
        channels_choice=channels,
        groups=groups,
        bins=bins,
        weights=weights,
        draws=draws,
        tune=tune,
        chains=chains,
        prob=prob,
        seed=seed,
        progress=progress,
    )
    with _warnings.catch_warnings():
        # Every warning is collected into the report; none is lost on stderr.
        _warnings.simplefilter("ignore")
        sections = [
            S.data_section(ctx),
            S.identification_section(ctx),
            S.channel_section(ctx),
            S.diagnostics_section(ctx),
            S.ece_section(ctx),
            S.recalibration_section(ctx),
        ]
    sections.append(S.warnings_section(ctx))
    import bayescal

    versions = {
        "bayescal": bayescal.__version__,
        "python": sys.version.split()[0],
        "numpy": np.__version__,
    }
    for mod in ("scipy", "xarray", "pymc", "arviz"):
        m = sys.modules.get(mod)
        if m is not None:
            versions[mod] = getattr(m, "__version__", "?")
    repro = {
        "command": command,
        "seed": seed,
        "versions": versions,
        "platform": platform.platform(),
        "data_hash": data.data_hash(),
        "settings": {
            "channels": channels,
            "groups": _plain(groups),
            "bins": _plain(bins),
            "weights": weights,
            "draws": draws,
            "tune": tune,
            "chains": chains,
            "prob": prob,
        },
        "seconds": time.perf_counter() - t_start,
    }
    sections.append(S.reproducibility_section(repro))
    summary = S.build_summary(ctx, repro)
    return AuditResult(
        summary=summary,
        sections=sections,
        channels=ctx.channels,
        point_channels=ctx.point,
        interval=ctx.interval,
        errors=ctx.errors,
        title=title or "bayescal calibration audit",
    )


def _plain(x):
    if isinstance(x, (int, float, str)) or x is None:
        return x
    return [float(v) for v in np.asarray(x).ravel()]
