// The `users` command: create (the first admin comes from here), list, set a password, disable/enable.
// A password comes from --password-stdin (one line on standard input) or is generated and printed once.
// Exit codes: 0 done, 1 the operation failed (bad value, unknown user), 2 usage error.
import { GatewayError } from '../gateway-error.ts';
import { flagReader, onlyFlags, UsageError } from '../util/cli-args.ts';
import type { Store } from '../store/types.ts';
import { generatePassword } from './passwords.ts';
import { Users } from './users.ts';

export const USERS_USAGE = `usage:
  users create --email EMAIL [--name NAME] [--admin] [--password-stdin]
  users list [--json]
  users password EMAIL [--password-stdin]     set a new password (generated unless given) and end the user's sessions
  users disable EMAIL | users enable EMAIL`;


async function readStdinLine(stdin: NodeJS.ReadableStream): Promise<string> {
  let data = '';
  for await (const chunk of stdin) {
    data += String(chunk);
    if (data.includes('\n') || data.length > 4096) break;
  }
  return data.split(/\r?\n/)[0] ?? '';
}

export async function runUsersCommand(argv: string[], store: Store, out: (s: string) => void, stdin: NodeJS.ReadableStream = process.stdin): Promise<number> {
  const args = argv[0] === 'users' ? argv.slice(1) : argv;
  const users = new Users(store.sql);
  const flag = flagReader(args);
  const password = async (): Promise<{ value: string; generated: boolean }> =>
    args.includes('--password-stdin') ? { value: await readStdinLine(stdin), generated: false } : { value: generatePassword(), generated: true };
  const byEmail = async (email: string | undefined) => {
    if (!email || email.startsWith('--')) throw new UsageError('name the user by email');
    const u = (await users.list()).find((x) => x.email === email.trim().toLowerCase());
    if (!u) throw new GatewayError('resource_not_found', `no user with email ${email}`);
    return u;
  };
  try {
    const sub = args[0];
    if (sub === 'create') {
      // A mistyped flag (--admn, --role admin) was ignored: the account was made, as a member.
      onlyFlags(args.slice(1), ['--email', '--name'], ['--admin', '--password-stdin']);
      const email = flag('email');
      if (!email) throw new UsageError('users create needs --email');
      const pw = await password();
      const u = await users.create({ email, name: flag('name'), role: args.includes('--admin') ? 'admin' : 'member', password: pw.value });
      out(`created ${u.role} ${u.email} (${u.id})`);
      if (pw.generated) out(`  password: ${pw.value}\nStore it now: it is shown only once. Sign in at /dashboard.`);
      return 0;
    }
    if (sub === 'list') {
      onlyFlags(args.slice(1), [], ['--json']);
      const list = await users.list();
      if (args.includes('--json')) { for (const u of list) out(JSON.stringify(u)); return 0; }
      if (list.length === 0) { out('no users; create the first admin with: users create --email EMAIL --admin'); return 0; }
      for (const u of list) out(`${u.id}  ${u.role.padEnd(6)}  ${u.disabled_at ? 'disabled' : 'active  '}  ${u.email}  ${u.name}`);
      return 0;
    }
    if (sub === 'password') {
      onlyFlags(args.slice(2), [], ['--password-stdin']);
      const u = await byEmail(args[1]);
      const pw = await password();
      await users.setPassword(u.id, pw.value);
      await store.sql.run('DELETE FROM dashboard_sessions WHERE user_id = ?', [u.id]);
      out(`password of ${u.email} changed; their sessions ended`);
      if (pw.generated) out(`  password: ${pw.value}`);
      return 0;
    }
    if (sub === 'disable' || sub === 'enable') {
      onlyFlags(args.slice(2), []);
      const u = await byEmail(args[1]);
      await users.update(u.id, { disabled: sub === 'disable' });
      if (sub === 'disable') await store.sql.run('DELETE FROM dashboard_sessions WHERE user_id = ?', [u.id]);
      out(`${sub}d ${u.email}`);
      return 0;
    }
    throw new UsageError(sub === undefined ? 'missing subcommand' : `unknown subcommand "${sub}"`);
  } catch (err) {
    if (err instanceof UsageError) { out(`error: ${err.message}\n${USERS_USAGE}`); return 2; }
    if (err instanceof GatewayError) { out(`error: ${err.message}`); return 1; }
    throw err;
  }
}
