"""Every model card's reference posterior matches a fresh fit within Monte Carlo error."""

import re
from pathlib import Path

import numpy as np
import pytest
from bayes_reference import REFERENCE, reference_table

CARDS = Path(__file__).resolve().parents[2] / "models"
ROW = re.compile(r"^\| `([^`]+)` \| ([0-9.]+) \| ([0-9.]+) \| ([0-9.]+) \|$")
SECTIONS = (
    "Generative story",
    "Parameters and dims",
    "Priors",
    "Orientation",
    "Identification conditions",
    "What breaks it",
    "Reference posterior",
)


def card_table(model):
    rows = {}
    for line in (CARDS / f"{model}.md").read_text().splitlines():
        m = ROW.match(line)
        if m:
            rows[m.group(1)] = tuple(float(x) for x in m.groups()[1:])
    return rows


@pytest.mark.parametrize("model", sorted(REFERENCE))
def test_card_has_every_section(model):
    text = (CARDS / f"{model}.md").read_text()
    for section in SECTIONS:
        assert f"## {section}" in text, section


@pytest.mark.parametrize("model", sorted(REFERENCE))
def test_card_reference_matches_fresh_fit(request, model):
    fit = request.getfixturevalue(f"{model}_fit")
    fresh = reference_table(fit)
    card = card_table(model)
    assert set(card) == set(fresh)
    for key, (mean, sd, mcse) in card.items():
        new_mean, new_sd, new_mcse = fresh[key]
        # 4 combined Monte Carlo standard errors, plus the rounding of the card (4 decimals)
        tol = 4 * np.hypot(mcse, new_mcse) + 1e-4
        assert abs(new_mean - mean) < tol, (key, mean, new_mean, tol)
        assert abs(new_sd - sd) < 0.25 * sd + 1e-4, (key, sd, new_sd)
