import { useEffect, useState } from "preact/hooks";

// The key lives in sessionStorage only: it survives a reload of this tab, never reaches a URL or another
// tab, and is gone when the tab closes or the user signs out.

export type Role = "agent" | "admin";

export interface Session {
  role: Role;
}

const keyItem = "agentmem.console.key";
const roleItem = "agentmem.console.role";

let key: string | null = sessionStorage.getItem(keyItem);
let role = sessionStorage.getItem(roleItem) as Role | null;
let notice: string | null = null;
const listeners = new Set<() => void>();

const changed = () => listeners.forEach((l) => l());

export const currentKey = (): string | null => key;

export function startSession(newKey: string, newRole: Role): void {
  sessionStorage.setItem(keyItem, newKey);
  sessionStorage.setItem(roleItem, newRole);
  key = newKey;
  role = newRole;
  notice = null;
  changed();
}

/** Signs out: forgets the key everywhere the console kept it. */
export function endSession(reason: string | null = null): void {
  sessionStorage.removeItem(keyItem);
  sessionStorage.removeItem(roleItem);
  key = null;
  role = null;
  notice = reason;
  changed();
}

export const expireSession = () => endSession("The key is no longer accepted (revoked, rotated or expired). Sign in again.");

/** The current session (null when signed out) and why the last one ended, if it was not by signing out. */
export function useSession(): { session: Session | null; notice: string | null } {
  const [, render] = useState(0);
  useEffect(() => {
    const listener = () => render((n) => n + 1);
    listeners.add(listener);
    return () => void listeners.delete(listener);
  }, []);
  return { session: key !== null && role !== null ? { role } : null, notice };
}
