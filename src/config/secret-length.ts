// How long a secret someone sets for feedsync must be: one rule for every bearer token feedsync
// checks (a feed's push.token, FEEDSYNC_UI_TOKEN) and one for the queue UI's password, each a zod
// schema the config and the environment are both parsed with. A short one is refused, not used:
// it is guessed, and one character is never masked in output (secrets.ts).
import { z } from 'zod';

/**
 * A bearer token is a random value a machine sends: 32 characters, what `openssl rand -hex 16` gives
 * at the least (128 bits), and what `openssl rand -hex 32` passes with room.
 */
export const TOKEN_MIN_CHARS = 32;

/**
 * The queue UI's password is typed by a person into the browser's login, and it is the only thing
 * between the network and every action of the UI (no second factor, no lockout after failed tries):
 * 15 characters, the least NIST SP 800-63B-4 (3.1.1.2) asks of a password used alone.
 */
export const PASSWORD_MIN_CHARS = 15;

/** A bearer token; `use`: what it is and how to make one, said after the rule when it is broken. */
export function bearerToken(use: string) {
  return z.string().min(TOKEN_MIN_CHARS, `is at least ${TOKEN_MIN_CHARS} characters: ${use}`);
}

/** A password a person types (the queue UI's); `use` as for bearerToken. */
export function loginPassword(use: string) {
  return z.string().min(PASSWORD_MIN_CHARS, `is at least ${PASSWORD_MIN_CHARS} characters: ${use}`);
}
