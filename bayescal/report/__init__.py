"""Audit reports: the one report core and the audits that build on it.

:mod:`bayescal.report.core` holds the shared result type (:class:`Report` with
sections, flags, provenance, strict JSON and an atomic ``save``);
:func:`audit` is the binary audit (Hanada & Futami) and
:func:`audit_ambiguity` the multiclass ambiguity audit (Tao et al.).
"""

from bayescal.report.ambiguity_audit import AmbiguityReport, audit_ambiguity
from bayescal.report.audit import CHANNEL_CHOICES, AuditReport, audit
from bayescal.report.core import Report, check_out_dir

__all__ = [
    "audit",
    "AuditReport",
    "CHANNEL_CHOICES",
    "audit_ambiguity",
    "AmbiguityReport",
    "Report",
    "check_out_dir",
]
