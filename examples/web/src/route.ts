// Routes live in the URL's fragment (#/game/<id>), so the server serves one
// page at /play and a link to a game works after a reload.
import { useEffect, useState } from "preact/hooks";

export function go(path: string): void {
  location.hash = `#${path}`;
}

export function currentPath(): string {
  return location.hash.replace(/^#/, "") || "/";
}

export function usePath(): string {
  const [path, setPath] = useState(currentPath());
  useEffect(() => {
    const on = () => setPath(currentPath());
    window.addEventListener("hashchange", on);
    return () => window.removeEventListener("hashchange", on);
  }, []);
  return path;
}
