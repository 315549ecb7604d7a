import sys

from bayescal.cli import main

sys.exit(main())
