import { describe, expect, it } from 'vitest';
import { createStreamParser, StreamSyntaxError } from '../../src/api/stream-parser.js';

const objects = [
  { content: 'Hé, {"braces"} ' },
  { content: 'and \\ "quotes" \n newlines, 🏠 emoji, 日本 ' },
  { content: '' },
  { QuestionID: 7, AnswerID: 8, Answer: 'Hé... 🏠', TotalToken: 42 },
];

const framings: Record<string, string> = {
  sse: objects.map((o) => `data: ${JSON.stringify(o)}\n\n`).join(''),
  'sse with comments, event/id lines, CRLF and [DONE]':
    ': keep-alive\r\n\r\n' +
    objects.map((o, i) => `event: message\r\nid: ${i}\r\ndata:${JSON.stringify(o)}\r\n\r\n`).join('') +
    'data: [DONE]\r\n\r\n',
  lines: objects.map((o) => JSON.stringify(o) + '\n').join(''),
  concat: objects.map((o) => JSON.stringify(o)).join(''),
  'pretty-printed objects back to back': objects.map((o) => JSON.stringify(o, null, 2)).join('\n'),
};

function feedBytes(bytes: Uint8Array, step: number): unknown[] {
  const parser = createStreamParser();
  const out: unknown[] = [];
  for (let i = 0; i < bytes.length; i += step) out.push(...parser.push(bytes.subarray(i, i + step)));
  out.push(...parser.end());
  return out;
}

describe('stream parser', () => {
  for (const [name, text] of Object.entries(framings)) {
    it(`reads ${name} fed one byte at a time`, () => {
      const bytes = new TextEncoder().encode(text);
      expect(feedBytes(bytes, 1)).toEqual(objects);
    });
    it(`reads ${name} in one chunk and in chunks of 7 bytes`, () => {
      const bytes = new TextEncoder().encode(text);
      expect(feedBytes(bytes, bytes.length)).toEqual(objects);
      expect(feedBytes(bytes, 7)).toEqual(objects);
    });
  }

  it('hands back each object as soon as its last byte arrives', () => {
    const parser = createStreamParser();
    const enc = new TextEncoder();
    expect(parser.push(enc.encode('{"content":"a"}{"cont'))).toEqual([{ content: 'a' }]);
    expect(parser.push(enc.encode('ent":"b"}'))).toEqual([{ content: 'b' }]);
    expect(parser.end()).toEqual([]);
  });

  it('joins multi-line SSE data and reads several objects in one event', () => {
    const text = 'data: {"content":\ndata: "x"}\n\ndata: {"content":"y"}\ndata: {"content":"z"}\n\n';
    expect(feedBytes(new TextEncoder().encode(text), 1)).toEqual([
      { content: 'x' },
      { content: 'y' },
      { content: 'z' },
    ]);
  });

  it('reads the last SSE event even without a final blank line', () => {
    expect(feedBytes(new TextEncoder().encode('data: {"content":"x"}'), 3)).toEqual([{ content: 'x' }]);
  });

  it.each([
    ['text between objects', '{"content":"a"} oops {"content":"b"}'],
    ['a truncated object', '{"content":"a"}{"content":"b'],
    ['a line that is not an event-stream field', 'data: {"content":"a"}\n\nhello world\n\n'],
    ['SSE data that is not JSON', 'data: not json\n\n'],
    ['an object that is not valid JSON', '{"content": nope}'],
  ])('rejects %s', (_name, text) => {
    expect(() => feedBytes(new TextEncoder().encode(text), 1)).toThrow(StreamSyntaxError);
  });
});
