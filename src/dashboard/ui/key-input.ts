// The key form's values as an admin-API body (DOM-free, so it is unit tested directly).
import type { KeyInput } from './api-types.ts';

/** The form's values as an API body ('' clears a limit on edit, is left out on create). */
export function keyInput(f: Record<string, string>, edit: boolean, admin: boolean): KeyInput {
  const out: KeyInput = { name: f.name?.trim() ?? '' };
  const opt = <T>(s: string | undefined, conv: (s: string) => T): T | null | undefined => (s === undefined || s.trim() === '' ? (edit ? null : undefined) : conv(s.trim()));
  out.expires_at = opt(f.expires_at, (s) => new Date(s).toISOString());
  if (admin) {
    out.allowed_models = (f.allowed_models ?? '').split(',').map((s) => s.trim()).filter(Boolean);
    out.budget_usd = opt(f.budget_usd, (s) => s);
    out.budget_period = out.budget_usd ? (f.budget_period as KeyInput['budget_period']) : edit ? null : undefined;
    out.rpm_limit = opt(f.rpm_limit, Number);
    out.tpm_limit = opt(f.tpm_limit, Number);
    out.owner_id = f.owner_id === undefined || f.owner_id === '' ? (edit ? null : undefined) : f.owner_id;
  }
  return Object.fromEntries(Object.entries(out).filter(([, val]) => val !== undefined)) as KeyInput;
}

/**
 * An edit's body: only the fields whose value differs from the form as it was opened. Another admin may
 * have changed the key since; sending every field would set theirs back to what this form showed.
 */
export function changedFields(opened: KeyInput, now: KeyInput): Partial<KeyInput> {
  return Object.fromEntries(Object.entries(now).filter(([k, val]) => JSON.stringify(val) !== JSON.stringify(opened[k as keyof KeyInput]))) as Partial<KeyInput>;
}
