"""What the Python test drivers share: one check() that prints each check's outcome and keeps the failures.

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
    from wheelcheck_test import Checks  # noqa: E402

    CHECKS = Checks()                   # Checks(context=lambda: CURRENT) to name the case being run
    check, FAILURES = CHECKS.check, CHECKS.failures

check(cond, what, detail="") prints `  ok    WHAT`, or `  FAIL  WHAT` and the detail under it, records WHAT
among the failures when cond is false, and returns cond. A driver reports len(FAILURES) and exits 1 if
there is one.
"""
import sys


class Checks:
    def __init__(self, context=None, indent="  ", detail_limit=None):
        """context: a function naming the case being run (its name prefixes WHAT, in the output and the
        failures); indent: before ok/FAIL; detail_limit: how many characters of a detail are printed."""
        self.failures = []
        self._context = context
        self._indent = indent
        self._detail_limit = detail_limit

    def check(self, cond, what, detail=""):
        if self._context is not None:
            what = f"{self._context()} {what}"
        detail = str(detail)[: self._detail_limit].rstrip() if detail else ""
        line = f"{self._indent}{'ok    ' if cond else 'FAIL  '}{what}"
        print(line if cond or not detail else f"{line}\n{detail}", flush=True)
        if not cond:
            self.failures.append(what)
        return cond
