// The start and end tags of an XML document (a RESO server's `$metadata`, OData CSDL), scanned in
// linear time and in slices. Each character is looked at a bounded number of times whatever the
// document holds: the scan only moves forward; a start tag's end is searched once, quote-aware,
// and stops at a `<` (never allowed in a tag, quoted or not), where the scan goes on, so an unclosed
// `<Property` costs its own characters, not the rest of the document (the regex this replaced,
// `<(Property…)\b([^>]*)>`, ran to the document's end at every unclosed tag: 1.52 MB took 102 s of
// CPU, issue 49). Comments and CDATA sections are skipped whole; the XML declaration, DOCTYPE and
// processing instructions carry no tag we read. Only the tags named, and of them only the attributes
// asked for, are handed on; nothing is nested or kept, so depth and attribute count cost nothing more.
//
// The scan stops every SLICE characters and lets the event loop run (setImmediate) before it goes
// on: a worker parsing a `$metadata` of several MB still answers /healthz and renews its job locks.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { decodeXmlText, GT, lexed, LT, nextAttribute, SLASH, tagEnd } from '../xml/xml-scanner.js';

export interface CsdlTag {
  /** the local name (the namespace prefix dropped) */
  name: string;
  /** an end tag: `</Name>` */
  close: boolean;
  /** `<Name … />` */
  selfClosing: boolean;
  /** the attributes asked for that the tag has, decoded */
  attrs: Map<string, string>;
}

/** Characters scanned between two turns of the event loop (a few ms of CPU). */
export const SLICE = 256 * 1024;

const COLON = 58;

/** Calls `onTag` for each start and end tag of `names`, in document order; yields to the event loop every `slice` characters. */
export async function scanTags(
  xml: string,
  names: ReadonlySet<string>,
  attrNames: ReadonlySet<string>,
  onTag: (tag: CsdlTag) => void,
  slice = SLICE,
): Promise<void> {
  let pos = 0;
  let pauseAt = slice;
  for (;;) {
    const lt = xml.indexOf('<', pos);
    if (lt < 0) return;
    if (lt >= pauseAt) {
      await nextTurn();
      pauseAt = lt + slice;
    }
    const next = tagAt(xml, lt, names, attrNames, onTag);
    if (next < 0) return;
    pos = next;
  }
}

/** Reads the markup at `lt`; returns where the scan goes on, or -1 at the document's end. */
function tagAt(
  xml: string,
  lt: number,
  names: ReadonlySet<string>,
  attrNames: ReadonlySet<string>,
  onTag: (tag: CsdlTag) => void,
): number {
  if (xml.startsWith('<!--', lt)) return skipPast(xml, '-->', lt + 4);
  if (xml.startsWith('<![CDATA[', lt)) return skipPast(xml, ']]>', lt + 9);
  let i = lt + 1;
  const close = xml.charCodeAt(i) === SLASH;
  if (close) i++;
  const nameStart = i;
  let local = i;
  for (; i < xml.length; i++) {
    const c = xml.charCodeAt(i);
    if (c <= 32 || c === GT || c === SLASH || c === LT) break;
    if (c === COLON) local = i + 1;
  }
  if (i === nameStart || !names.has(xml.slice(local, i))) return Math.max(i, lt + 1);
  const end = tagEnd(xml, i);
  if (end < 0) return -1;
  // a tag broken off by a `<` is no tag: the scan goes on at that `<`
  if (xml.charCodeAt(end) === LT) return end;
  const selfClosing = !close && xml.charCodeAt(end - 1) === SLASH;
  onTag({
    name: xml.slice(local, i),
    close,
    selfClosing,
    attrs: close ? new Map() : attributes(xml, i, selfClosing ? end - 1 : end, attrNames),
  });
  return end + 1;
}

function skipPast(xml: string, terminator: string, from: number): number {
  const at = xml.indexOf(terminator, from);
  return at < 0 ? -1 : at + terminator.length;
}

/** The attributes of `wanted` in xml[from, to), a start tag's (its quotes balanced by the XML scanner's tagEnd, which stops at a `<`); stops at the first malformed one. */
function attributes(xml: string, from: number, to: number, wanted: ReadonlySet<string>): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = from; ;) {
    const next = nextAttribute(xml, i, to);
    if (typeof next === 'string') return out;
    const name = xml.slice(lexed.nameStart, lexed.nameEnd);
    if (wanted.has(name) && !out.has(name)) {
      const raw = xml.slice(lexed.valueStart, lexed.valueEnd);
      out.set(name, raw.indexOf('&') >= 0 ? decodeXmlText(raw) : raw);
    }
    i = next;
  }
}
