import sys
from pathlib import Path

# the shared simulator of these tests (gold_data.py) sits beside this file
sys.path.insert(0, str(Path(__file__).resolve().parent))
