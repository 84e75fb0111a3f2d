// What a process (a worker, a command's runtime) opened, closed last first. Every closer runs
// whatever one before it did, so one that fails (a listener already gone, a Redis that no longer
// answers) leaves nothing else open; its failure goes to `failed`, with what it closed, for the
// caller to say or throw.

export interface Closer {
  /** what it closes, for a person: "the HTTP listener", "the state store" */
  what: string;
  close(): unknown;
}

/** Runs each closer, the last added first, and empties the list; each one that fails is handed to `failed`. */
export async function closeAll(closers: Closer[], failed: (what: string, err: unknown) => void): Promise<void> {
  for (const c of closers.splice(0).reverse()) {
    try {
      await c.close();
    } catch (err) {
      failed(c.what, err);
    }
  }
}
