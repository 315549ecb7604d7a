import sys
from pathlib import Path

# the shared simulator of these tests (gold_data.py) sits beside this file; the SBC rank test
# (sbc_helpers.py) is the one of tests/bayes
HERE = Path(__file__).resolve().parent
for folder in (HERE, HERE.parent / "bayes"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
