"""Audit reports: the binary audit pipeline, figures and self-contained HTML."""

from bayescal.report.audit import CHANNEL_CHOICES, AuditResult, audit

__all__ = ["audit", "AuditResult", "CHANNEL_CHOICES"]
