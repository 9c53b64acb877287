import sys

from .base.interrupts import exit_interrupted, stop_on_interrupt

stop_on_interrupt()
try:
    from .cli import run
except KeyboardInterrupt:   # Ctrl-C while Python was still importing irlab
    print("irlab: interrupted", file=sys.stderr)
    exit_interrupted()
run()
