// Assertions for the client programs: a failed one ends the program with a
// non-zero status and the reason on stderr (tests/e2e/test_node_clients.py).
export function check(ok: unknown, message: string): asserts ok {
  if (!ok) throw new Error(`check failed: ${message}`);
}

export function env(name: string): string {
  const value = process.env[name];
  check(value, `${name} is not set`);
  return value;
}
