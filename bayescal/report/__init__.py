"""Audit reports: the one report core and the audits that build on it.

:mod:`bayescal.report.core` holds the shared result type (:class:`Report` with
sections, flags, provenance, strict JSON and an atomic ``save``);
:func:`audit` is the binary audit (Hanada & Futami) and
:func:`audit_ambiguity` the multiclass ambiguity audit (Tao et al.).

Importing the package loads nothing but this file: each name is imported from its
module on first use (PEP 562 ``__getattr__``), so the command line's parser
(:mod:`bayescal.report.cli`) starts without numpy, PyMC or ArviZ.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING

#: public name -> module that defines it (imported on first access)
_LAZY = {
    "audit": "bayescal.report.audit",  # the function (see _Package)
    "AuditReport": "bayescal.report.audit",
    "CHANNEL_CHOICES": "bayescal.options",
    "audit_ambiguity": "bayescal.report.ambiguity_audit",
    "AmbiguityReport": "bayescal.report.ambiguity_audit",
    "Report": "bayescal.report.core",
    "check_out_dir": "bayescal.report.core",
}

__all__ = [
    "audit",
    "AuditReport",
    "CHANNEL_CHOICES",
    "audit_ambiguity",
    "AmbiguityReport",
    "Report",
    "check_out_dir",
]

if TYPE_CHECKING:  # static analysers and IDEs see the real imports
    from bayescal.options import CHANNEL_CHOICES
    from bayescal.report.ambiguity_audit import AmbiguityReport, audit_ambiguity
    from bayescal.report.audit import AuditReport, audit
    from bayescal.report.core import Report, check_out_dir


class _Package(types.ModuleType):
    """This package: names resolve on first use, and ``audit`` stays the function.

    The function shares its name with its module, and Python binds a submodule to its
    package's attribute when the submodule is first imported (``import
    bayescal.report.audit``, by ``bayescal.audit`` or another module). Eager imports
    here used to rebind the name to the function; lazily, the property does.
    """

    def __getattr__(self, name: str):
        if name not in _LAZY:
            raise AttributeError(f"module 'bayescal.report' has no attribute {name!r}")
        value = getattr(importlib.import_module(_LAZY[name]), name)
        self.__dict__[name] = value  # later lookups skip this method
        return value

    def __dir__(self) -> list[str]:
        return sorted(set(self.__dict__) | set(__all__))

    @property
    def audit(self):
        return importlib.import_module("bayescal.report.audit").audit

    @audit.setter
    def audit(self, value) -> None:  # the import system's binding of the submodule
        pass


sys.modules[__name__].__class__ = _Package
