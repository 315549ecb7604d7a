"""scripts/build_notebooks.py writes no path of the machine that ran a notebook into it."""

import importlib.util
from pathlib import Path

import nbformat

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "build_notebooks.py"
spec = importlib.util.spec_from_file_location("build_notebooks", SCRIPT)
build_notebooks = importlib.util.module_from_spec(spec)
spec.loader.exec_module(build_notebooks)


def test_outputs_lose_machine_paths_and_keep_the_rest():
    root = build_notebooks.ROOT
    stream = nbformat.v4.new_output(
        "stream",
        name="stderr",
        text=(
            "/work/main/bayescal/channels/fit.py:96: IdentificationWarning: two groups\n"
            "  return estimator(summary, **options)\n"
            "/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/arviz/stats.py:797: "
            "UserWarning: ESS\n"
            "/tmp/ipykernel_20202/3265810025.py:1: FutureWarning: x\n"
            f"{root}/notebooks/data.csv read; 1/2 of the items; ratio a/b\n"
        ),
    )
    image = nbformat.v4.new_output(
        "display_data", data={"image/png": "/work/x/site-packages/ab==", "text/plain": "<Fig>"}
    )
    error = nbformat.v4.new_output(
        "error",
        ename="DataError",
        evalue="bad",
        traceback=["File /home/me/env/lib/python3.11/site-packages/bayescal/data/files.py:3"],
    )
    cleaned = [build_notebooks.without_machine_paths(dict(o)) for o in (stream, image, error)]
    assert cleaned[0]["text"] == (
        "bayescal/channels/fit.py:96: IdentificationWarning: two groups\n"
        "  return estimator(summary, **options)\n"
        "site-packages/arviz/stats.py:797: UserWarning: ESS\n"
        "<cell>:1: FutureWarning: x\n"
        "notebooks/data.csv read; 1/2 of the items; ratio a/b\n"
    )
    assert cleaned[1]["data"]["image/png"] == "/work/x/site-packages/ab=="  # base64: as is
    assert cleaned[2]["traceback"] == ["File site-packages/bayescal/data/files.py:3"]
    nbformat.validate(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(outputs=[
        nbformat.from_dict(o) for o in cleaned
    ])]))  # fmt: skip
