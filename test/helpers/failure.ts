// The error a promise rejects with, for tests that look into it; a promise that resolves fails the test.
// Its own fields (code, status, issues…) are unknown until the test checks them.
export async function failure(p: Promise<unknown>, what = 'the call'): Promise<Error & Record<string, unknown>> {
  try {
    await p;
  } catch (err) {
    if (err instanceof Error) return err as Error & Record<string, unknown>; // an Error with the fields its class adds
    throw new Error(`${what} rejected with something that is not an Error: ${String(err)}`);
  }
  throw new Error(`expected ${what} to fail`);
}
