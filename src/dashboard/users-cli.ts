// The `users` command: create (the first admin comes from here), list, set a password, disable/enable.
// A password comes from --password-stdin (one line on standard input) or is generated and printed once.
// Exit codes: 0 done, 1 the operation failed (bad value, unknown user), 2 usage error (and an email or
// name holding control, invisible or text-direction characters). Arguments, a new user's email and name
// and a password from stdin are checked before the store is opened; data to stdout, errors to stderr.
import { GatewayError } from '../gateway-error.ts';
import { noWords, parseArgs, reportCommandError, UsageError, type CommandIo, type Prepared } from '../util/cli-args.ts';
import { invisibleNameProblem } from '../util/visible-name.ts';
import type { Store } from '../store/types.ts';
import { generatePassword, passwordProblem } from './passwords.ts';
import { normalEmail, Users } from './users.ts';

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

/** A name or email a listing would show as something else (U+202E, a zero-width space): a usage error. */
function visible(flag: string, v: string): string {
  const hidden = invisibleNameProblem(flag, v);
  if (hidden !== null) throw new UsageError(hidden);
  return v;
}

type UsersWork = (store: Store) => Promise<number>;

/**
 * Checks `users <create|list|password|disable|enable>` (`argv` may start with "users") before any store
 * is opened: usage mistakes, the email and name of a new user, and a password given on stdin. Returns
 * the exit code of a mistake (reported on `io.err`) or the work to run on the opened store.
 */
export async function prepareUsersCommand(argv: string[], io: CommandIo, stdin: NodeJS.ReadableStream = process.stdin): Promise<Prepared<Store>> {
  const args = argv[0] === 'users' ? argv.slice(1) : argv;
  let work: UsersWork;
  try {
    work = await usersWork(args, io, stdin);
  } catch (e) {
    return reportCommandError(e, io, USERS_USAGE);
  }
  return async (store) => {
    try { return await work(store); } catch (e) { return reportCommandError(e, io, USERS_USAGE); }
  };
}

/** Runs `users ...` against an opened store (the checks first, as prepareUsersCommand does). Returns the exit code. */
export async function runUsersCommand(argv: string[], store: Store, io: CommandIo, stdin: NodeJS.ReadableStream = process.stdin): Promise<number> {
  const prepared = await prepareUsersCommand(argv, io, stdin);
  return typeof prepared === 'number' ? prepared : prepared(store);
}

async function usersWork(args: string[], { out }: CommandIo, stdin: NodeJS.ReadableStream): Promise<UsersWork> {
  const sub = args[0];
  /** The password from --password-stdin (checked here) or a generated one. */
  const password = async (fromStdin: boolean): Promise<{ value: string; generated: boolean }> => {
    if (!fromStdin) return { value: generatePassword(), generated: true };
    const value = await readStdinLine(stdin);
    const problem = passwordProblem(value);
    if (problem) throw new GatewayError('invalid_parameter', problem, { param: 'password' });
    return { value, generated: false };
  };
  /** The one word naming a user by email (password, disable, enable). */
  const emailWord = (words: string[]): string => {
    if (words.length === 0) throw new UsageError('name the user by email');
    if (words.length > 1) throw new UsageError(`unexpected argument "${words[1]}"`);
    return words[0]!;
  };
  const byEmail = async (users: Users, email: string) => {
    const u = (await users.list()).find((x) => x.email === email.trim().toLowerCase());
    if (!u) throw new GatewayError('resource_not_found', `no user with email ${email}`);
    return u;
  };
  if (sub === 'create') {
    // A mistyped flag (--admn, --role admin) was ignored: the account was made, as a member.
    const p = parseArgs(args.slice(1), ['email', 'name'], ['admin', 'password-stdin']);
    noWords(p);
    const given = p.values.get('email');
    if (!given) throw new UsageError('users create needs --email');
    const email = normalEmail(visible('--email', given));
    const name = p.values.get('name');
    // An empty --name (an unset shell variable) was taken as no name at all, without a word.
    if (name !== undefined && name.trim() === '') throw new UsageError('--name is empty (leave it out to name the user after the email, before the @)');
    if (name !== undefined) visible('--name', name);
    const pw = await password(p.bare.has('password-stdin'));
    return async (store) => {
      const u = await new Users(store.sql).create({ email, name, role: p.bare.has('admin') ? 'admin' : 'member', password: pw.value });
      out(`created ${u.role} ${u.email} (${u.id})`);
      if (pw.generated) out(`  password: ${pw.value}\nStore it now: it is shown only once. Sign in at /dashboard.`);
      return 0;
    };
  }
  if (sub === 'list') {
    const p = parseArgs(args.slice(1), [], ['json']);
    noWords(p);
    return async (store) => {
      const list = await new Users(store.sql).list();
      if (p.bare.has('json')) { for (const u of list) out(JSON.stringify(u)); return 0; }
      if (list.length === 0) { out('no users; create the first admin with: users create --email EMAIL --admin'); return 0; }
      for (const u of list) out(`${u.id}  ${u.role.padEnd(6)}  ${u.disabled_at ? 'disabled' : 'active  '}  ${u.email}  ${u.name}`);
      return 0;
    };
  }
  if (sub === 'password') {
    const p = parseArgs(args.slice(1), [], ['password-stdin']);
    const email = emailWord(p.words);
    const pw = await password(p.bare.has('password-stdin'));
    return async (store) => {
      const users = new Users(store.sql);
      const u = await byEmail(users, email);
      await users.setPassword(u.id, pw.value);
      await store.sql.run('DELETE FROM dashboard_sessions WHERE user_id = ?', [u.id]);
      out(`password of ${u.email} changed; their sessions ended`);
      if (pw.generated) out(`  password: ${pw.value}`);
      return 0;
    };
  }
  if (sub === 'disable' || sub === 'enable') {
    const email = emailWord(parseArgs(args.slice(1), []).words);
    return async (store) => {
      const users = new Users(store.sql);
      const u = await byEmail(users, email);
      await users.update(u.id, { disabled: sub === 'disable' });
      if (sub === 'disable') await store.sql.run('DELETE FROM dashboard_sessions WHERE user_id = ?', [u.id]);
      out(`${sub}d ${u.email}`);
      return 0;
    };
  }
  throw new UsageError(sub === undefined ? 'missing subcommand' : `unknown subcommand "${sub}"`);
}
