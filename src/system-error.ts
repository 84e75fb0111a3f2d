// What the operating system said, in words a person can act on: a file that cannot be read or
// written, a full disk, a port in use. Used where such an error becomes an EnvironmentError, and by
// the CLI for one that reaches it unnamed, so no stack trace is printed for what a person can fix.

/** An error from a system call: it carries a code such as EACCES (and often the path). */
export interface SystemError extends Error {
  code: string;
  syscall?: string;
  path?: string;
  port?: number;
  address?: string;
}

export function isSystemError(err: unknown): err is SystemError {
  const code: unknown = err instanceof Error ? Reflect.get(err, 'code') : undefined;
  return typeof code === 'string' && /^E[A-Z]+$/.test(code);
}

/** What is wrong and what to do about it, by the system's code; undefined for a code not known here. */
export function systemProblem(err: SystemError): { problem: string; remedy: string } | undefined {
  const user =
    typeof process.getuid === 'function'
      ? `the user running feedsync (uid ${process.getuid()})`
      : 'the user running feedsync';
  switch (err.code) {
    case 'ENOENT':
      return {
        problem: 'does not exist (ENOENT)',
        remedy: 'Check the path (relative paths are relative to the config file)',
      };
    case 'EACCES':
    case 'EPERM':
      return {
        problem: `is not open to ${user} (${err.code})`,
        remedy: 'Give that user read and write access to it and its folder, or point the config at a place it may use',
      };
    case 'ENOSPC':
    case 'EDQUOT':
      return {
        problem: `could not be written: the disk is full (${err.code})`,
        remedy: 'Free some space on that disk, then run again',
      };
    case 'EROFS':
      return {
        problem: 'is on a read-only file system (EROFS)',
        remedy: 'Point the config at a writable place (in a container: a mounted volume)',
      };
    case 'EISDIR':
      return {
        problem: 'is a folder where a file was expected (EISDIR)',
        remedy: 'Point the config at a file inside it, or move the folder away',
      };
    case 'ENOTDIR':
    case 'EEXIST':
      return {
        problem: `cannot be made: a part of its path is a file where a folder is needed (${err.code})`,
        remedy: 'Move that file away, or point the config elsewhere',
      };
    case 'EMFILE':
    case 'ENFILE':
      return {
        problem: `could not be opened: too many files are open (${err.code})`,
        remedy: 'Raise the open-file limit (ulimit -n), then run again',
      };
    case 'EADDRINUSE':
      return {
        problem: 'is in use by another program (EADDRINUSE)',
        remedy: 'Stop what listens there, or choose another port',
      };
    case 'EADDRNOTAVAIL':
      return {
        problem: 'is not an address of this machine (EADDRNOTAVAIL)',
        remedy: 'Listen on 127.0.0.1, 0.0.0.0 or an address this machine has',
      };
    default:
      return undefined;
  }
}

/** What the error is about: its path, else its address and port. */
export function systemSubject(err: SystemError): string | undefined {
  if (err.path) return err.path;
  if (err.port !== undefined) return `port ${err.port}${err.address ? ` on ${err.address}` : ''}`;
  return undefined;
}
