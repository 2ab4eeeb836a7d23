"""Notices of rotated and revoked tokens (domain.ports.Revocations,
docs/decisions/0053): in-process, and over Redis pub/sub for scale-out."""
