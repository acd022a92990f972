import sys

from protokube.cli import main

sys.exit(main())
