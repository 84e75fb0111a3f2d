// The one status line a terminal shows at the bottom of stderr (the sync's progress). Anything else
// written to stderr while it shows (log lines) goes through `above`: the line is cleared, the text
// written, and the line drawn again, so a log line is never glued to the progress text.
export interface StatusLine {
  /** Show `text` in place of the current status line. */
  show(text: string): void;
  /** Write `text` (whole lines) above the status line. */
  above(text: string): void;
  /** Remove the status line. */
  clear(): void;
}

export function createStatusLine(stream: NodeJS.WritableStream & { isTTY?: boolean } = process.stderr): StatusLine {
  let current = '';
  const erase = () => {
    if (current) stream.write('\r\x1b[K');
  };
  return {
    show(text) {
      erase();
      current = text;
      stream.write(text);
    },
    above(text) {
      erase();
      stream.write(text.endsWith('\n') ? text : `${text}\n`);
      if (current) stream.write(current);
    },
    clear() {
      erase();
      current = '';
    },
  };
}

/** stderr's status line, shared by the progress display and the log. */
export const stderrLine: StatusLine = createStatusLine(process.stderr);
