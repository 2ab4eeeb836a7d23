"""Identity from the app's identity provider: JWTs verified with PyJWT
(issue #24)."""
