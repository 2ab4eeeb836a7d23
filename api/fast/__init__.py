"""The speed machinery: every seam on a library's internals, in one place
(issue #23; docs/architecture.md, "Seams", lists each with its decision, its
differential test and `make check-upgrades`)."""
