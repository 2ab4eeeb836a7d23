"""Webhook delivery (issue #25, docs/decisions/0064): the HTTP sender with
its SSRF guard, and the deliverer every instance runs over the outbox."""
