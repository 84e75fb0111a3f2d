// A feed file's identity: its size and the sha256 of its bytes, as they were from one look at the
// file to the next (the sync's seal, sync/settle/seal.ts, rests on it: a file whose bytes are the
// ones a run read and found in step needs no read). Hashing is cheap beside parsing (12 MB: about
// 6 ms here), and stat's size and times alone would take a file rewritten with new bytes in the
// same second, or copied with its times kept, for the old one.
import { createHash } from 'node:crypto';
import { open, stat } from 'node:fs/promises';

export interface FileIdentity {
  size: number;
  sha256: string;
}

/** What stat says of a file, to tell that it was not replaced or written since it was hashed. */
export interface Look {
  size: number;
  mtimeNs: bigint;
  ctimeNs: bigint;
  ino: bigint;
}

const CHUNK = 1 << 20;

/**
 * The file's identity, or why there is none: the file could not be read, or it changed while it
 * was hashed (a new export landing). A sync then reads the feed as always, and its read says
 * what is wrong with the file, if anything; so the problem is only named here.
 */
export async function fileIdentity(
  path: string,
  signal?: AbortSignal,
): Promise<{ identity: FileIdentity; look: Look } | { problem: string }> {
  try {
    const before = await look(path);
    const hash = createHash('sha256');
    const file = await open(path, 'r');
    try {
      const buffer = Buffer.allocUnsafe(CHUNK);
      let size = 0;
      for (;;) {
        signal?.throwIfAborted();
        const { bytesRead } = await file.read(buffer, 0, CHUNK, size);
        if (bytesRead === 0) break;
        hash.update(buffer.subarray(0, bytesRead));
        size += bytesRead;
      }
      const after = await look(path);
      if (!sameLook(before, after) || size !== after.size) return { problem: `${path} changed while it was hashed` };
      return { identity: { size, sha256: hash.digest('base64url') }, look: after };
    } finally {
      await file.close();
    }
  } catch (err) {
    return { problem: `${path} could not be hashed: ${err instanceof Error ? err.message : String(err)}` };
  }
}

/** The file looks as it did when it was hashed: the same file (inode), size, and times of its last write and change. */
export async function unchangedSince(path: string, since: Look): Promise<boolean> {
  // (a file gone or unreadable now is no longer the one hashed: the answer is no)
  const now = await look(path).catch(() => undefined);
  return now !== undefined && sameLook(since, now);
}

async function look(path: string): Promise<Look> {
  const s = await stat(path, { bigint: true });
  return { size: Number(s.size), mtimeNs: s.mtimeNs, ctimeNs: s.ctimeNs, ino: s.ino };
}

function sameLook(a: Look, b: Look): boolean {
  return a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs && a.ino === b.ino;
}
