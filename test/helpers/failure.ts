// The error a promise rejects with, for tests that look into it; a promise that resolves fails the test.
// `any`: tests read the fields of whichever error class the code under test throws.
export async function failure(p: Promise<unknown>, what = 'the call'): Promise<any> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error(`expected ${what} to fail`);
}
