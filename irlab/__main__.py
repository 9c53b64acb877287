import sys

from .interrupts import INTERRUPTED, stop_on_interrupt

stop_on_interrupt()
try:
    from .cli import main
except KeyboardInterrupt:   # Ctrl-C while Python was still importing irlab
    print("irlab: interrupted", file=sys.stderr)
    sys.exit(INTERRUPTED)
sys.exit(main())
